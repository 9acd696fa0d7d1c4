import type { FastifyInstance } from 'fastify';
import { API_PREFIX } from '../../server/src/openapi/build-document.ts';
import { openApiDocumentOf } from '../../server/src/routes/docs.ts';

/** An authenticated operation of the app, named "METHOD /v1/path/{param}" as its OpenAPI document names it. */
export type AuthenticatedRoute = { name: string; idempotent: boolean };

/**
 * Every authenticated operation of a built app, from the OpenAPI document the app serves: that
 * document is built from the route catalogue (openapi/route-catalog.ts), and its build fails on a
 * /v1 route that is neither documented nor listed as undocumented. An operation is authenticated
 * unless it overrides the document's bearer security with `security: []`; it is idempotent when it
 * takes the X-Idempotency-Key header.
 */
export function authenticatedRoutes(app: FastifyInstance): AuthenticatedRoute[] {
  const document = openApiDocumentOf(app);
  if (!document) throw new Error('the app serves no OpenAPI document');
  const routes: AuthenticatedRoute[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const op = operation as { security?: unknown[]; parameters?: { $ref?: string }[] };
      if (op.security?.length === 0) continue;
      routes.push({
        name: `${method.toUpperCase()} ${API_PREFIX}${path}`,
        idempotent: (op.parameters ?? []).some((p) => p.$ref?.endsWith('/IdempotencyKey') ?? false),
      });
    }
  }
  return routes;
}

/** Every route an app registers ("METHOD /path/:param"), read from Fastify's own route tree. */
export function listRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) {
      if (method !== 'HEAD' && method !== 'OPTIONS') routes.push(`${method} ${stack.join('')}`);
    }
  }
  return routes;
}

/** A concrete URL of a route pattern: every path parameter (`:id` or `{id}`) replaced by `id`. */
export const urlOf = (pattern: string, id: string) =>
  pattern.replace(/:[A-Za-z0-9_]+|\{[A-Za-z0-9_]+\}/g, id);
