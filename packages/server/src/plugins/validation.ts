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
      if (!result.success) return { error: validationFailed(detailsFromZod(result.error)) };
      // PostgreSQL text cannot hold NUL: refuse it here as the caller's error, not as a 500 later.
      const nul = fieldsWithNul(result.data);
      if (nul.length > 0)
        return {
          error: validationFailed(
            nul.map((field) => ({ field, message: 'must not contain NUL characters' })),
          ),
        };
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

function fieldsWithNul(value: unknown, path: string[] = []): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path.join('.')] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => fieldsWithNul(item, [...path, String(i)]));
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.entries(value).flatMap(([key, item]) => fieldsWithNul(item, [...path, key]));
  }
  return [];
}
