export * from './digest.ts';
export * from './errors.ts';
export * from './ids.ts';
export * from './partner-signing.ts';
export * from './schemas/oauth.ts';
export * from './signature.ts';
