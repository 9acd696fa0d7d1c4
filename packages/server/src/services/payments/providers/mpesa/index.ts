export * from './adapter.ts';
export * from './callbacks.ts';
export * from './config.ts';
export * from './inbound.ts';
export { darajaTimestamp, stkPassword } from './password.ts';
export * from './pipeline-adapter.ts';
export * from './result-codes.ts';
