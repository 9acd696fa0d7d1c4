import type { FastifyInstance } from 'fastify';
import type { ZodRouteSchema } from '../plugins/validation.ts';

/** A registered route with the zod schemas it validates with. */
export type CatalogRoute = { method: string; url: string; schema: ZodRouteSchema | undefined };

/**
 * Records every route as it is registered (add it before the routes). The OpenAPI document takes its
 * request bodies, query and path parameters from these schemas: the ones that really validate.
 */
export function collectRoutes(app: FastifyInstance): CatalogRoute[] {
  const routes: CatalogRoute[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      // Fastify's automatic HEAD twin of a GET route answers like the GET without a body.
      if (method === 'HEAD') continue;
      routes.push({ method, url: route.url, schema: route.schema as ZodRouteSchema | undefined });
    }
  });
  return routes;
}
