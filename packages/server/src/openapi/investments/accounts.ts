import type { z } from 'zod';
import type { OperationSpec } from '../operations.ts';

/** The investments API's operations (docs/investments.md): accounts, their assets and portfolio valuation. */
export const ACCOUNTS_OPERATIONS: Record<string, OperationSpec> = {};

/** Response schemas these operations share, named once under components. */
export const ACCOUNTS_SHARED_SCHEMAS: [string, z.ZodType][] = [];
