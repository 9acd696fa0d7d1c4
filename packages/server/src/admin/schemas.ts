import { z } from 'zod';
import { LANGUAGES } from '../i18n/index.ts';
import { isIpOrCidr } from '../lib/ip-allowlist.ts';

const optionalText = (max: number) => z.string().trim().min(1).max(max).nullable().optional();

export const organizationCreateBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  description: optionalText(1000),
  website: optionalText(500),
  email: optionalText(320),
  phone: optionalText(40),
  address: optionalText(500),
  /** The default language of the organization's customers (docs/languages.md). */
  language: z.enum(LANGUAGES).optional(),
});

export const organizationPatchBody = organizationCreateBody
  .partial()
  .extend({ isActive: z.boolean().optional(), smsEnabled: z.boolean().optional() });

const trustedIps = z.array(z.string().refine(isIpOrCidr, 'must be an IP address or CIDR range')).max(100);

/**
 * PostgreSQL's timestamptz cannot hold every JavaScript date (years past 294276, before 4713 BC, and
 * drizzle's six-digit `+275760-…` ISO years): such a date was a 500. An expiry is refused as the
 * operator's input error outside 1970 to 9999.
 */
const expiresAt = z.coerce
  .date()
  .min(new Date('1970-01-01T00:00:00.000Z'), 'must be a date between 1970 and 9999')
  .max(new Date('9999-12-31T23:59:59.999Z'), 'must be a date between 1970 and 9999')
  .nullable()
  .optional();

const publicKey = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);
const keyId = z.string().trim().min(1).max(200);

export const credentialCreateBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    publicKey: publicKey.optional(),
    keyId: keyId.optional(),
    trustedIps: trustedIps.optional(),
    expiresAt,
  })
  .refine((v) => (v.publicKey === undefined) === (v.keyId === undefined), {
    message: 'publicKey and keyId go together',
    path: ['keyId'],
  });

export const signingKeyBody = z.strictObject({ publicKey, keyId });

export const credentialPatchBody = z.strictObject({
  trustedIps: trustedIps.optional(),
  isActive: z.boolean().optional(),
  expiresAt,
});

export const idParams = z.strictObject({ id: z.string().min(1).max(64) });
export const organizationFilter = z.strictObject({ organizationId: z.string().min(1).max(64).optional() });
