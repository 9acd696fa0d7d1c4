export { type ControlRoutes, commonApi, commonControl, type FakeApi } from './control.ts';
export { FakeCore, type LoggedRequest, type SentCallback } from './core.ts';
export type { Answer, Listening, Received } from './http.ts';
export { type FakeHandlers, serveFake } from './server.ts';
export { TokenStore } from './tokens.ts';
export { alnum, b64url, digits, header, hex, httpUrl, isObject, upper } from './values.ts';
