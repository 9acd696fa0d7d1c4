import { paymentProvider } from '../module.ts';
import { createDarajaPaymentAdapter } from './adapter.ts';
import { createMpesaAdapter } from './client.ts';
import { darajaCallbackRoutes } from './routes.ts';
import { MPESA_ENV_SHAPE, MPESA_REQUIRED, mpesaSettingsFrom } from './settings.ts';

/** M-Pesa through Safaricom's Daraja API (docs/payments.md). */
export const mpesaProvider = paymentProvider({
  key: 'mpesa',
  label: 'M-Pesa',
  network: 'MPESA',
  env: MPESA_ENV_SHAPE,
  required: MPESA_REQUIRED,
  settingsFrom: mpesaSettingsFrom,
  createAdapter: (settings, options = {}) =>
    createDarajaPaymentAdapter(createMpesaAdapter(settings, options), {
      reconcileAfterMs: settings.reconcileAfterMs,
    }),
  callbackRoutes: darajaCallbackRoutes,
});
