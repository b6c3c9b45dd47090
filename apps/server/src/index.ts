export { type AppOptions, buildApp } from './app.js';
export { DEFAULT_PORT, type RunningServer, startServer } from './server.js';
