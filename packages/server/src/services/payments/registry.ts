import type { Config } from '../../config.ts';
import type { AdapterRegistry, PaymentAdapter } from './pipeline/adapter.ts';
import { registryFromConfig } from './pipeline/registry.ts';
import { createAirtelPaymentAdapter } from './providers/airtel/pipeline-adapter.ts';
import { createMpesaAdapter } from './providers/mpesa/adapter.ts';
import { createDarajaPaymentAdapter } from './providers/mpesa/pipeline-adapter.ts';
import { createMtnPaymentAdapter } from './providers/mtn/pipeline-adapter.ts';

export type Network = Parameters<AdapterRegistry>[0];

/** How a network is named to a customer (USSD screens). */
export const NETWORK_NAMES: Record<Network, string> = {
  MPESA: 'M-Pesa',
  AIRTEL_MONEY: 'Airtel Money',
  MTN_MOMO: 'MTN MoMo',
};

export type RegistryOptions = {
  config: Pick<Config, 'APP_ENV' | 'SANDBOX_SETTLE_MS' | 'mpesa' | 'mtn' | 'airtel'>;
  /** For tests of the Daraja adapter only; default the global fetch. */
  fetch?: typeof fetch;
};

/**
 * Which adapter serves a network (the network of a number: mobile-network.ts), built on the
 * pipeline's `registryFromConfig`. Sandbox: the pipeline's sandbox simulator for every network.
 * Production: Daraja for M-Pesa when it is configured; nothing otherwise (MTN and Airtel come in
 * part 2), so those customers are told payments are not available rather than shown a prompt that
 * will never come.
 */
export function createAdapterRegistry(options: RegistryOptions): AdapterRegistry {
  const { config } = options;
  if (config.APP_ENV === 'sandbox') return registryFromConfig(config);
  const providers: Partial<Record<Network, PaymentAdapter>> = {};
  if (config.mpesa)
    providers.MPESA = createDarajaPaymentAdapter(createMpesaAdapter(config.mpesa, { fetch: options.fetch }), {
      reconcileAfterMs: config.mpesa.reconcileAfterMs,
    });
  if (config.mtn) providers.MTN_MOMO = createMtnPaymentAdapter(config.mtn, { fetch: options.fetch });
  if (config.airtel)
    providers.AIRTEL_MONEY = createAirtelPaymentAdapter(config.airtel, { fetch: options.fetch });
  return registryFromConfig(config, providers);
}
