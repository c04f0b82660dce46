// Every plugin names itself and declares what it needs (fastify-plugin's `name` and `dependencies`), so an order
// that would lose something fails the boot: a plugin putting its metrics on the registry, registered before the
// metrics plugin, is an error naming `metrics`, not a service that starts without those metrics.
import { readdirSync } from 'node:fs'
import t from 'tap'
import Fastify, { type FastifyPluginCallback } from 'fastify'
import app, { serverOptions, type AppOptions } from '../../src/app.ts'
import { metricsOf } from '../../src/metrics/registry.ts'
import metrics from '../../src/plugins/app/metrics/index.ts'
import { buildTestApp, testConfig } from '../helpers/build-app.ts'

const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const PLUGINS = new URL('../../src/plugins/', import.meta.url)

interface Meta { name?: string, dependencies?: string[] }
type Plugin = FastifyPluginCallback<any> & { [key: symbol]: Meta | undefined }
const metaOf = (plugin: Plugin): Meta => plugin[Symbol.for('plugin-meta')] ?? {}

/** A plugin: a file of app/ or external/, or a folder's index.ts there (the folder's other files are its modules). */
const isPlugin = (file: string): boolean => /^[^/]+\/([^/]+|[^/]+\/index)\.ts$/.test(file)

/** Every plugin under src/plugins/, by its fastify-plugin name. */
async function pluginFiles (): Promise<Map<string, { file: string, plugin: Plugin }>> {
  const files = readdirSync(PLUGINS, { recursive: true, encoding: 'utf8' }).filter(isPlugin).sort()
  const plugins = new Map<string, { file: string, plugin: Plugin }>()
  for (const file of files) {
    const plugin = (await import(new URL(file, PLUGINS).href) as { default: Plugin }).default
    plugins.set(metaOf(plugin).name ?? file, { file, plugin })
  }
  return plugins
}

/** The plugins whose sources put metrics on the registry at registration, and a metric each puts there. */
const METRIC_OWNERS: Record<string, string[]> = {
  redis: ['bff_redis_up', 'bff_redis_primary_changes_total'],
  'rate-limit': ['bff_rate_limit_local_total'],
  auth: ['bff_auth_jwks_keys', 'bff_auth_signing_key_pending_total'],
  upstream: ['bff_upstream_requests_total', 'bff_upstream_breaker_state'],
  profile: ['bff_profile_degraded_sections_total'],
  'app-version': ['bff_app_version_requests_total'],
  deprecation: ['bff_deprecated_calls_total']
}

t.test('every plugin under src/plugins/ is named, declares only named plugins, and is registered by the app',
  async t => {
    const plugins = await pluginFiles()
    const { app } = await buildTestApp(t)
    for (const [name, { file, plugin }] of plugins) {
      t.ok(metaOf(plugin).name, `${file} names itself (fastify-plugin's name)`)
      for (const dependency of metaOf(plugin).dependencies ?? []) {
        t.ok(plugins.has(dependency), `${name} depends on ${dependency}, a plugin of src/plugins/`)
      }
      t.ok(app.hasPlugin(name), `the app registers ${name}`)
    }
  })

t.test('every plugin that puts metrics on the registry depends on metrics, directly or through one it declares',
  async t => {
    const plugins = await pluginFiles()
    const needs = (name: string, seen = new Set<string>()): Set<string> => {
      for (const dependency of metaOf(plugins.get(name)!.plugin).dependencies ?? []) {
        if (!seen.has(dependency)) needs(dependency, seen.add(dependency))
      }
      return seen
    }
    for (const owner of Object.keys(METRIC_OWNERS)) {
      t.ok(plugins.has(owner), `${owner} is a plugin`)
      t.ok(needs(owner).has('metrics'), `${owner} needs metrics`)
    }
  })

t.test('registered before the metrics plugin, each owner that reads the registry fails the boot, naming metrics',
  async t => {
    const plugins = await pluginFiles()
    const config = testConfig({ METRICS_API_KEY: METRICS_KEY })
    for (const owner of ['redis', 'rate-limit', 'auth', 'upstream', 'profile']) {
      const app = Fastify(serverOptions(config, { logger: false }))
      t.teardown(() => app.close())
      app.register(plugins.get(owner)!.plugin, { config })
      app.register(metrics, { config })
      const error = await app.ready().then(() => null, (error: unknown) => error as { code?: string, message: string })
      t.equal(error?.code, 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', `${owner} before metrics fails the boot`)
      t.match(error?.message, /'metrics'/, `${owner}: the error names metrics`)
    }
  })

t.test('load shedding registered before the hooks its answers carry fails the boot', async t => {
  const plugins = await pluginFiles()
  const config = testConfig()
  const app = Fastify(serverOptions(config, { logger: false }))
  t.teardown(() => app.close())
  app.register(plugins.get('request-id')!.plugin)
  app.register(plugins.get('load-shedding')!.plugin, { config })
  app.register(plugins.get('security')!.plugin, { config })
  await t.rejects(async () => { await app.ready() }, { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED' },
    'a shed answer would lack the security headers')
})

t.test('a plugin reading the registry without declaring it fails at boot too, instead of losing its metrics',
  async t => {
    const app = Fastify(serverOptions(testConfig(), { logger: false }))
    t.teardown(() => app.close())
    app.register(async function undeclared (fastify) { metricsOf(fastify) })
    await t.rejects(async () => { await app.ready() }, /metrics plugin is not registered/)
  })

t.test('in the app, every owner\'s metrics are on the registry', async t => {
  const { app } = await buildTestApp(t, {
    METRICS_API_KEY: METRICS_KEY,
    // Nothing listens on these loopback ports: the sources exist, and what they report is that they are down.
    REDIS_URL: 'redis://127.0.0.1:1',
    REDIS_CONNECT_TIMEOUT_MS: '100',
    AUTH_JWT_SECRET: undefined,
    AUTH_JWKS_URL: 'http://127.0.0.1:1/jwks.json'
  })
  const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_KEY}` } })
  t.equal(res.statusCode, 200)
  for (const [owner, names] of Object.entries(METRIC_OWNERS)) {
    for (const name of names) t.match(res.body, `# TYPE ${name} `, `${owner}: ${name}`)
  }
})

t.test('the app plugin boots on any instance made with serverOptions(), as fastify-cli registers a plugin', async t => {
  const config = testConfig()
  const server = Fastify(serverOptions(config, { logger: false }))
  t.teardown(() => server.close())
  await server.register(app, { config } satisfies AppOptions)
  const res = await server.inject('/health/live')
  t.equal(res.statusCode, 200)
  t.match(res.headers['x-request-id'], /^[\w-]{36}$/, 'the plugins hook the routes')
})
