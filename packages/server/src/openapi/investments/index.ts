import type { z } from 'zod';
import type { OperationSpec } from '../operations.ts';
import { ACCOUNTS_OPERATIONS, ACCOUNTS_SHARED_SCHEMAS } from './accounts.ts';
import { LEDGER_OPERATIONS, LEDGER_SHARED_SCHEMAS } from './ledger.ts';
import { MARKET_OPERATIONS, MARKET_SHARED_SCHEMAS } from './market.ts';
import { REQUESTS_OPERATIONS, REQUESTS_SHARED_SCHEMAS } from './requests.ts';

/** The investments API's tag: in the document only with INVESTMENTS_PREVIEW. */
export const INVESTMENTS_TAG = {
  name: 'Investments (preview)',
  description:
    "Instruments, accounts, requests (orders), transactions and reports for partners' own apps. Preview: off unless the platform turns it on.",
};

/** Every investments operation, each marked `x-preview: true`: in the document only with INVESTMENTS_PREVIEW. */
export const INVESTMENT_OPERATIONS: Record<string, OperationSpec> = {
  ...MARKET_OPERATIONS,
  ...ACCOUNTS_OPERATIONS,
  ...REQUESTS_OPERATIONS,
  ...LEDGER_OPERATIONS,
};

export const INVESTMENT_SHARED_SCHEMAS: [string, z.ZodType][] = [
  ...MARKET_SHARED_SCHEMAS,
  ...ACCOUNTS_SHARED_SCHEMAS,
  ...REQUESTS_SHARED_SCHEMAS,
  ...LEDGER_SHARED_SCHEMAS,
];
