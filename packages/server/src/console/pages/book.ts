import type { FastifyInstance } from 'fastify';
import type { ConsoleKit } from '../kit.ts';
import { layout } from '../pages.ts';

/** The Book page (docs/console.md). */
export function registerBookPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/book', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    return kit.html(
      reply,
      200,
      layout('Book', '<h1>Book</h1><p>Not built yet.</p>', kit.who(found), '/console/book'),
    );
  });
}
