import type { Config } from '../../config.ts';
import type { AdapterRegistry, PaymentAdapter } from './pipeline/adapter.ts';
import { createMpesaAdapter } from './providers/mpesa/adapter.ts';
import { createDarajaPaymentAdapter } from './providers/mpesa/pipeline-adapter.ts';

export type Network = Parameters<AdapterRegistry>[0];

/** How a network is named to a customer (USSD screens). */
export const NETWORK_NAMES: Record<Network, string> = {
  MPESA: 'M-Pesa',
  AIRTEL_MONEY: 'Airtel Money',
  MTN_MOMO: 'MTN MoMo',
};

/**
 * SEAM (issue 15): the sandbox simulator as a PaymentAdapter is the pipeline's
 * (services/payments/pipeline/). Until it is merged, sandbox payments are still settled by the
 * in-process simulator (ctx.payments, routes/payment-callback.ts), and this stand-in only tells
 * the registry's readers (the USSD confirm screens) that the sandbox serves every network. Its
 * send and query must never be reached: when merging, pass the pipeline's sandbox adapter as
 * `sandbox` in runtime.ts and delete this.
 */
export const LEGACY_SANDBOX_SIMULATOR: PaymentAdapter = {
  name: 'sandbox',
  reconcileAfterMs: 0,
  send: () => Promise.reject(new Error('the legacy sandbox simulator is not a pipeline adapter')),
  query: () => Promise.reject(new Error('the legacy sandbox simulator is not a pipeline adapter')),
};

export type RegistryOptions = {
  config: Pick<Config, 'APP_ENV' | 'mpesa'>;
  /** The sandbox simulator's adapter (the pipeline's); serves every network in sandbox. */
  sandbox?: PaymentAdapter;
  /** For tests of the Daraja adapter only; default the global fetch. */
  fetch?: typeof fetch;
};

/**
 * Which adapter serves a network (the network of a number: mobile-network.ts). Sandbox: the
 * simulator for every network. Production: Daraja for M-Pesa when it is configured; nothing
 * otherwise (MTN and Airtel come in part 2), so those customers are told payments are not
 * available rather than shown a prompt that will never come.
 */
export function createAdapterRegistry(options: RegistryOptions): AdapterRegistry {
  const { config } = options;
  if (config.APP_ENV === 'sandbox') {
    const sandbox = options.sandbox;
    return () => sandbox;
  }
  const mpesa = config.mpesa
    ? createDarajaPaymentAdapter(createMpesaAdapter(config.mpesa, { fetch: options.fetch }), {
        reconcileAfterMs: config.mpesa.reconcileAfterMs,
      })
    : undefined;
  return (network) => (network === 'MPESA' ? mpesa : undefined);
}
