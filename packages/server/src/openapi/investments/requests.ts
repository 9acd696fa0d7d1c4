import type { z } from 'zod';
import type { OperationSpec } from '../operations.ts';

/** The investments API's operations (docs/investments.md): requests (orders): buy by amount, sell by units, list, get, cancel. */
export const REQUESTS_OPERATIONS: Record<string, OperationSpec> = {};

/** Response schemas these operations share, named once under components. */
export const REQUESTS_SHARED_SCHEMAS: [string, z.ZodType][] = [];
