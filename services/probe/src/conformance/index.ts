export * from './report';
export * from './run';
export { conformance } from './runner';
