// Methods over real HTTP: a known path with a method it does not serve is 405 METHOD_NOT_ALLOWED with the
// catalog body and `Allow` (learnt from the routes), OPTIONS answers 204 with `Allow`, an unknown path stays
// 404, and the CORS preflight keeps working when CORS_ORIGINS is set.
import t, { type Test } from 'tap'
import { faultService, faultUpstream, readResponse } from '../helpers/fault-upstream.ts'

const ORIGIN = 'https://app.example'

async function service (t: Test, env: Record<string, string> = {}) {
  const upstream = await faultUpstream(t)
  return await faultService(t, upstream.url, env)
}

const wrongMethods: Array<[string, string, string]> = [
  ['POST', '/api/users/profile', 'GET, HEAD, OPTIONS'],
  ['DELETE', '/api/users/profile', 'GET, HEAD, OPTIONS'],
  ['DELETE', '/request-console', 'OPTIONS, POST'],
  ['GET', '/request-console', 'OPTIONS, POST'],
  ['PUT', '/health/ready', 'GET, HEAD, OPTIONS']
]

t.test('a known path with a method it does not serve: 405 with Allow and the catalog body', async t => {
  const base = await service(t)
  for (const [method, path, allow] of wrongMethods) {
    const res = await fetch(`${base}${path}?q=1`, { method, headers: { 'accept-encoding': 'br, gzip' } })
    const { status, body } = await readResponse(t, res)
    t.equal(status, 405, `${method} ${path}`)
    t.equal(res.headers.get('allow'), allow)
    t.match(body,
      {
        statusCode: 405,
        code: 'METHOD_NOT_ALLOWED',
        error: 'Method Not Allowed',
        message: `Method ${method} is not allowed on ${path}; the Allow header lists those that are`
      })
  }
  const head = await fetch(`${base}/request-console`, { method: 'HEAD' })
  t.equal(head.status, 405, 'HEAD of a POST-only path')
  t.equal(head.headers.get('allow'), 'OPTIONS, POST')
})

t.test('GET routes serve HEAD, as Allow says', async t => {
  const base = await service(t)
  const res = await fetch(`${base}/health/live`, { method: 'HEAD' })
  t.equal(res.status, 200)
})

t.test('OPTIONS of a known path: 204 with Allow; of an unknown one, 404', async t => {
  const base = await service(t)
  for (const [path, allow] of [['/api/users/profile', 'GET, HEAD, OPTIONS'],
    ['/request-console', 'OPTIONS, POST']] as const) {
    const res = await fetch(`${base}${path}`, { method: 'OPTIONS' })
    t.equal(res.status, 204, path)
    t.equal(res.headers.get('allow'), allow)
    t.equal(await res.text(), '')
  }
  const unknown = await fetch(`${base}/api/users/nobody`, { method: 'OPTIONS' })
  t.equal((await readResponse(t, unknown)).status, 404)
})

t.test('an unknown path stays 404 NOT_FOUND whatever the method, without Allow', async t => {
  const base = await service(t)
  for (const method of ['GET', 'POST', 'DELETE']) {
    const res = await fetch(`${base}/api/users/profiles`, { method })
    const { status, body } = await readResponse(t, res)
    t.equal(status, 404)
    t.match(body, { code: 'NOT_FOUND' })
    t.equal(res.headers.get('allow'), null)
  }
})

t.test('a route that is off is unknown: the console without a key is 404 for every method', async t => {
  const base = await service(t, { CONSOLE_API_KEY: '' })
  for (const method of ['POST', 'DELETE']) {
    t.equal((await readResponse(t, await fetch(`${base}/request-console`, { method }))).status, 404)
  }
})

t.test('with CORS_ORIGINS: the preflight still works, with Allow; wrong methods still 405', async t => {
  const base = await service(t, { CORS_ORIGINS: ORIGIN })
  const preflight = await fetch(`${base}/request-console`, {
    method: 'OPTIONS',
    headers: {
      origin: ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, x-console-key'
    }
  })
  t.equal(preflight.status, 204)
  t.equal(preflight.headers.get('access-control-allow-origin'), ORIGIN)
  t.match(preflight.headers.get('access-control-allow-methods'), /POST/)
  t.match(preflight.headers.get('access-control-allow-headers'), /x-console-key/)
  t.equal(preflight.headers.get('allow'), 'OPTIONS, POST')
  const wrong = await fetch(`${base}/api/users/profile`, { method: 'POST', headers: { origin: ORIGIN } })
  t.equal((await readResponse(t, wrong)).status, 405)
  t.equal(wrong.headers.get('allow'), 'GET, HEAD, OPTIONS')
  t.equal(wrong.headers.get('access-control-allow-origin'), ORIGIN, 'a browser can read the 405')
})

t.test('a path under a wildcard route is no known path: an unknown docs file is 404, not 405 (issue 35, item 10)',
  async t => {
    const base = await service(t)
    const served = await fetch(`${base}/docs/static/index.html`)
    t.equal(served.status, 200, 'the docs\' files are served')
    await served.arrayBuffer()
    for (const method of ['GET', 'OPTIONS']) {
      const res = await fetch(`${base}/docs/static/no-such-file.js`, { method })
      const { status, body } = await readResponse(t, res)
      t.equal(status, 404, `${method} of an unknown file`)
      t.match(body, { statusCode: 404, code: 'NOT_FOUND' })
      t.equal(res.headers.get('allow'), null)
    }
    const head = await fetch(`${base}/docs/static/no-such-file.js`, { method: 'HEAD' })
    t.equal(head.status, 404, 'HEAD of an unknown file')
  })

t.test('with CORS_ORIGINS: OPTIONS of an unknown path is 404, as without CORS (issue 35, item 10)', async t => {
  const base = await service(t, { CORS_ORIGINS: ORIGIN })
  const preflight = { origin: ORIGIN, 'access-control-request-method': 'GET' }
  for (const headers of [{}, { origin: ORIGIN }, preflight]) {
    const res = await fetch(`${base}/nope`, { method: 'OPTIONS', headers })
    const { status, body } = await readResponse(t, res)
    t.equal(status, 404, `headers: ${Object.keys(headers).join(', ') || 'none'}`)
    t.match(body, { statusCode: 404, code: 'NOT_FOUND' })
    t.equal(res.headers.get('allow'), null)
  }
  const known = await fetch(`${base}/api/users/profile`, { method: 'OPTIONS', headers: preflight })
  t.equal(known.status, 204, 'a known path\'s preflight still passes')
  t.equal(known.headers.get('allow'), 'GET, HEAD, OPTIONS')
})
