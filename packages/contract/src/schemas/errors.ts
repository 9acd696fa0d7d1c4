import { z } from 'zod';
import { ErrorLabel } from '../errors.ts';

/** One invalid field; an empty `field` means the body as a whole (spec, Errors). */
export const validationDetailSchema = z.object({ field: z.string(), message: z.string() });

/** Shape 1: `{ error: 'Validation failed', details: [...] }`, one entry per invalid field. */
export const validationErrorBodySchema = z.object({
  error: z.literal(ErrorLabel.validation),
  details: z.array(validationDetailSchema),
});

/** Shape 2: a label and a message. */
export const errorWithMessageBodySchema = z.object({ error: z.string(), message: z.string() });

/** Shape 3: the label alone (unmatched routes, every 5xx). */
export const errorLabelBodySchema = z.object({ error: z.string() });
