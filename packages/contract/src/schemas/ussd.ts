import { z } from 'zod';
import { CUID_PATTERN } from '../ids.ts';

/** Spec "POST /ussd/session" body: the customer of the caller's organization. */
export const ussdSessionRequestSchema = z.strictObject({
  customerId: z
    .string({ error: 'Invalid customer ID format' })
    .regex(CUID_PATTERN, 'Invalid customer ID format'),
});
export type UssdSessionRequest = z.infer<typeof ussdSessionRequestSchema>;

/** A menu choice: a numeric key or a free-text search term (spec Limits: 1 to 10 alphanumeric). */
export const USSD_CHOICE_PATTERN = /^[A-Za-z0-9]+$/;

export const UssdValidationMessage = {
  sessionId: 'Invalid session ID format',
  choiceRequired: 'Choice is required',
  choiceType: 'Choice must be a string',
  choiceLength: 'Choice must be 1 to 10 characters',
  choiceAlphanumeric: 'Choice must be alphanumeric',
} as const;

/**
 * Spec "POST /ussd/process" body. Any session id string up to 100 characters is looked up (an unknown
 * one is a 404 SESSION_NOT_FOUND, not a validation error), so partners see one answer for "no such session".
 */
export const ussdProcessRequestSchema = z.strictObject({
  sessionId: z
    .string({ error: UssdValidationMessage.sessionId })
    .min(1, UssdValidationMessage.sessionId)
    .max(100, UssdValidationMessage.sessionId),
  choice: z
    .string({
      error: (issue) =>
        issue.input === undefined ? UssdValidationMessage.choiceRequired : UssdValidationMessage.choiceType,
    })
    .min(1, UssdValidationMessage.choiceLength)
    .max(10, UssdValidationMessage.choiceLength)
    .regex(USSD_CHOICE_PATTERN, UssdValidationMessage.choiceAlphanumeric),
});
export type UssdProcessRequest = z.infer<typeof ussdProcessRequestSchema>;

/** Spec "Option object": nextState and action are mutually exclusive; Next carries neither. */
export const ussdOptionSchema = z.object({
  key: z.string(),
  label: z.string(),
  nextState: z.string().optional(),
  action: z.string().optional(),
  data: z.object({ stockId: z.string(), symbol: z.string(), name: z.string() }).optional(),
});

/** Spec "Menu object". */
export const ussdMenuSchema = z.object({
  state: z.string(),
  text: z.string(),
  options: z.array(ussdOptionSchema),
  isEndState: z.boolean(),
});

/** Spec "USSD session data": `data` of both USSD endpoints. */
export const ussdSessionDataSchema = z.object({
  sessionId: z.string().regex(/^ussd_[a-f0-9]+$/),
  currentState: z.string(),
  menu: ussdMenuSchema,
  /** The menu text, a blank line, then one `<key>. <label>` line per option; at most 182 characters. */
  ussdText: z.string().max(182),
  expiresAt: z.string().datetime(),
});
export type UssdSessionData = z.infer<typeof ussdSessionDataSchema>;

/** Success messages; the error state is detected on `data.currentState === 'ERROR'`, not on the status. */
export const UssdMessage = {
  sessionCreated: 'Success',
  sessionCreatedWithError: 'USSD session created with error state',
  processed: 'USSD request processed successfully',
  processedWithError: 'USSD request processed with error state',
} as const;

export const ussdResponseSchema = z.object({
  message: z.enum([
    UssdMessage.sessionCreated,
    UssdMessage.sessionCreatedWithError,
    UssdMessage.processed,
    UssdMessage.processedWithError,
  ]),
  data: ussdSessionDataSchema,
});
export type UssdResponse = z.infer<typeof ussdResponseSchema>;
