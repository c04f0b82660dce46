// The Kubernetes manifests, checked as the API server would check them (the API's schemas, through
// kubernetes-models) and against the service itself: real probe routes, its port, its variables, its
// shutdown grace, and the memory its V8 flags and its RSS budget call for.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { parse, parseAllDocuments } from 'yaml'
import { ruleGroups } from '../../scripts/alert-rules.ts'
import { ConfigSchema, loadConfig, redisSentinels, sharedRedisConfigured } from '../../src/config.ts'
import { METRICS_PATH } from '../../src/plugins/app/metrics/path.ts'
import { buildTestApp, DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { ROOT } from '../helpers/dockerfile.ts'
import { startCommand } from '../../scripts/start-command.ts'

const DIR = join(ROOT, 'deploy/kubernetes')

interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string, labels?: Record<string, string> }
  [key: string]: unknown
}

/** Every YAML document of the folder, with the file it came from. */
const documents = readdirSync(DIR).filter(file => file.endsWith('.yaml')).sort().flatMap(file =>
  parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map(doc => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map(e => e.message).join('; ')}`)
    return { file, manifest: doc.toJS() as Manifest }
  }))

const kustomization = documents.find(d => d.manifest.kind === 'Kustomization')!.manifest as unknown as {
  resources: string[]
  images?: Array<{ name: string }>
}
const resources = documents.filter(d => d.manifest.kind !== 'Kustomization')
/** The Prometheus Operator's kinds: CRDs, which kubernetes-models does not know. */
const OPERATOR_API = 'monitoring.coreos.com/v1'
const builtIn = resources.filter(d => d.manifest.apiVersion !== OPERATOR_API)
const one = <T>(kind: string) => {
  const found = resources.filter(d => d.manifest.kind === kind)
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`)
  return found[0]!.manifest as unknown as T
}

// Only the fields read below; the schema validation covers the rest.
interface Probe { httpGet: { path: string, port: string | number } }
interface EnvVar { name: string, valueFrom?: { secretKeyRef?: { name: string, key: string, optional?: boolean } } }
interface Container {
  name: string
  image: string
  command?: string[]
  args?: string[]
  ports: Array<{ name: string, containerPort: number }>
  env: EnvVar[]
  envFrom: Array<{ configMapRef?: { name: string } }>
  startupProbe?: Probe
  readinessProbe: Probe
  livenessProbe: Probe
  lifecycle: { preStop: { sleep?: { seconds: number } } }
  resources: { requests: Record<string, string>, limits: Record<string, string> }
  securityContext: {
    allowPrivilegeEscalation: boolean, readOnlyRootFilesystem: boolean, capabilities: { drop: string[] }
  }
}
interface Deployment {
  metadata: { name: string }
  spec: {
    replicas: number
    selector: { matchLabels: Record<string, string> }
    template: {
      metadata: { labels: Record<string, string> }
      spec: {
        terminationGracePeriodSeconds: number
        securityContext: { runAsNonRoot: boolean, runAsUser: number, seccompProfile: { type: string } }
        containers: Container[]
      }
    }
  }
}
const deployment = one<Deployment>('Deployment')
const podAnnotations = (deployment.spec.template.metadata as { annotations?: Record<string, string> }).annotations ?? {}
const pod = deployment.spec.template.spec
const container = pod.containers[0]!
const configMap = one<{ metadata: { name: string }, data: Record<string, string> }>('ConfigMap')

/** Bytes of a Kubernetes quantity in MiB (`192Mi`, `1Gi`), or cores (`500m`, `1`). */
const mebibytes = (quantity: string) => {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity)
  if (match === null) throw new Error(`unexpected memory quantity ${quantity}`)
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1)
}
const cores = (quantity: string) => quantity.endsWith('m') ? Number(quantity.slice(0, -1)) / 1000 : Number(quantity)

t.test('kustomization.yaml lists every manifest of the folder', async t => {
  const files = [...new Set(resources.map(d => d.file))].sort()
  t.strictSame([...kustomization.resources].sort(), files)
  t.strictSame(kustomization.images?.map(image => image.name), [container.image],
    'its image entry is the Deployment\'s image')
})

