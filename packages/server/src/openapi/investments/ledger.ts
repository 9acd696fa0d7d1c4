import type { z } from 'zod';
import type { OperationSpec } from '../operations.ts';

/** The investments API's operations (docs/investments.md): transactions (the money and units ledgers) and reports. */
export const LEDGER_OPERATIONS: Record<string, OperationSpec> = {};

/** Response schemas these operations share, named once under components. */
export const LEDGER_SHARED_SCHEMAS: [string, z.ZodType][] = [];
