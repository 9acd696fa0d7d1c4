import { describeStores } from '@partner-api/testkit/app.ts';
import {
  type ListeningApp,
  listeningPartner,
  listeningTestApp,
  sdkClient,
} from '@partner-api/testkit/listening.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../../sdk/src/index.ts';
import { PREVIEW_ENV } from './api-support.ts';

describeStores("the SDK's webhook methods against the preview API on %s", (store) => {
  let t: ListeningApp;
  beforeAll(async () => {
    t = await listeningTestApp(store, PREVIEW_ENV);
  });
  afterAll(() => t?.close());

  it('create, get, update, test, list and resend; another organization sees none of it', async () => {
    const [a, b] = [sdkClient(await listeningPartner(t)), sdkClient(await listeningPartner(t))];
    await expect(a.webhooks.get()).rejects.toBeInstanceOf(NotFoundError);

    const created = await a.webhooks.create({
      url: 'https://hooks.localhost/a',
      subscriptions: ['CUSTOMER'],
    });
    expect(created.data).toMatchObject({
      status: 'ACTIVE',
      url: 'https://hooks.localhost/a',
      subscriptions: expect.arrayContaining(['CUSTOMER', 'WEBHOOK.CREATED']),
      disabledReason: null,
    });
    const again = a.webhooks.create({ url: 'https://hooks.localhost/a', subscriptions: ['ALL'] });
    await expect(again).rejects.toBeInstanceOf(ConflictError);
    await expect(again).rejects.toMatchObject({ status: 409, label: 'Conflict' });
    expect((await a.webhooks.get()).data).toEqual(created.data);

    const updated = await a.webhooks.update({ subscriptions: ['ALL'] });
    expect(updated.data).toMatchObject({
      webhookId: created.data.webhookId,
      subscriptions: expect.arrayContaining(['ALL']),
    });
    await expect(a.webhooks.update({})).rejects.toBeInstanceOf(ValidationError);

    const tested = await a.webhooks.test();
    expect(tested.data).toEqual({ eventId: expect.any(String), event: 'WEBHOOK.CREATED' });

    const list = await a.webhooks.events.list({ limit: 100 });
    const record = list.data.find((e) => e.eventId === tested.data.eventId);
    expect(record).toMatchObject({ event: 'WEBHOOK.CREATED', createdAt: expect.any(Number) });
    expect(list.pagination).toMatchObject({ page: 1, limit: 100 });
    for (const e of (await a.webhooks.events.list({ status: 'FAILED' })).data)
      expect(e.status).toBe('FAILED');

    const resent = await a.webhooks.events.resend(tested.data.eventId);
    expect(resent.data).toEqual({ eventId: tested.data.eventId, deliveryId: expect.any(String) });

    // Organization B: no webhook, none of A's events, and A's event is not found.
    await expect(b.webhooks.get()).rejects.toBeInstanceOf(NotFoundError);
    const listB = await b.webhooks.events.list({ limit: 100 });
    expect(listB.data.map((e) => e.eventId)).not.toContain(tested.data.eventId);
    await expect(b.webhooks.events.resend(tested.data.eventId)).rejects.toMatchObject({
      status: 404,
      message: 'Event not found',
    });
  });
});
