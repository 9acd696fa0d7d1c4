import type { FastifyInstance, FastifySchema } from 'fastify';
import type { z } from 'zod';
import { detailsFromZod, validationFailed } from '../lib/errors.ts';

/**
 * zod schemas are the route schemas: one source for validation, types and the OpenAPI document.
 * A failure becomes the spec's validation shape, one entry per invalid field.
 */
export function installValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const zodSchema = schema as unknown as z.ZodType;
    return (data: unknown) => {
      // Fastify hands an unparsed body over as null; the spec's message says "received undefined".
      const input = httpPart === 'body' && data === null ? undefined : data;
      const result = zodSchema.safeParse(input);
      if (!result.success) {
        // One entry per invalid field: text no store can keep is reported with the shape errors,
        // for the fields that have none (and are not inside a field that has one).
        const details = detailsFromZod(result.error);
        const named = (field: string) =>
          details.some((d) => d.field === '' || field === d.field || field.startsWith(`${d.field}.`));
        const more = unstorableText(input).filter((entry) => !named(entry.field));
        return { error: validationFailed([...details, ...more]) };
      }
      // Text no store can keep as given: the caller's error here, not a 500 or an altered value later.
      const unstorable = unstorableText(result.data);
      if (unstorable.length > 0) return { error: validationFailed(unstorable) };
      return { value: result.data };
    };
  });
  // Responses are serialised with JSON.stringify; the zod response schemas document them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}

export type ZodRouteSchema = FastifySchema & {
  body?: z.ZodType;
  querystring?: z.ZodType;
  params?: z.ZodType;
};

/** A lone surrogate (`"\ud800"` in JSON): not Unicode text; PostgreSQL refuses it, PGlite alters it. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Strings no store can keep as given, one entry per field: NUL (PostgreSQL text cannot hold it) and
 * unpaired surrogates (not valid Unicode: a 500 on PostgreSQL, silently replaced on PGlite).
 */
function unstorableText(value: unknown, path: string[] = []): Array<{ field: string; message: string }> {
  if (typeof value === 'string') {
    if (value.includes('\u0000'))
      return [{ field: path.join('.'), message: 'must not contain NUL characters' }];
    if (LONE_SURROGATE.test(value))
      return [
        { field: path.join('.'), message: 'must be valid Unicode text (an unpaired surrogate was sent)' },
      ];
    return [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => unstorableText(item, [...path, String(i)]));
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.entries(value).flatMap(([key, item]) => unstorableText(item, [...path, key]));
  }
  return [];
}
