import type { FastifyInstance } from 'fastify';
import type { ConsoleKit } from '../kit.ts';
import { layout } from '../pages.ts';

/** The Market page (docs/console.md). */
export function registerMarketPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/market', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    return kit.html(
      reply,
      200,
      layout('Market', '<h1>Market</h1><p>Not built yet.</p>', kit.who(found), '/console/market'),
    );
  });
}
