import type { Config } from '../../config.ts';
import type { AdapterRegistry, PaymentAdapter } from './pipeline/adapter.ts';
import { PAYMENT_PROVIDERS } from './providers/index.ts';
import type { Network } from './providers/module.ts';
import { createSandboxAdapter } from './simulator.ts';

export type { Network };

/** How a network is named to a customer (USSD screens). */
export const NETWORK_NAMES: Record<Network, string> = {
  MPESA: 'M-Pesa',
  AIRTEL_MONEY: 'Airtel Money',
  MTN_MOMO: 'MTN MoMo',
};

export type RegistryOptions = {
  config: Pick<Config, 'APP_ENV' | 'SANDBOX_SETTLE_MS'> &
    Partial<Pick<Config, (typeof PAYMENT_PROVIDERS)[number]['key']>>;
  /** For tests of the adapters only; default the global fetch. */
  fetch?: typeof fetch;
};

/**
 * Which adapter serves a network (the network of a number: mobile-network.ts). Sandbox: the sandbox
 * simulator for every network. Production: each configured provider (providers/index.ts) for its
 * network and country; nothing otherwise, so those customers are told payments are not available
 * rather than shown a prompt that will never come.
 */
export function createAdapterRegistry(options: RegistryOptions): AdapterRegistry {
  const { config } = options;
  if (config.APP_ENV === 'sandbox') {
    const sandbox = createSandboxAdapter({ settleMs: config.SANDBOX_SETTLE_MS });
    return () => sandbox;
  }
  const adapters: Partial<Record<Network, PaymentAdapter>> = {};
  for (const provider of PAYMENT_PROVIDERS) {
    const settings = config[provider.key];
    if (settings)
      adapters[provider.network] = provider.createAdapter(settings as never, { fetch: options.fetch });
  }
  return (network, country) => {
    const adapter = adapters[network];
    // A provider is configured for one country: the same network elsewhere is not served by it.
    if (adapter && (!adapter.country || !country || adapter.country === country)) return adapter;
    return undefined;
  };
}
