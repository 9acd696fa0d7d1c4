import type { FastifyInstance } from 'fastify';
import type { ConsoleKit } from '../kit.ts';
import { layout } from '../pages.ts';

/** The Audit log page (docs/console.md). */
export function registerAuditPage(app: FastifyInstance, kit: ConsoleKit): void {
  app.get('/console/audit', { config: kit.config }, async (request, reply) => {
    const found = await kit.session(request, reply);
    if (!found) return reply;
    return kit.html(
      reply,
      200,
      layout('Audit log', '<h1>Audit log</h1><p>Not built yet.</p>', kit.who(found), '/console/audit'),
    );
  });
}
