export * from './adapter.ts';
export * from './callbacks.ts';
export * from './config.ts';
export * from './inbound.ts';
export * from './pipeline-adapter.ts';
export * from './result-codes.ts';
export * from './settings.ts';
export * from './token.ts';
