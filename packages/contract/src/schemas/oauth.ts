import { z } from 'zod';

export const CLIENT_ID_PATTERN = /^org_[a-f0-9]{32}$/;
export const CLIENT_SECRET_PATTERN = /^[a-f0-9]{32}_[a-f0-9]{32}$/;

export const tokenRequestSchema = z.strictObject({
  clientId: z
    .string({ error: 'Invalid client ID format' })
    .regex(CLIENT_ID_PATTERN, 'Invalid client ID format'),
  clientSecret: z
    .string({ error: 'Invalid client secret format' })
    .regex(CLIENT_SECRET_PATTERN, 'Invalid client secret format'),
});
export type TokenRequest = z.infer<typeof tokenRequestSchema>;

export const SCOPES = ['READ', 'WRITE'] as const;
export const TOKEN_TTL_SECONDS = 3600;
export const TOKEN_MAX_TTL_SECONDS = 86_400;

export const tokenResponseSchema = z.object({
  message: z.literal('Authentication successful'),
  tokenId: z.string(),
  token: z.string(),
  expiresIn: z.number().int(),
  maxTTL: z.number().int(),
  tokenType: z.literal('Bearer'),
  scope: z.array(z.enum(SCOPES)),
  trustedIps: z.array(z.string()),
  organization: z.object({ id: z.string(), name: z.string(), clientId: z.string() }),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

export const credentialSchema = z.object({
  id: z.string(),
  name: z.string(),
  clientId: z.string().regex(CLIENT_ID_PATTERN),
  expiresAt: z.string().datetime().nullable(),
  lastUsedAt: z.string().datetime().nullable(),
  createdAt: z.string().datetime(),
});

export const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  website: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  address: z.string().nullable(),
  isActive: z.boolean(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  credentials: z.array(credentialSchema),
});
export type Organization = z.infer<typeof organizationSchema>;

export const meResponseSchema = z.object({ data: organizationSchema });
export const revokeResponseSchema = z.object({ message: z.literal('Token revoked successfully') });