/** The API's model of a manifest; kubernetes-models is laid out by apiVersion: kubernetes-models/apps/v1... */
async function model (manifest: Manifest) {
  type ModelClass = new (data: unknown) => { validate (): void }
  const module = await import(`kubernetes-models/${manifest.apiVersion}`) as Record<string, ModelClass>
  const Model = module[manifest.kind]
  if (Model === undefined) throw new Error(`no model for ${manifest.apiVersion} ${manifest.kind}`)
  return new Model(manifest)
}

t.test('every manifest is valid against the Kubernetes API schema of its kind', async t => {
  const kinds = resources.map(d => `${d.manifest.apiVersion} ${d.manifest.kind}`).sort()
  t.strictSame(kinds, ['apps/v1 Deployment', 'autoscaling/v2 HorizontalPodAutoscaler', `${OPERATOR_API} PrometheusRule`,
    `${OPERATOR_API} ServiceMonitor`, 'policy/v1 PodDisruptionBudget', 'v1 ConfigMap', 'v1 Service'])
  for (const { file, manifest } of builtIn) {
    const instance = await model(manifest)
    t.doesNotThrow(() => instance.validate(), `${file}: ${manifest.kind} ${manifest.metadata.name}`)
  }
  // The validator bites: a wrong type is refused.
  const broken = structuredClone(deployment) as unknown as Manifest & { spec: { replicas: unknown } }
  broken.spec.replicas = 'three'
  const instance = await model({ ...broken, apiVersion: 'apps/v1', kind: 'Deployment' })
  t.throws(() => instance.validate(), /replicas/)
})

t.test('selectors of the Service, HPA and PDB reach the Deployment\'s pods', async t => {
  const labels = deployment.spec.template.metadata.labels
  t.match(labels, deployment.spec.selector.matchLabels)
  const service =
    one<{ spec: { selector: Record<string, string>, ports: Array<{ targetPort: string | number }> } }>('Service')
  t.match(labels, service.spec.selector)
  const targeted = (port: string | number) => container.ports.some(c => c.name === port || c.containerPort === port)
  t.ok(service.spec.ports.every(p => targeted(p.targetPort)), 'the Service targets the container port')
  const pdb = one<{
    spec: {
      selector: { matchLabels: Record<string, string> },
      maxUnavailable?: number
    }
  }>('PodDisruptionBudget')
  t.match(labels, pdb.spec.selector.matchLabels)
  t.equal(pdb.spec.maxUnavailable, 1, 'drains take one pod at a time')
  const hpa = one<{
    spec: {
      scaleTargetRef: { apiVersion: string, kind: string, name: string },
      minReplicas: number,
      maxReplicas: number,
      metrics: Array<{
        type: string,
        resource?: { name: string, target: { type: string } }
      }>
    }
  }>('HorizontalPodAutoscaler')
  t.strictSame(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name })
  t.equal(hpa.spec.minReplicas, deployment.spec.replicas, 'never below the Deployment\'s replicas')
  t.ok(hpa.spec.maxReplicas > hpa.spec.minReplicas)
  t.match(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization' } } }],
    'scales on CPU')
})

t.test('3 replicas of the image\'s own command', async t => {
  t.equal(deployment.spec.replicas, 3)
  t.equal(pod.containers.length, 1)
  t.equal(container.command, undefined, 'no command override: the image\'s CMD (node, npm start\'s flags) runs')
  t.equal(container.args, undefined)
})

t.test('the probes ask real routes of the app, on its port', async t => {
  const expectedPort = Number(configMap.data.PORT ?? (ConfigSchema.properties.PORT as { default?: number }).default)
  t.strictSame(container.ports.map(p => p.containerPort), [expectedPort], 'the container port is the service\'s PORT')
  t.equal(container.readinessProbe.httpGet.path, '/health/ready')
  t.equal(container.livenessProbe.httpGet.path, '/health/live')
  const { app } = await buildTestApp(t)
  for (const probe of [container.startupProbe, container.readinessProbe, container.livenessProbe]) {
    if (probe === undefined) continue
    t.ok(container.ports.some(p => p.name === probe.httpGet.port || p.containerPort === probe.httpGet.port),
      `${probe.httpGet.path} on a container port`)
    const res = await app.inject({ method: 'GET', url: probe.httpGet.path })
    t.equal(res.statusCode, 200, `GET ${probe.httpGet.path} answers 200`)
  }
})

