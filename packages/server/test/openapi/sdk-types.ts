/**
 * The SDK's request and response shapes against the client generated from the OpenAPI document
 * (generated/api.d.ts). Checked by `tsc` (npm run typecheck) and by generated-client.test.ts: a change
 * on either side that breaks a partner's generated client fails the build.
 */
import type { TokenRequest } from '@partner-api/contract';
import type {
  CustomerCreate,
  CustomerGetResponse,
  CustomerList,
  CustomerListQuery,
  CustomerResponse,
  CustomerUpdate,
  MeResponse,
  PaymentStatusResponse,
  RevokeResponse,
  TokenResponse,
  UssdResponse,
  WebhookKeyResponse,
} from '@partner-api/sdk';
import type { UssdResource } from '../../../sdk/src/resources/ussd.ts';
import type { components, paths } from './generated/api.d.ts';

type Schemas = components['schemas'];
type Assert<T extends true> = T;
type Extends<A, B> = [A] extends [B] ? true : false;
type Same<A, B> = [Extends<A, B>, Extends<B, A>] extends [true, true] ? true : false;

/** What the SDK sends is exactly what the document accepts. */
export type RequestChecks = [
  Assert<Same<TokenRequest, Schemas['TokenRequest']>>,
  Assert<Same<CustomerCreate, Schemas['CustomerCreate']>>,
  Assert<Same<CustomerUpdate, Schemas['CustomerUpdate']>>,
  Assert<Same<CustomerListQuery, NonNullable<paths['/customers']['get']['parameters']['query']>>>,
  Assert<Extends<{ customerId: Parameters<UssdResource['start']>[0] }, Schemas['UssdSessionRequest']>>,
  Assert<
    Extends<
      { sessionId: Parameters<UssdResource['process']>[0]; choice: Parameters<UssdResource['process']>[1] },
      Schemas['UssdProcessRequest']
    >
  >,
];

/** What the document says the server answers fits what the SDK promises its callers. */
export type ResponseChecks = [
  Assert<Extends<Schemas['TokenResponse'], TokenResponse>>,
  Assert<Extends<Schemas['MeResponse'], MeResponse>>,
  Assert<Extends<Schemas['RevokeResponse'], RevokeResponse>>,
  Assert<Extends<Schemas['CustomerCreatedResponse'], CustomerResponse>>,
  Assert<Extends<Schemas['CustomerUpdatedResponse'], CustomerResponse>>,
  Assert<Extends<Schemas['CustomerResponse'], CustomerGetResponse>>,
  Assert<Extends<Schemas['CustomerListResponse'], CustomerList>>,
  Assert<Extends<Schemas['PaymentStatusResponse'], PaymentStatusResponse>>,
  Assert<Extends<Schemas['WebhookKeyResponse'], WebhookKeyResponse>>,
  Assert<Extends<Schemas['UssdResponse'], UssdResponse>>,
  Assert<
    Extends<paths['/ussd/session']['post']['responses'][201]['content']['application/json'], UssdResponse>
  >,
];
