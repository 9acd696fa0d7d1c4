export * from './errors.ts';
export * from './ids.ts';
