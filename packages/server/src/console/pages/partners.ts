import type { FastifyInstance } from 'fastify';
import type { ConsoleKit } from '../kit.ts';
import { layout } from '../pages.ts';

/** The Partners page (docs/console.md). */
export function registerPartnersPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/partners', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    return kit.html(
      reply,
      200,
      layout('Partners', '<h1>Partners</h1><p>Not built yet.</p>', kit.who(found), '/console/partners'),
    );
  });
}
