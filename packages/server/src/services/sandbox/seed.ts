import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createId } from '@partner-api/contract';
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { one, run } from '../../db/query.ts';
import { createCredential } from '../credentials/create.ts';
import { createOrganization } from '../organizations/create.ts';
import { NSE_STOCKS } from '../stocks/nse-catalog.ts';
import { upsertStocks } from '../stocks/upsert.ts';

export const DEMO_KEY_ID = 'staging-service-ed25519';
const SEED_LOCK_ID = 7_246_101;

const DEMO_CUSTOMERS = [
  {
    firstName: 'Amina',
    lastName: 'Wanjiru',
    msisdn: '254712345678',
    identificationType: 'NATIONAL_ID',
    identificationNumber: '28765432',
    referenceId: 'demo-001',
  },
  {
    firstName: 'Brian',
    lastName: 'Otieno',
    msisdn: '254722000111',
    identificationType: 'PASSPORT',
    identificationNumber: 'AK0012345',
    referenceId: 'demo-002',
  },
  {
    firstName: 'Chebet',
    lastName: 'Kiprono',
    msisdn: '254733222444',
    identificationType: 'NATIONAL_ID',
    identificationNumber: '31234567',
    referenceId: 'demo-003',
  },
  // No msisdn: shows the confirm screen that refuses to take a payment.
  {
    firstName: 'Daudi',
    lastName: 'Mwangi',
    msisdn: null,
    identificationType: null,
    identificationNumber: null,
    referenceId: 'demo-004',
  },
];

export type SandboxCredentialsFile = {
  baseUrl: string;
  organizationId: string;
  clientId: string;
  clientSecret: string;
  keyId: string;
  privateKey: string;
  customerIds: string[];
};

/**
 * Every sandbox start: the demo NSE catalog, adding only missing symbols (idempotent; prices the
 * operator imported are kept). First start on an empty store: a demo organization, a credential
 * with an Ed25519 key pair, and customers. The secrets go to DATA_DIR/sandbox-credentials.json
 * (mode 0600) only.
 * Returns the file path when it seeded, undefined when the store already had data.
 */
export async function seedSandbox({
  db,
  dataDir,
  baseUrl,
  extra,
}: {
  db: Db;
  dataDir: string;
  baseUrl: string;
  extra?: (tx: Db, organizationId: string) => Promise<void>;
}) {
  return db.transaction(async (tx) => {
    // Several instances starting together on one PostgreSQL seed once.
    await tx.execute(sql`select pg_advisory_xact_lock(${SEED_LOCK_ID})`);
    await upsertStocks(tx, NSE_STOCKS, 'keep');
    const existing = await one<{ id: string }>(tx, sql`select id from organizations limit 1`);
    if (existing) return undefined;
    const org = await createOrganization({
      db: tx,
      input: {
        name: 'Demo Investments',
        description: 'Sandbox demo organization',
        email: 'demo@example.com',
      },
    });
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const credential = await createCredential({
      db: tx,
      organizationId: org.id,
      input: {
        name: 'Sandbox demo',
        publicKey: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
        keyId: DEMO_KEY_ID,
      },
    });
    const customerIds: string[] = [];
    for (const [index, customer] of DEMO_CUSTOMERS.entries()) {
      const id = createId();
      customerIds.push(id);
      // Distinct timestamps keep the newest-first order stable and readable.
      const createdAt = new Date(Date.now() - (DEMO_CUSTOMERS.length - index) * 1000);
      const at = createdAt.toISOString();
      await run(
        tx,
        sql`insert into customers (id, organization_id, first_name, last_name, msisdn, identification_type,
  identification_number, reference_id, created_at, updated_at)
  values (${id}, ${org.id}, ${customer.firstName}, ${customer.lastName}, ${customer.msisdn},
  ${customer.identificationType}, ${customer.identificationNumber}, ${customer.referenceId},
  ${at}::timestamptz, ${at}::timestamptz)`,
      );
    }
    await extra?.(tx as unknown as Db, org.id);
    const file: SandboxCredentialsFile = {
      baseUrl,
      organizationId: org.id,
      clientId: credential.clientId,
      clientSecret: credential.clientSecret,
      keyId: DEMO_KEY_ID,
      privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      customerIds,
    };
    const target = path.resolve(dataDir, 'sandbox-credentials.json');
    writeFileSync(target, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    return target;
  });
}
