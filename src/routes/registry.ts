// Every route module of the service, one line each: app.ts registers each module's plugin and schemas (in the
// names' order), and the tests (test/docs/errors.test.ts, test/docs/routes.test.ts) read its routes' answers.
// A module's default export is its RouteModule (route-module.ts).
export { default as requestConsole } from './console.ts'
export { default as health } from './health.ts'
export { default as profile } from './profile.ts'
