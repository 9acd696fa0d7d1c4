import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { AppError } from '../lib/errors.ts';
import { type AuditActor, auditBody, listAudit, writeAudit } from '../services/audit/log.ts';
import {
  createOperator,
  deactivateOperator,
  listOperators,
  OPERATOR_ROLES,
  OperatorNameTakenError,
} from '../services/operators/accounts.ts';
import { idParams } from './schemas.ts';

const operatorCreateBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  role: z.enum(OPERATOR_ROLES),
});

const when = z.coerce
  .date()
  .min(new Date('1970-01-01T00:00:00.000Z'), 'must be a date between 1970 and 9999')
  .max(new Date('9999-12-31T23:59:59.999Z'), 'must be a date between 1970 and 9999')
  .optional();

const auditQuery = z.strictObject({
  actor: z.string().min(1).max(100).optional(),
  route: z.string().min(1).max(300).optional(),
  from: when,
  to: when,
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** Named operator accounts (docs/console.md) and the audit log, for ADMIN_TOKEN holders. */
export function registerOperatorRoutes(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.database.db;
  app.post('/admin/operators', { schema: { body: operatorCreateBody } }, async (request, reply) => {
    try {
      const created = await createOperator(db, request.body as z.output<typeof operatorCreateBody>);
      return reply.code(201).send({ ...created.operator, credential: created.credential });
    } catch (error) {
      if (error instanceof OperatorNameTakenError)
        throw new AppError(409, 'Conflict', 'An operator with this name exists');
      throw error;
    }
  });
  app.get('/admin/operators', async () => listOperators(db));
  app.post('/admin/operators/:id/deactivate', { schema: { params: idParams } }, async (request) => {
    const { id } = request.params as { id: string };
    const operator = await deactivateOperator(db, id, ctx.clock());
    if (!operator) throw new AppError(404, 'Not found', 'Operator not found');
    return operator;
  });
  app.get('/admin/audit', { schema: { querystring: auditQuery } }, async (request) =>
    listAudit(db, request.query as z.output<typeof auditQuery>),
  );
}

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is making this request, once authenticated (admin token or console session). */
    auditActor?: AuditActor;
    /** Set once the handler wrote its own audit row inside the change's transaction: the hook then skips. */
    auditWritten?: boolean;
  }
}

/**
 * The answer of a successful change as its "after" (the resource as the change left it, for the
 * admin API's PATCH and PUT), secrets redacted; nothing for a refusal or an answer that is not JSON.
 */
function answerOf(reply: FastifyReply, payload: unknown, secretValues: readonly string[]): unknown {
  if (reply.statusCode >= 300 || typeof payload !== 'string') return null;
  if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return null;
  try {
    return auditBody(JSON.parse(payload), secretValues);
  } catch {
    return null;
  }
}

/**
 * One audit row for every authenticated change (POST, PUT, PATCH, DELETE) on the admin app, written
 * before the answer leaves, whatever its status. A request refused before authentication has no
 * actor and is not recorded; a failure to write is logged and does not change the answer.
 */
export function installAuditLog(app: FastifyInstance, ctx: AppContext): void {
  const secretValues = [ctx.secrets.adminToken];
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    const route = request.routeOptions.url;
    if (!request.auditActor || request.auditWritten || !CHANGES.has(request.method) || !route) return payload;
    const params = (request.params ?? {}) as Record<string, string>;
    try {
      await writeAudit(ctx.database.db, {
        actor: request.auditActor,
        method: request.method,
        route,
        targetId: params.id ?? (Object.values(params).join('/') || null),
        body: auditBody(request.body, secretValues),
        after: answerOf(reply, payload, secretValues),
        status: reply.statusCode,
        ip: request.ip,
        requestId: typeof request.id === 'string' ? request.id : null,
        at: ctx.clock(),
      });
    } catch (error) {
      request.log.error({ err: error, route }, 'audit log: the entry could not be written');
    }
    return payload;
  });
}
