import type { PartnerClient, RequestEvent, ResponseEvent } from '../src/index.ts';

type At = { at: number };
export type Recorded = { requests: (RequestEvent & At)[]; responses: (ResponseEvent & At)[]; clear(): void };

/** Every attempt the client makes, as its 'request' and 'response' events report them. */
export function record(client: PartnerClient): Recorded {
  const recorded: Recorded = {
    requests: [],
    responses: [],
    clear() {
      recorded.requests.length = 0;
      recorded.responses.length = 0;
    },
  };
  client.on('request', (event) => recorded.requests.push({ ...event, at: Date.now() }));
  client.on('response', (event) => recorded.responses.push({ ...event, at: Date.now() }));
  return recorded;
}

export const ORDER_REF = /Ref (c[a-z0-9]{24})/;
