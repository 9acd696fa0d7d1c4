import type { FastifyInstance } from 'fastify';
import type { ConsoleKit } from '../kit.ts';
import { layout } from '../pages.ts';

/** The Investor messages page (docs/console.md). */
export function registerMessagesPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/messages', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    return kit.html(
      reply,
      200,
      layout(
        'Investor messages',
        '<h1>Investor messages</h1><p>Not built yet.</p>',
        kit.who(found),
        '/console/messages',
      ),
    );
  });
}
