// The docs' answers are built once: the OpenAPI document and Swagger UI's files are made and compressed at start,
// so a stranger's GET of them costs about what a refused token does (no compression per request: counted, not
// timed), with the same negotiation, Vary and a tag a 304 answers; DOCS=document serves the document alone,
// DOCS=off nothing.
import { createRequire, syncBuiltinESMExports } from 'node:module'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import { buildTestApp } from '../helpers/build-app.ts'

const BUNDLE = '/docs/static/swagger-ui-bundle.js'
// Every form of every compression node:zlib offers: callback, Sync, stream factory and class.
const COMPRESSING = /^(?:create)?(?:gzip|deflate|deflateRaw|brotliCompress|zstdCompress)(?:Sync)?$/iu

t.test('the document: the same bytes in every encoding, a tag, 304 on If-None-Match', async t => {
  const { app } = await buildTestApp(t)
  await app.ready()
  const document = JSON.stringify(app.swagger())
  const plain = await app.inject({ url: '/docs/json' })
  t.equal(plain.body, document, 'the document as generated')
  const etag = plain.headers.etag as string
  t.match(etag, /^W\/"[\w-]+"$/, 'a tag')
  const br = await app.inject({ url: '/docs/json', headers: { 'accept-encoding': 'br' } })
  t.equal(br.headers['content-encoding'], 'br')
  t.equal(brotliDecompressSync(br.rawPayload).toString(), document)
  const gzip = await app.inject({ url: '/docs/json', headers: { 'accept-encoding': 'x-gzip, deflate' } })
  t.equal(gzip.headers['content-encoding'], 'gzip', 'x-gzip read as gzip, as the compression plugin reads it')
  t.equal(gunzipSync(gzip.rawPayload).toString(), document)
  for (const res of [plain, br, gzip]) {
    t.equal(res.headers.vary, 'accept-encoding')
    t.equal(res.headers.etag, etag, 'one tag for the one content')
    t.equal(Number(res.headers['content-length']), res.rawPayload.length)
  }
  const garbage = await app.inject({ url: '/docs/json', headers: { 'accept-encoding': 'garbage;q=x, identity;q=0' } })
  t.equal(garbage.statusCode, 200)
  t.equal(garbage.body, document, 'an encoding nobody knows gets the bytes as they are')
  const yaml = await app.inject({ url: '/docs/yaml', headers: { 'accept-encoding': 'gzip' } })
  t.equal(gunzipSync(yaml.rawPayload).toString(), app.swagger({ yaml: true }))
  t.equal(yaml.headers['content-type'], 'application/x-yaml')
  const again = await app.inject({ url: '/docs/json', headers: { 'if-none-match': etag } })
  t.equal(again.statusCode, 304)
  t.equal(again.rawPayload.length, 0)
  const head = await app.inject({ method: 'HEAD', url: '/docs/json', headers: { 'accept-encoding': 'br' } })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-length'], br.headers['content-length'])
})

t.test('Swagger UI\'s files: served from memory, a path that is no file is 404 NOT_FOUND', async t => {
  const { app } = await buildTestApp(t)
  const bundle = await app.inject({ url: BUNDLE, headers: { 'accept-encoding': 'gzip' } })
  t.equal(bundle.statusCode, 200)
  t.equal(bundle.headers['content-encoding'], 'gzip')
  t.equal(bundle.headers['content-type'], 'application/javascript; charset=utf-8')
  t.equal(bundle.headers['cache-control'], 'public, max-age=0')
  t.ok(bundle.headers['last-modified'])
  const encoded = await app.inject({
    url: '/docs/static/swagger-ui-bundle%2Ejs', headers: { 'accept-encoding': 'gzip' }
  })
  t.same(encoded.rawPayload, bundle.rawPayload, 'a percent-encoded name is the same file')
  for (const url of ['/docs/static/nope.js', '/docs/static/../package.json', '/docs/static/%2e%2e/index.js']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 404, url)
    t.equal(res.json().code, 'NOT_FOUND')
  }
  const index = await app.inject({ url: '/docs/static/index.html' })
  t.equal(index.statusCode, 302, 'Swagger UI\'s own routes stay its own')
  t.equal((await app.inject({ url: '/docs/' })).statusCode, 200)
})

