export * from './differences.js';
export * from './errors.js';
export { KNOWN_FIELDS } from './fields.js';
export * from './fields-info.js';
export * from './omb.js';
export * from './parse.js';
export * from './run.js';
export * from './scenario.js';
export * from './units.js';
