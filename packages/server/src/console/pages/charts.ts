import type { FastifyInstance } from 'fastify';
import type { ConsoleKit } from '../kit.ts';
import { layout } from '../pages.ts';

/** The Charts page (docs/console.md). */
export function registerChartsPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/charts', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    return kit.html(
      reply,
      200,
      layout('Charts', '<h1>Charts</h1><p>Not built yet.</p>', kit.who(found), '/console/charts'),
    );
  });
}
