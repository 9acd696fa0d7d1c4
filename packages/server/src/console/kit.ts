import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/client.ts';
import type { ConsoleSession } from '../services/operators/sessions.ts';

/** The signed-in operator as a page shows them; `csrfToken` goes into every form's hidden `csrf`. */
export type Who = { name: string; role: string; csrfToken: string };

/**
 * What every console page gets from routes.ts (docs/console.md, "Adding a page"). A page's GET
 * calls `session`; a page's change calls `change`, does its work in one transaction, and calls
 * `audit` inside it with what it found and left, so the audit row commits with the change.
 */
export type ConsoleKit = {
  ctx: AppContext;
  /** Route options every console route carries (the strict headers, session instead of token). */
  config: { console: true };
  /** The session, or undefined once the browser has been sent to sign in. */
  session(request: FastifyRequest, reply: FastifyReply): Promise<ConsoleSession | undefined>;
  /** A POST's session with its CSRF token checked (the 403 page otherwise); the form is in `request.body`. */
  posted(request: FastifyRequest, reply: FastifyReply): Promise<ConsoleSession | undefined>;
  /** `posted`, and the operator role: a viewer gets the 403 page. */
  change(request: FastifyRequest, reply: FastifyReply): Promise<ConsoleSession | undefined>;
  who(session: ConsoleSession): Who;
  html(reply: FastifyReply, status: number, body: string): FastifyReply;
  seeOther(reply: FastifyReply, location: string): FastifyReply;
  /** The refusal page (400 for a bad form, 404, 409...) with the operator's header. */
  refuse(reply: FastifyReply, session: ConsoleSession, status: number, message: string): FastifyReply;
  /**
   * The change's audit row, written with `q` (the change's transaction), with `before` and `after`;
   * the admin app's audit hook then writes none for this request.
   */
  audit(
    q: Queryable,
    request: FastifyRequest,
    entry: { targetId: string | null; before?: unknown; after?: unknown; status?: number },
  ): Promise<void>;
};
