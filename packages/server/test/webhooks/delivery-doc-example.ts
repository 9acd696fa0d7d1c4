import {
  buildSignatureBase,
  signWebhookDelivery,
  WEBHOOK_SIGNATURE_VALIDITY_SECONDS,
  WEBHOOK_SIGNED_COMPONENTS,
} from '@partner-api/contract';
import { envelopeOf } from '../../src/services/webhooks/delivery.ts';
import { EXAMPLE_KEY } from '../openapi/signing-example.ts';

/**
 * The worked example of docs/webhooks.md ("Signature"): the RFC 9421 Ed25519 test key (Appendix
 * B.1.4, public test data) as the service's webhook key, a fixed event and a fixed attempt time.
 */
export const WEBHOOK_EXAMPLE = {
  keyId: 'service-staging-ed25519-2',
  url: 'https://hooks.example.com/partner-api',
  eventId: '0b6f3c1e-6a52-4c8e-9f3d-2a7b5c9e1d40',
  event: 'CUSTOMER.CREATED',
  eventCreatedAt: new Date(1_767_225_600_000),
  data: { id: 'cm4x7k2p90000abcd1234efgh', firstName: 'Amina', lastName: 'Otieno', msisdn: '254712000001' },
  attemptAt: 1_767_225_601,
};

export function webhookExample() {
  const body = envelopeOf(WEBHOOK_EXAMPLE);
  const headers = signWebhookDelivery({
    url: WEBHOOK_EXAMPLE.url,
    body,
    eventId: WEBHOOK_EXAMPLE.eventId,
    keyId: WEBHOOK_EXAMPLE.keyId,
    privateKey: EXAMPLE_KEY.privateKeyPem,
    now: WEBHOOK_EXAMPLE.attemptAt,
  });
  const { base } = buildSignatureBase(
    { method: 'POST', targetUri: WEBHOOK_EXAMPLE.url, headers },
    WEBHOOK_SIGNED_COMPONENTS,
    {
      created: WEBHOOK_EXAMPLE.attemptAt,
      expires: WEBHOOK_EXAMPLE.attemptAt + WEBHOOK_SIGNATURE_VALIDITY_SECONDS,
      keyid: WEBHOOK_EXAMPLE.keyId,
    },
  );
  return { body, headers, base };
}
