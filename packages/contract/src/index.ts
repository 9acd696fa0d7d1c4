export * from './errors.ts';
export * from './ids.ts';
export * from './signature.ts';
export * from './digest.ts';
