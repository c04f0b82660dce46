// Every route module of the service, in the order app.ts registers them. A new route is one line here; the app, the
// OpenAPI document's components and the tests (test/docs/errors.test.ts, test/docs/routes.test.ts) read this list.
import type { RouteModule } from './route-module.ts'
import consoleRoute from './console.ts'
import health from './health.ts'
import profile from './profile.ts'

export const routeModules: readonly RouteModule[] = [
  health,
  profile,
  consoleRoute
]
