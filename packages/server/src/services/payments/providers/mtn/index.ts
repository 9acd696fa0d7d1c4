import { paymentProvider } from '../module.ts';
import { createMtnPaymentAdapter } from './adapter.ts';
import { mtnCallbackRoutes } from './routes.ts';
import { MTN_ENV_SHAPE, MTN_REQUIRED, mtnSettingsFrom } from './settings.ts';

/** MTN MoMo through its Open API (docs/payments-mtn.md). */
export const mtnProvider = paymentProvider({
  key: 'mtn',
  label: 'MTN',
  network: 'MTN_MOMO',
  env: MTN_ENV_SHAPE,
  required: MTN_REQUIRED,
  settingsFrom: mtnSettingsFrom,
  createAdapter: (settings, options = {}) => createMtnPaymentAdapter(settings, options),
  callbackRoutes: mtnCallbackRoutes,
});
