import type { Config } from '../../../config.ts';
import { createSandboxAdapter } from '../simulator.ts';
import type { AdapterRegistry, PaymentAdapter } from './adapter.ts';

/**
 * Which adapter serves which network (services/payments/mobile-network.ts names the network):
 * sandbox, the simulator for every network; production, none until a provider is configured (the
 * M-Pesa adapter serves MPESA when its variables are set). `extra` adds or overrides per network.
 */
export function registryFromConfig(
  config: Pick<Config, 'APP_ENV' | 'SANDBOX_SETTLE_MS'>,
  extra: Partial<Record<Parameters<AdapterRegistry>[0], PaymentAdapter>> = {},
): AdapterRegistry {
  const sandbox =
    config.APP_ENV === 'sandbox' ? createSandboxAdapter({ settleMs: config.SANDBOX_SETTLE_MS }) : undefined;
  return (network, country) => {
    const adapter = extra[network];
    // A provider is configured for one country: the same network elsewhere is not served by it.
    if (adapter && (!adapter.country || !country || adapter.country === country)) return adapter;
    return sandbox;
  };
}
