import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.ts';

/** The spec's limit: 100 kB, as Express counts it. */
export const JSON_BODY_LIMIT = 102_400;

declare module 'fastify' {
  interface FastifyRequest {
    /** The body bytes as received, for Content-Digest and idempotency fingerprints. */
    rawBody?: string;
  }
}

const parseFailure = () => new AppError(500, 'Internal Server Error');

/**
 * Express-parity body parsing (spec "Body parsing rules"): only `application/json` is parsed;
 * malformed or oversized JSON answers the bare 500 before routing; an empty JSON body is `{}`;
 * any other content type (a `+json` vendor type included) is left unparsed so validation reports it.
 */
export function installBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT },
    (request, body, done) => {
      const text = body as string;
      request.rawBody = text;
      if (text.length === 0) return done(null, {});
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return done(parseFailure(), undefined);
      }
      // Strict like body-parser: only an object or an array at the top level.
      if (value === null || typeof value !== 'object') return done(parseFailure(), undefined);
      done(null, value);
    },
  );
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: JSON_BODY_LIMIT }, (request, body, done) => {
    request.rawBody = (body as Buffer).toString('utf8');
    done(null, undefined);
  });

  // A Content-Type Fastify cannot parse at all (`json`, `;;;`, empty, `application/json, text/plain`)
  // would be its 415, which the error edge turns into a 500. Express leaves such a body unparsed, like
  // any type that is not application/json: so it goes to the catch-all parser above, and the header is
  // put back before authentication (the signature base may cover it).
  // Both run on every request, a GET too: callback style, no promise (docs/performance.md, "The
  // key route against bare Fastify").
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const type = request.headers['content-type'];
    if (type !== undefined && !(typeof type === 'string' && JSON_MEDIA_TYPE.test(type))) {
      request[declaredContentType] = type;
      request.headers['content-type'] = 'application/octet-stream';
    }
    done(null, payload);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const type = request[declaredContentType];
    if (type !== undefined) (request.headers as Record<string, unknown>)['content-type'] = type;
    done();
  });
}

/** What the application/json parser receives: that media type, with or without parameters. */
const JSON_MEDIA_TYPE = /^\s*application\/json\s*(;|$)/i;
const declaredContentType = Symbol('declaredContentType');

declare module 'fastify' {
  interface FastifyRequest {
    [declaredContentType]?: string | string[];
  }
}
