export * from './scenarios.ts';
export * from './server.ts';
