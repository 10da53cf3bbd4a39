export * from './run';
export { conformance } from './runner';
