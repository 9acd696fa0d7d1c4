export * from './airtel/index.ts';
export * from './mpesa/index.ts';
export * from './mtn/index.ts';
export * from './prices/index.ts';
export * from './sms/index.ts';
