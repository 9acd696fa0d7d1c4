import type { Report } from '@partner-api/contract';
import type { TestApp } from '@partner-api/testkit/app.ts';
import { type Partner, signedInject } from '@partner-api/testkit/partner.ts';
import { extractText, getDocumentProxy } from 'unpdf';

/** The platform the report suites configure: its name and licence must be on every report. */
export const PLATFORM_ENV = {
  PLATFORM_NAME: 'Mali Invest Test Ltd',
  PLATFORM_LICENCE: 'Licensed by the CMA as a trading platform, licence CMA/TP/0042',
};

/** Signed GETs of the reports endpoints; `pdf` asks for the PDF by content negotiation. */
export function reportsClient(t: TestApp, partner: Partner) {
  return {
    list: (query = '') => signedInject(t.app, partner, { method: 'GET', url: `/v1/reports${query}` }),
    get: (id: string) => signedInject(t.app, partner, { method: 'GET', url: `/v1/reports/${id}` }),
    pdf: (id: string, accept = 'application/pdf') =>
      signedInject(t.app, partner, { method: 'GET', url: `/v1/reports/${id}`, headers: { accept } }),
  };
}

/** The text of a PDF as pdf.js extracts it, its whitespace runs made single spaces. */
export async function pdfText(bytes: Buffer): Promise<string> {
  const document = await getDocumentProxy(new Uint8Array(bytes));
  const { text } = await extractText(document, { mergePages: true });
  return text.replace(/\s+/g, ' ');
}

/** Every leaf of a report's data (strings and numbers), with its path: the figures the PDF must carry. */
export function leavesOf(value: unknown, path = 'data'): [string, string][] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => leavesOf(item, `${path}[${i}]`));
  if (typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => leavesOf(item, `${path}.${key}`));
  return [[path, String(value)]];
}

/** The leaves of `report` (and its id, time and replaced report) that `text` lacks. */
export function missingFrom(text: string, report: Report): [string, string][] {
  const leaves: [string, string][] = [
    ['id', report.id],
    ['createdAt', report.createdAt],
    ...(report.replaces ? [['replaces', report.replaces] as [string, string]] : []),
    ...leavesOf(report.data),
  ];
  return leaves.filter(([, value]) => !text.includes(value.replace(/\s+/g, ' ')));
}
