import { randomBytes } from 'node:crypto';
import type { SmsGateway } from './gateway/client.ts';

/**
 * The sandbox's SMS gateway (APP_ENV=sandbox without Africa's Talking configured; server.ts): it
 * takes every SMS at once, as Africa's Talking answers a send (statusCode 101), and sends nothing
 * anywhere. The SMS stays in sms_messages as SENT, and the sandbox handset lists those of its
 * number: that is the phone's inbox (docs/sms.md, "Sandbox").
 */
export const sandboxInbox: SmsGateway = {
  name: 'sandbox-inbox',
  send: async () => ({
    kind: 'accepted',
    messageId: `SBXid_${randomBytes(12).toString('hex')}`,
    statusCode: 101,
    status: 'Success',
    cost: 'KES 0.0000',
  }),
};
