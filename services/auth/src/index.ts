export * from './api-tokens';
export * from './keyring';
export * from './request-guard';