t.test('every variable named is one the service reads, and the ConfigMap\'s values are valid', async t => {
  const names = [...Object.keys(configMap.data), ...container.env.map(e => e.name)]
  const known = new Set(Object.keys(ConfigSchema.properties))
  for (const name of names) t.ok(known.has(name) || /^OTEL_[A-Z_]+$/.test(name), `${name} is in ConfigSchema or a standard OTEL_* variable`)
  t.strictSame(container.envFrom, [{ configMapRef: { name: configMap.metadata.name } }], 'the rest from the ConfigMap')
  t.ok('REDIS_URL' in configMap.data, 'the replicas share one Redis for the rate limits')
  // What the pod gets, with made-up values for the Secret's keys: the service accepts it.
  const config = loadConfig({
    ...configMap.data, PASSPORT_API_KEY: PASSPORT_KEY, DEALER_API_KEY: DEALER_KEY, AUTH_JWT_SECRET: JWT_SECRET
  })
  t.equal(config.HOST, '0.0.0.0', 'listens on the pod\'s address')
})

t.test('the keys come from one Secret, by name, never from the ConfigMap', async t => {
  const refs = container.env.map(e => ({ name: e.name, ref: e.valueFrom?.secretKeyRef }))
  t.ok(refs.every(r => r.ref !== undefined), 'every env entry is a secretKeyRef')
  t.equal(new Set(refs.map(r => r.ref?.name)).size, 1, 'one Secret')
  t.ok(refs.every(r => r.ref?.key === r.name), 'each key named as its variable')
  const optional = Object.fromEntries(refs.map(r => [r.name, r.ref?.optional === true]))
  t.strictSame(optional, {
    PASSPORT_API_KEY: false, DEALER_API_KEY: false, AUTH_JWT_SECRET: false, CONSOLE_API_KEY: true, METRICS_API_KEY: true
  })
  for (const key of Object.keys(optional)) t.notOk(key in configMap.data, `${key} is not in the ConfigMap`)
})

t.test('a stopping pod drains before SIGTERM and finishes its requests within the grace period', async t => {
  const pause = container.lifecycle.preStop.sleep?.seconds ?? 0
  t.ok(pause >= 3, 'a preStop pause of a few seconds while endpoints are removed')
  const config = loadConfig({
    ...configMap.data, PASSPORT_API_KEY: PASSPORT_KEY, DEALER_API_KEY: DEALER_KEY, AUTH_JWT_SECRET: JWT_SECRET
  })
  t.ok(pod.terminationGracePeriodSeconds > pause + config.SHUTDOWN_GRACE_MS / 1000,
    `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} > ` +
      `${pause} s pause + ${config.SHUTDOWN_GRACE_MS} ms grace`)
})

