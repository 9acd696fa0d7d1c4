import { paymentProvider } from '../module.ts';
import { createAirtelPaymentAdapter } from './adapter.ts';
import { airtelCallbackRoutes } from './routes.ts';
import { AIRTEL_ENV_SHAPE, AIRTEL_REQUIRED, airtelSettingsFrom } from './settings.ts';

/** Airtel Money through the Airtel Africa Open API (docs/payments-airtel.md). */
export const airtelProvider = paymentProvider({
  key: 'airtel',
  label: 'Airtel',
  network: 'AIRTEL_MONEY',
  env: AIRTEL_ENV_SHAPE,
  required: AIRTEL_REQUIRED,
  settingsFrom: airtelSettingsFrom,
  createAdapter: (settings, options = {}) => createAirtelPaymentAdapter(settings, options),
  callbackRoutes: airtelCallbackRoutes,
});
