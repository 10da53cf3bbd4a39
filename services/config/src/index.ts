export * from './fleet-yaml';