t.test('non-root, read-only, no privileges', async t => {
  t.match(pod.securityContext, { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } })
  t.strictSame(container.securityContext,
    { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
})

/**
 * Memory the process holds outside its V8 heap (the node binary, code, malloc's arena, Buffers), and the peak RSS the
 * bench holds the service to at every shape: both stated in docs/operations.md (Kubernetes) and docs/performance.md.
 */
const OFF_HEAP_MIB = 75
const RSS_BUDGET_MIB = 384
/** The pod the memory settings were chosen for by cost (docs/performance.md, Memory settings chosen by cost). */
const POD_LIMIT_MIB = 512

t.test('resources follow the V8 heap caps and the RSS budget', async t => {
  const flag = (name: string) => Number(startCommand().find(arg => arg.startsWith(`--${name}=`))?.split('=')[1])
  const oldSpace = flag('max-old-space-size')
  const semiSpace = flag('max-semi-space-size')
  t.ok(oldSpace > 0 && semiSpace > 0, 'npm start caps the heap')
  const limit = mebibytes(container.resources.limits.memory!)
  t.equal(limit, POD_LIMIT_MIB, 'the pod the flags were chosen for')
  t.ok(limit >= oldSpace + 3 * semiSpace + OFF_HEAP_MIB,
    `memory limit ${limit} MiB fits old space ${oldSpace} + young ${3 * semiSpace} + ${OFF_HEAP_MIB} off heap`)
  t.ok(limit >= RSS_BUDGET_MIB, `memory limit ${limit} MiB holds the ${RSS_BUDGET_MIB} MiB peak RSS budget`)
  const request = mebibytes(container.resources.requests.memory!)
  t.equal(request, RSS_BUDGET_MIB, 'the peak RSS budget requested: what the bench holds the service to')
  const cpuRequest = cores(container.resources.requests.cpu!)
  t.ok(cpuRequest > 0 && cpuRequest <= cores(container.resources.limits.cpu!), 'CPU requested, within its limit')
})

// The fields of the Operator's CRDs (monitoring.coreos.com/v1) these manifests use, as the CRDs define them;
// anything else is refused, so a misspelt field fails here rather than being dropped by the API server.
const Labels = Type.Record(Type.String(), Type.String())
const Metadata = Type.Object({ name: Type.String({ minLength: 1 }), labels: Labels }, { additionalProperties: false })
const Duration = Type.String({ pattern: '^(\\d+(ms|s|m|h|d))+$' })
const ServiceMonitorSchema = Type.Object({
  apiVersion: Type.Literal(OPERATOR_API),
  kind: Type.Literal('ServiceMonitor'),
  metadata: Metadata,
  spec: Type.Object({
    selector: Type.Object({ matchLabels: Labels }, { additionalProperties: false }),
    endpoints: Type.Array(Type.Object({
      port: Type.String({ minLength: 1 }),
      path: Type.String({ pattern: '^/' }),
      interval: Duration,
      scrapeTimeout: Type.Optional(Duration),
      authorization: Type.Object({
        type: Type.Literal('Bearer'),
        credentials: Type.Object(
          { name: Type.String({ minLength: 1 }), key: Type.String({ minLength: 1 }) }, { additionalProperties: false }
        )
      }, { additionalProperties: false })
    }, { additionalProperties: false }), { minItems: 1 })
  }, { additionalProperties: false })
}, { additionalProperties: false })
const PrometheusRuleSchema = Type.Object({
  apiVersion: Type.Literal(OPERATOR_API),
  kind: Type.Literal('PrometheusRule'),
  metadata: Metadata,
  spec: Type.Object({
    groups: Type.Array(Type.Object({
      name: Type.String({ minLength: 1 }),
      rules: Type.Array(Type.Union([
        Type.Object({ record: Type.String(), expr: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        Type.Object({
          alert: Type.String(),
          expr: Type.String({ minLength: 1 }),
          for: Type.Optional(Duration),
          labels: Type.Optional(Labels),
          annotations: Type.Optional(Labels)
        }, { additionalProperties: false })
      ]), { minItems: 1 })
    }, { additionalProperties: false }), { minItems: 1 })
  }, { additionalProperties: false })
}, { additionalProperties: false })

interface ServiceMonitor {
  metadata: { labels: Record<string, string> }
  spec: {
    selector: { matchLabels: Record<string, string> }
    endpoints: Array<{
      port: string
      path: string
      interval: string
      scrapeTimeout?: string
      authorization: { credentials: { name: string, key: string } }
    }>
  }
}
const serviceMonitor = one<ServiceMonitor>('ServiceMonitor')

t.test('the Operator\'s resources have the shape of their CRDs', async t => {
  const checks = { ServiceMonitor: Compile(ServiceMonitorSchema), PrometheusRule: Compile(PrometheusRuleSchema) }
  for (const [kind, check] of Object.entries(checks)) {
    const manifest = one<unknown>(kind)
    t.ok(check.Check(manifest),
      `${kind}: ${[...check.Errors(manifest)].map(e => `${e.instancePath} ${e.message}`).join('; ')}`)
  }
  // The check bites: a misspelt field and a wrong type are refused.
  const misspelt = structuredClone(serviceMonitor) as unknown as { spec: { endpoints: Array<Record<string, unknown>> } }
  misspelt.spec.endpoints[0]!.bearerTokenSecrett = {}
  t.notOk(checks.ServiceMonitor.Check(misspelt))
  const wrong =
    structuredClone(one<{ spec: { groups: Array<{ rules: Array<Record<string, unknown>> }> } }>('PrometheusRule'))
  wrong.spec.groups[0]!.rules[0]!.expr = 42
  t.notOk(checks.PrometheusRule.Check(wrong))
})

t.test('the PrometheusRule holds every rule group of the alerts', async t => {
  const rule = one<{ spec: { groups: Array<{ name: string }> } }>('PrometheusRule')
  t.strictSame(rule.spec.groups.map(g => g.name), ruleGroups.map(g => g.name))
})

t.test('the ServiceMonitor scrapes the Service\'s pods with the metrics key of the pods\' Secret', async t => {
  const service = one<{
    metadata: { labels: Record<string, string> },
    spec: { ports: Array<{ name: string }> }
  }>('Service')
  t.match(service.metadata.labels, serviceMonitor.spec.selector.matchLabels, 'it selects the Service')
  const [endpoint] = serviceMonitor.spec.endpoints
  t.ok(service.spec.ports.some(port => port.name === endpoint!.port),
    `port ${endpoint!.port} is a named port of the Service`)
  t.equal(endpoint!.path, METRICS_PATH)
  const metricsKey = container.env.find(e => e.name === 'METRICS_API_KEY')?.valueFrom?.secretKeyRef
  t.strictSame(endpoint!.authorization.credentials, { name: metricsKey?.name, key: metricsKey?.key },
    'the key the pods read')

  // What the scrape gets from the service with the key (test/plugins/metrics.test.ts: 401 without).
  const key = 'metrics-key-for-the-manifest-test'
  const { app } = await buildTestApp(t, { METRICS_API_KEY: key })
  t.equal((await app.inject({ url: endpoint!.path, headers: { authorization: `Bearer ${key}` } })).statusCode, 200)
})

t.test('the pods\' scrape annotations name the metrics port and path', async t => {
  t.equal(podAnnotations['prometheus.io/scrape'], 'true')
  t.strictSame(container.ports.map(p => String(p.containerPort)), [podAnnotations['prometheus.io/port']],
    'the container port')
  t.equal(podAnnotations['prometheus.io/path'], METRICS_PATH)
})

interface PatchOperation { op: 'add' | 'remove' | 'replace', path: string, value?: unknown }

/** RFC 6902's add, remove and replace, the operations the overlay uses, on a copy of `document`. */
function applyJsonPatch<T> (document: T, operations: PatchOperation[]): T {
  const patched = structuredClone(document)
  for (const { op, path, value } of operations) {
    const tokens = path.split('/').slice(1).map(token => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    const last = tokens.pop()!
    let parent: unknown = patched
    for (const token of tokens) parent = (parent as Record<string, unknown>)[token]
    if (parent === undefined) throw new Error(`${path}: no such parent`)
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last)
      parent.splice(index, op === 'add' ? 0 : 1, ...(op === 'remove' ? [] : [value]))
      continue
    }
    const object = parent as Record<string, unknown>
    if (op !== 'add' && !(last in object)) throw new Error(`${path}: nothing to ${op}`)
    if (op === 'remove') delete object[last]
    else object[last] = value
  }
  return patched
}

const SENTINEL_DIR = join(ROOT, 'deploy/kubernetes-sentinel')

t.test('the Sentinel variant (deploy/kubernetes-sentinel): the manifests patched, valid, REDIS_SENTINELS in the ' +
  'ConfigMap, passwords from the Secret', async t => {
  const overlay = parse(readFileSync(join(SENTINEL_DIR, 'kustomization.yaml'), 'utf8')) as {
    resources: string[], patches: Array<{ path: string, target: { kind: string, name: string } }>
  }
  t.strictSame(overlay.resources, ['../kubernetes'], 'an overlay of the manifests above')
  const byName = new Map(resources.map(({ manifest }) => [`${manifest.kind}/${manifest.metadata.name}`, manifest]))
  for (const { path, target } of overlay.patches) {
    const name = `${target.kind}/${target.name}`
    const manifest = byName.get(name)
    t.ok(manifest !== undefined, `${path} patches ${name}, one of the manifests`)
    if (manifest === undefined) continue
    const operations = parse(readFileSync(join(SENTINEL_DIR, path), 'utf8')) as PatchOperation[]
    byName.set(name, applyJsonPatch(manifest, operations))
  }
  const patchedMap = byName.get(`ConfigMap/${configMap.metadata.name}`) as unknown as typeof configMap
  const patchedDeployment = byName.get(`Deployment/${deployment.metadata.name}`) as unknown as Deployment
  for (const manifest of [patchedMap, patchedDeployment] as unknown as Manifest[]) {
    const instance = await model(manifest)
    t.doesNotThrow(() => instance.validate(), `${manifest.kind} still valid against the API schema`)
  }

  t.notOk('REDIS_URL' in patchedMap.data, 'no REDIS_URL in the ConfigMap: the Sentinels name the primary')
  const patchedContainer = patchedDeployment.spec.template.spec.containers[0]!
  const known = new Set(Object.keys(ConfigSchema.properties))
  for (const name of [...Object.keys(patchedMap.data), ...patchedContainer.env.map(e => e.name)]) {
    t.ok(known.has(name) || /^OTEL_[A-Z_]+$/.test(name), `${name} is in ConfigSchema or a standard OTEL_* variable`)
  }
  const refs = patchedContainer.env.map(e => ({ name: e.name, ref: e.valueFrom?.secretKeyRef }))
  t.ok(refs.every(r => r.ref?.name === 'dealer-profile-bff-keys' && r.ref.key === r.name),
    'every env entry a key of the one Secret, named as its variable')
  t.match(refs.filter(r => r.name.startsWith('REDIS_')), [
    { name: 'REDIS_SENTINEL_PASSWORD', ref: { optional: true } }, { name: 'REDIS_URL', ref: { optional: true } }
  ], 'the Sentinels\' password and the primary\'s (REDIS_URL) from the Secret, both optional')
  const secrets = { PASSPORT_API_KEY: PASSPORT_KEY, DEALER_API_KEY: DEALER_KEY, AUTH_JWT_SECRET: JWT_SECRET }
  for (const extra of [{}, { REDIS_SENTINEL_PASSWORD: 'sentinel-password', REDIS_URL: 'rediss://:pw@primary/0' }]) {
    const config = loadConfig({ ...patchedMap.data, ...secrets, ...extra })
    t.ok(sharedRedisConfigured(config), `the pod gets a shared Redis (Secret keys: ${Object.keys(extra).join(', ')})`)
    t.equal(redisSentinels(config.REDIS_SENTINELS!).length, 3, 'three Sentinels')
  }

  // kubectl, where installed (not needed in CI): its own rendering of the overlay is the one checked above.
  const kubectl = ['/usr/local/bin/kubectl', '/usr/bin/kubectl'].find(path => existsSync(path))
  if (kubectl === undefined) return
  const rendered = execFileSync(kubectl, ['kustomize', SENTINEL_DIR], { encoding: 'utf8', timeout: 30_000 })
  const built = new Map(parseAllDocuments(rendered).map(doc => doc.toJS() as Manifest)
    .map(manifest => [`${manifest.kind}/${manifest.metadata.name}`, manifest]))
  const builtMap = built.get(`ConfigMap/${configMap.metadata.name}`) as unknown as typeof configMap
  const builtDeployment = built.get(`Deployment/${deployment.metadata.name}`) as unknown as Deployment
  t.same(builtMap.data, patchedMap.data, 'kubectl kustomize: the same ConfigMap')
  t.same(builtDeployment.spec.template.spec.containers[0]!.env, patchedContainer.env,
    'kubectl kustomize: the same variables from the Secret')
})
