import { ErrorLabel, type TokenRequest, tokenRequestSchema } from '@partner-api/contract';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../lib/errors.ts';
import { invalidateCallers } from '../services/auth/caller-cache.ts';
import { describeOrganization } from '../services/auth/describe-organization.ts';
import { issueToken } from '../services/auth/issue-token.ts';
import { revokeToken } from '../services/auth/load-caller.ts';
import type { TokenCodec } from '../services/auth/tokens.ts';

type Deps = { ctx: AppContext; codec: TokenCodec };

/** POST /oauth/token: unauthenticated and unsigned; its own rate limit runs at onRequest. */
export async function tokenRoute(app: FastifyInstance, { ctx, codec }: Deps) {
  app.post('/oauth/token', { schema: { body: tokenRequestSchema } }, async (request) =>
    issueToken({ db: ctx.database.db, codec, input: request.body as TokenRequest, events: ctx.events }),
  );
}

/** GET /oauth/me and POST /oauth/revoke: behind the authentication pipeline. */
export async function oauthRoutes(app: FastifyInstance, { ctx }: Deps) {
  app.get('/oauth/me', { config: { allowInactiveOrganization: true } }, async (request) => {
    const organization = await describeOrganization({
      db: ctx.database.db,
      organizationId: request.auth!.organizationId,
    });
    if (!organization) throw new AppError(404, ErrorLabel.notFound);
    return { data: organization };
  });

  app.post('/oauth/revoke', { config: { revoke: true } }, async (request) => {
    const { tokenId, tokenExpiresAt, organizationId, clientId } = request.auth!;
    await invalidateCallers(
      ctx,
      () =>
        revokeToken({
          db: ctx.database.db,
          jti: tokenId,
          expiresAt: tokenExpiresAt,
          events: ctx.events,
          owner: { organizationId, clientId },
        }),
      request.log,
    );
    return { message: 'Token revoked successfully' };
  });
}
