// Every route module of the service, in the order app.ts registers them: that order is the OpenAPI document's
// (paths, then the components their schemas bring), so a new module is appended and openapi.yaml grows at its end
// instead of reordering. An array, not one `export … from` line per module: a module namespace lists its names in
// alphabetical order, which moved the existing paths and components whenever a route was added. The tests
// (test/docs/errors.test.ts, test/docs/routes.test.ts) read the routes' answers here. A module's default export is
// its RouteModule (route-module.ts).
import requestConsole from './console/route.ts'
import health from './health/route.ts'
import profile from './profile/route.ts'
import type { RouteModule } from './route-module.ts'

export const routeModules: readonly RouteModule[] = [health, profile, requestConsole]

/** Every registered route as `METHOD /path`, in the registry's order. */
export const registeredRoutes: readonly string[] = routeModules.flatMap(module => Object.keys(module.errorCodes))
