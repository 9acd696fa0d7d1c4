export * from './digest.ts';
export * from './errors.ts';
export * from './ids.ts';
export * from './signature.ts';
