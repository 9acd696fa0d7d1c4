import type { z } from 'zod';
import type { OperationSpec } from '../operations.ts';

/** The investments API's operations (docs/investments.md): investment types, instruments and their prices (read-only). */
export const MARKET_OPERATIONS: Record<string, OperationSpec> = {};

/** Response schemas these operations share, named once under components. */
export const MARKET_SHARED_SCHEMAS: [string, z.ZodType][] = [];
