import {
  ErrorLabel,
  LedgerMessage,
  type ReportListQuery,
  reportIdParamsSchema,
  reportListQuerySchema,
  type TransactionListQuery,
  transactionIdParamsSchema,
  transactionListQuerySchema,
} from '@partner-api/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { prefersPdf } from '../../lib/accept.ts';
import { AppError } from '../../lib/errors.ts';
import {
  getReport,
  getTransaction,
  listReports,
  listTransactions,
} from '../../services/investments/ledger.ts';
import { renderReportPdf } from '../../services/reports/pdf.ts';
import type { RouteDeps } from '../deps.ts';

const organizationOf = (request: FastifyRequest) => request.auth!.organizationId;

/**
 * The investments API (docs/investments.md): transactions (the money and units ledgers) and reports.
 * Read-only; another organization's transaction or report is answered exactly like a nonexistent one.
 * A report is JSON, or a PDF when the Accept header prefers application/pdf.
 */
export async function ledgerRoutes(app: FastifyInstance, { ctx }: RouteDeps) {
  const db = ctx.database.db;

  app.get<{ Querystring: TransactionListQuery }>(
    '/transactions',
    { schema: { querystring: transactionListQuerySchema } },
    (request) => listTransactions(db, organizationOf(request), request.query),
  );

  app.get<{ Params: { transactionId: string } }>(
    '/transactions/:transactionId',
    { schema: { params: transactionIdParamsSchema } },
    async (request) => {
      const data = await getTransaction(db, organizationOf(request), request.params.transactionId);
      if (!data) throw new AppError(404, ErrorLabel.notFound, LedgerMessage.transactionNotFound);
      return { data };
    },
  );

  app.get<{ Querystring: ReportListQuery }>(
    '/reports',
    { schema: { querystring: reportListQuerySchema } },
    (request) => listReports(db, organizationOf(request), request.query),
  );

  app.get<{ Params: { reportId: string } }>(
    '/reports/:reportId',
    { schema: { params: reportIdParamsSchema } },
    async (request, reply) => {
      const data = await getReport(db, organizationOf(request), request.params.reportId);
      if (!data) throw new AppError(404, ErrorLabel.notFound, LedgerMessage.reportNotFound);
      if (prefersPdf(request.headers.accept)) {
        return reply
          .type('application/pdf')
          .header('content-disposition', `inline; filename="report-${data.id}.pdf"`)
          .send(await renderReportPdf(data));
      }
      return { data };
    },
  );
}
