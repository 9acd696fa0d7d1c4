import type { FastifyInstance } from 'fastify';
import type { ConsoleKit } from '../kit.ts';
import { layout } from '../pages.ts';

/** The Payments page (docs/console.md). */
export function registerPaymentsPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/payments', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    return kit.html(
      reply,
      200,
      layout('Payments', '<h1>Payments</h1><p>Not built yet.</p>', kit.who(found), '/console/payments'),
    );
  });
}
