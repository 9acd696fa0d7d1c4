import { randomBytes } from 'node:crypto';
import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { dateOf, one, rows, run } from '../../db/query.ts';
import { hashSecret, verifySecret } from '../../lib/passwords.ts';

export const OPERATOR_ROLES = ['viewer', 'operator'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** An operator as the admin API shows it: never the credential, never its hash. */
export type Operator = {
  id: string;
  name: string;
  role: OperatorRole;
  isActive: boolean;
  lastSignInAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

type OperatorRow = Omit<Operator, 'lastSignInAt' | 'createdAt' | 'updatedAt'> & {
  lastSignInAt: string | null;
  createdAt: string;
  updatedAt: string;
};

const columns = sql`id, name, role, is_active as "isActive", last_sign_in_at::text as "lastSignInAt",
  created_at::text as "createdAt", updated_at::text as "updatedAt"`;

const present = (row: OperatorRow): Operator => ({
  ...row,
  lastSignInAt: dateOf(row.lastSignInAt),
  createdAt: dateOf(row.createdAt),
  updatedAt: dateOf(row.updatedAt),
});

/** 32 random bytes, base64url: shown once at creation, stored only as an scrypt hash. */
export const newOperatorCredential = () => `op_${randomBytes(32).toString('base64url')}`;

export class OperatorNameTakenError extends Error {}

/** A new operator and its credential (the only time the credential exists outside the operator's hands). */
export async function createOperator(
  db: Queryable,
  input: { name: string; role: OperatorRole },
): Promise<{ operator: Operator; credential: string }> {
  const credential = newOperatorCredential();
  const hash = await hashSecret(credential);
  const row = await one<OperatorRow>(
    db,
    sql`insert into operators (id, name, role, credential_hash) values (${createId()}, ${input.name}, ${input.role}, ${hash})
  on conflict (name) do nothing returning ${columns}`,
  );
  if (!row) throw new OperatorNameTakenError(input.name);
  return { operator: present(row), credential };
}

export async function listOperators(db: Queryable): Promise<Operator[]> {
  return (await rows<OperatorRow>(db, sql`select ${columns} from operators order by created_at, id`)).map(
    present,
  );
}

/**
 * Deactivates an operator and ends its console sessions; undefined when there is no such operator.
 * (A session of an inactive operator is refused anyway: the lookup joins on `is_active`.)
 */
export async function deactivateOperator(
  db: Queryable,
  id: string,
  now: Date,
): Promise<Operator | undefined> {
  const row = await one<OperatorRow>(
    db,
    sql`update operators set is_active = false, updated_at = ${now.toISOString()} where id = ${id} returning ${columns}`,
  );
  if (row) await run(db, sql`delete from console_sessions where operator_id = ${id}`);
  return row && present(row);
}

/**
 * The active operator with this name and credential, or undefined. An unknown name still costs one
 * scrypt, so that the answer's time does not tell which names exist.
 */
export async function verifyOperator(
  db: Queryable,
  name: string,
  credential: string,
): Promise<Operator | undefined> {
  const row = await one<OperatorRow & { credentialHash: string }>(
    db,
    sql`select ${columns}, credential_hash as "credentialHash" from operators where name = ${name} and is_active`,
  );
  const ok = await verifySecret(credential, row?.credentialHash ?? DUMMY_HASH);
  if (!row || !ok) return undefined;
  const { credentialHash: _, ...operator } = row;
  return present(operator);
}

const DUMMY_HASH = `scrypt$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;
