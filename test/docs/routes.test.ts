// Every route the app serves is in the route registry (src/routes/registry.ts) or is a plugin's own (the docs, the
// metrics scrape, CORS' preflight), and every registered route is served and documented: a route added beside the
// registry, which app.ts, the document's components and the error tests would not see, fails here.
import t from 'tap'
import { METRICS_PATH } from '../../src/plugins/app/metrics/path.ts'
import { DOCS_PREFIX } from '../../src/plugins/external/docs/prefix.ts'
import { registeredRoutes } from '../../src/routes/registry.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import { servedRoutes } from '../helpers/routes.ts'

type Json = Record<string, any>

/** The routes no route module serves, by the plugin that serves them. */
const pluginOwn: Record<string, (method: string, path: string) => boolean> = {
  docs: (_method, path) => path === DOCS_PREFIX || path.startsWith(`${DOCS_PREFIX}/`),
  metrics: (method, path) => path === METRICS_PATH && ['GET', 'HEAD'].includes(method),
  'CORS preflight': (method, path) => method === 'OPTIONS' && path === '*'
}

const registered = new Set(registeredRoutes)

/** The served routes that are neither in the registry nor a plugin's own. */
function unaccounted (served: string[]): string[] {
  return served.filter(route => {
    const [method, path] = route.split(' ') as [string, string]
    // Fastify serves HEAD beside every GET.
    if (registered.has(route) || (method === 'HEAD' && registered.has(`GET ${path}`))) return false
    return !Object.values(pluginOwn).some(owns => owns(method, path))
  })
}

t.test('every served route is a registered route module\'s or a plugin\'s own', async t => {
  const { app } = await buildTestApp(t, {
    METRICS_API_KEY: 'metrics-key-for-tests-0123456789', CORS_ORIGINS: 'https://app.test'
  })
  await app.ready()
  const served = servedRoutes(app.printRoutes({ commonPrefix: false }))
  t.ok(served.includes(`GET ${METRICS_PATH}`) && served.includes(`GET ${DOCS_PREFIX}/json`), 'the tree is read')
  t.same(unaccounted(served), [], 'add each route module to src/routes/registry.ts')
  for (const route of registered) t.ok(served.includes(route), `${route} of the registry is served`)
})

t.test('a route registered beside the registry is found', async t => {
  const { app } = await buildTestApp(t)
  app.get('/api/users/stray', async () => ({}))
  await app.ready()
  t.same(unaccounted(servedRoutes(app.printRoutes({ commonPrefix: false }))),
    ['GET /api/users/stray', 'HEAD /api/users/stray'])
})

t.test('every registered route is documented, with the tag and operation id of a route of the document', async t => {
  const { app } = await buildTestApp(t)
  const doc: Json = (await app.inject('/docs/json')).json()
  for (const route of registeredRoutes) {
    const [method, path] = route.split(' ') as [string, string]
    const op = doc.paths[path]?.[method.toLowerCase()]
    t.ok(op?.operationId, `${route} is documented`)
    t.ok(op?.tags?.length, `${route} has a tag`)
  }
})

t.test('the tree reader finds nested routes under their full path', async t => {
  const tree = [
    '├── /docs (GET, HEAD)',
    '│   └── / (GET, HEAD)',
    '│       ├── json (GET, HEAD)',
    '│       └── yaml (GET)',
    '└── /request-console (POST)'
  ].join('\n')
  t.same(servedRoutes(tree), ['GET /docs', 'HEAD /docs', 'GET /docs/', 'HEAD /docs/', 'GET /docs/json',
    'HEAD /docs/json', 'GET /docs/yaml', 'POST /request-console'])
})
