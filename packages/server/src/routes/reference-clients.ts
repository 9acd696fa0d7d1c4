import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SERVER_FILES } from '../lib/package-paths.ts';

/** The one-file clients in clients/ (docs/signing.md, Reference clients), in the order shown. */
export const REFERENCE_CLIENTS = [
  {
    title: 'Python 3 (with `cryptography`)',
    file: 'python/partner_api_client.py',
    language: 'python',
    run: 'python3 partner_api_client.py',
  },
  {
    title: 'Java 17 (JDK only)',
    file: 'java/PartnerApiClient.java',
    language: 'java',
    run: 'java PartnerApiClient.java',
  },
  {
    title: 'POSIX shell (`openssl` 3 and `curl`)',
    file: 'shell/partner-api-client.sh',
    language: 'sh',
    run: 'sh partner-api-client.sh',
  },
] as const;

/** Where the signing guide's markdown takes the clients' section. */
export const REFERENCE_CLIENTS_PLACEHOLDER = '<!-- reference-clients -->';

const DOWNLOAD_PREFIX = '/docs/clients/';

/**
 * The clients' sources as markdown: marked HTML-escapes a code block, so the page shows each file
 * byte for byte, ready to copy. Read once per app at start-up, like the guide itself.
 */
function referenceClientsMarkdown(sources: Map<string, string>): string {
  return REFERENCE_CLIENTS.map((client) => {
    const name = path.basename(client.file);
    // A fence longer than any backtick run in the file, so that nothing inside can close it.
    const longestRun = Math.max(0, ...(sources.get(name)!.match(/`+/g) ?? []).map((run) => run.length));
    const fence = '`'.repeat(Math.max(3, longestRun + 1));
    return [
      `### ${client.title}`,
      `\`clients/${client.file}\`: run with \`${client.run}\`. [Download ${name}](${DOWNLOAD_PREFIX}${name})`,
      `${fence}${client.language}\n${sources.get(name)!.replace(/\n$/, '')}\n${fence}`,
    ].join('\n\n');
  }).join('\n\n');
}

/**
 * The signing guide with the clients' sources in place of its placeholder, and GET
 * /docs/clients/<file> serving each file as a download.
 */
export function withReferenceClients(app: FastifyInstance, guide: string): string {
  const sources = new Map(
    REFERENCE_CLIENTS.map((client) => [
      path.basename(client.file),
      readFileSync(path.join(SERVER_FILES.referenceClients, client.file), 'utf8'),
    ]),
  );
  app.get<{ Params: { file: string } }>(`${DOWNLOAD_PREFIX}:file`, (request, reply) => {
    const source = sources.get(request.params.file);
    if (source === undefined) return reply.callNotFound();
    return reply
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', `attachment; filename="${request.params.file}"`)
      .type('text/plain; charset=utf-8')
      .send(source);
  });
  return guide.replace(REFERENCE_CLIENTS_PLACEHOLDER, () => referenceClientsMarkdown(sources));
}
