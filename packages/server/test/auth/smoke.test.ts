import { buildTestApp, describeStores, type TestApp } from '@partner-api/testkit/app.ts';
import { createPartner, signedInject } from '@partner-api/testkit/partner.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';

describeStores('smoke on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(store);
  });
  afterAll(() => t.close());

  it('me works with a signed request', async () => {
    const p = await createPartner(t);
    const res = await signedInject(t.app, p, { method: 'GET', url: '/v1/oauth/me' });
    expect(res.json()).toMatchObject({ data: { id: p.organizationId } });
    expect(res.statusCode).toBe(200);
  });
});