t.test('a public answer costs about what a refused token costs, not a compression', async t => {
  // Counted, not timed: every compressing function of node:zlib counts its calls, patched on the module object so
  // that CommonJS users (`@fastify/compress` requires it) see the counters as ES modules' named imports do.
  let compressions = 0
  const zlibModule = createRequire(import.meta.url)('node:zlib') as Record<string, unknown>
  // The stream factories are read-only (configurable): each is redefined, and its descriptor put back after.
  const originals = Object.keys(zlibModule)
    .filter(name => COMPRESSING.test(name) && typeof zlibModule[name] === 'function')
    .map(name => [name, Object.getOwnPropertyDescriptor(zlibModule, name)!] as const)
  for (const [name, descriptor] of originals) {
    const counted = new Proxy(descriptor.value as (...args: unknown[]) => unknown, {
      apply: (target, self, args) => { compressions++; return Reflect.apply(target, self, args) },
      construct: (target, args, newTarget) => { compressions++; return Reflect.construct(target, args, newTarget) }
    })
    Object.defineProperty(zlibModule, name, { ...descriptor, value: counted })
  }
  syncBuiltinESMExports()
  t.teardown(() => {
    for (const [name, descriptor] of originals) Object.defineProperty(zlibModule, name, descriptor)
    syncBuiltinESMExports()
  })
  // A fresh copy of the app's modules, so that those which bind a compressing function when loaded bind the counter.
  const { buildTestApp: buildCounted } =
    await t.mockImport<typeof import('../helpers/build-app.ts')>('../helpers/build-app.ts', {})
  const { app } = await buildCounted(t)
  await app.ready()
  const bundle = (await app.inject({ url: BUNDLE })).rawPayload
  const sources: Record<string, Buffer> = { [BUNDLE]: bundle, '/docs/json': Buffer.from(JSON.stringify(app.swagger())) }
  const decode = { gzip: gunzipSync, br: brotliDecompressSync }
  async function get (url: string, encoding: 'gzip' | 'br') {
    const res = await app.inject({ url, headers: { 'accept-encoding': encoding } })
    t.equal(res.headers['content-encoding'], encoding, `${url} in ${encoding}`)
    t.same(decode[encoding](res.rawPayload), sources[url], `${url} in ${encoding}: the same bytes`)
  }
  for (const url of Object.keys(sources)) for (const encoding of ['gzip', 'br'] as const) await get(url, encoding)
  const afterFirst = compressions
  t.ok(afterFirst > 0, 'the count sees the app\'s compressions')
  for (let i = 0; i < 20; i++) {
    for (const url of Object.keys(sources)) for (const encoding of ['gzip', 'br'] as const) await get(url, encoding)
  }
  t.equal(compressions, afterFirst, '20 more of each compressed nothing: each encoding was made once')
})

t.test('DOCS=document: the document without Swagger UI; DOCS=off: neither', async t => {
  const { app } = await buildTestApp(t, { DOCS: 'document' })
  t.equal((await app.inject({ url: '/docs/json' })).statusCode, 200)
  const yaml = await app.inject({ url: '/docs/yaml', headers: { 'accept-encoding': 'br' } })
  t.equal(yaml.headers['content-encoding'], 'br')
  for (const url of ['/docs', '/docs/', BUNDLE]) t.equal((await app.inject({ url })).statusCode, 404, url)
  const off = await buildTestApp(t, { DOCS: 'off' })
  for (const url of ['/docs', '/docs/json', '/docs/yaml', BUNDLE]) {
    t.equal((await off.app.inject({ url })).statusCode, 404, url)
  }
  t.ok(off.app.swagger().paths?.['/api/users/profile'], 'the document is still generated (npm run openapi)')
})
