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
      if (result.success) return { value: result.data };
      return { error: validationFailed(detailsFromZod(result.error)) };
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
