import type { ProviderModule } from '../../payments/providers/module.ts';
import { createAtSmsGateway, type SmsGateway } from './client.ts';
import { AT_SMS_ENV_SHAPE, AT_SMS_REQUIRED, type AtSmsSettings, atSmsSettingsFrom } from './settings.ts';

export type SmsGatewayModule = ProviderModule<'sms', typeof AT_SMS_ENV_SHAPE, AtSmsSettings> & {
  createGateway(settings: AtSmsSettings, options?: { fetch?: typeof fetch }): SmsGateway;
};

/**
 * Investor SMS through Africa's Talking's SMS API (docs/sms.md): `POST /version1/messaging`, its
 * delivery reports on our route `/v1/sms/callbacks/africastalking/<token>` (sms/routes.ts).
 */
export const smsGatewayProvider: SmsGatewayModule = {
  key: 'sms',
  label: "Africa's Talking SMS",
  env: AT_SMS_ENV_SHAPE,
  required: AT_SMS_REQUIRED,
  settingsFrom: atSmsSettingsFrom,
  createGateway: createAtSmsGateway,
};
