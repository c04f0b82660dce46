// Every error code a route can answer is in the document, at its status, with the ErrorBody schema;
// every documented error example is exactly an ErrorBody of that status and a code of the catalog.
import t from 'tap'
import { Compile } from 'typebox/compile'
import { ErrorBody } from '../../schemas/errors.ts'
import * as catalog from '../../src/errors.ts'
import { routeModules } from '../../src/routes/registry.ts'
import { buildTestApp, CONSOLE_KEY } from '../helpers/build-app.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'

type Json = Record<string, any>

/** Each catalog code and its status, read from the catalog's own constructors. */
const statusOf = new Map<string, number>()
for (const value of Object.values(catalog)) {
  // The error classes; the catalog's helper functions are no constructors of errors.
  if (typeof value !== 'function' || !(value.prototype instanceof Error)) continue
  const error = new (value as new (...args: string[]) => { code: string, statusCode: number })('x', 'y')
  statusOf.set(error.code, error.statusCode)
}

/** What each route answers besides success (docs/api.md), as its module declares it in the route registry. */
const answers: Record<string, readonly string[]> = Object.assign({}, ...routeModules.map(route => route.errorCodes))
/** Catalog codes no documented route answers, and why. */
const repliedByNoRoute: Record<string, string> = {
  NOT_FOUND: 'the answer to a path that is not a route',
  METHOD_NOT_ALLOWED: 'the answer to a route\'s path with a method no route serves there (described ' +
    'in the document\'s info)',
  REQUEST_TIMEOUT: 'answered before routing: the request did not arrive within the server timeouts',
  HEADERS_TOO_LARGE: 'answered before routing: the headers overflow what Node parses'
}

t.test('the table covers the whole catalog', async t => {
  t.same([...statusOf.keys()].sort(), [...catalog.errorCodes].sort(), 'every code has a constructor')
  const placed = new Set([...Object.values(answers).flat(), ...Object.keys(repliedByNoRoute)])
  for (const code of catalog.errorCodes) t.ok(placed.has(code), `${code} is answered by a route or explained`)
})

t.test('each route documents every code it answers', async t => {
  const { app } = await buildTestApp(t)
  const doc: Json = (await app.inject('/docs/json')).json()
  for (const [route, codes] of Object.entries(answers)) {
    const [method, path] = route.split(' ') as [string, string]
    const op = doc.paths[path]?.[method.toLowerCase()]
    if (op === undefined) {
      t.fail(`${route} is not documented`)
      continue
    }
    for (const code of codes) {
      const status = String(statusOf.get(code))
      const media = op.responses[status]?.content?.['application/json']
      t.equal(media?.schema?.$ref, '#/components/schemas/ErrorBody', `${route} documents ${status} for ${code}`)
      t.ok(media?.examples !== undefined && code in media.examples, `${route} has an example of ${code}`)
    }
  }
})

t.test('every documented error example is an ErrorBody of its status with a catalog code', async t => {
  const { app } = await buildTestApp(t)
  const doc: Json = (await app.inject('/docs/json')).json()
  const check = Compile(ErrorBody)
  let seen = 0
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        if (Number(status) < 400) continue
        t.ok(response.description, `${method} ${path} ${status} is described`)
        for (const [name,
          example] of Object.entries((response.content?.['application/json']?.examples ?? {}) as Json)) {
          seen++
          const where = `${method} ${path} ${status} ${name}`
          t.ok(check.Check(example.value), `${where} is an ErrorBody`)
          t.equal(example.value.code, name, `${where} is named by its code`)
          t.equal(String(example.value.statusCode), status, `${where} has the status it is documented under`)
          t.equal(statusOf.get(name), Number(status), `${where} is the catalog's status for the code`)
        }
      }
    }
  }
  t.ok(seen >= answers['POST /request-console']!.length, 'the console documents an example per error')
})

t.test('the 401 of the console names the header to send', async t => {
  const { app } = await buildTestApp(t)
  const doc: Json = (await app.inject('/docs/json')).json()
  t.ok(doc.paths['/request-console'].post.responses['401'].headers?.['www-authenticate'])
})

t.test('the catalog holds every code, and every listed detail, in every language', async t => {
  const cyrillic = /[а-яё]/i
  for (const code of catalog.errorCodes) {
    const messages = catalog.messagesOf(code)
    t.ok(messages, `${code} is in the catalog`)
    for (const language of catalog.languages) t.type(messages?.[language], 'function', `${code} has ${language}`)
  }
  for (const [code, texts] of Object.entries(catalog.details)) {
    for (const text of texts) {
      for (const language of catalog.languages) t.ok(text[language].length > 0, `${code} "${text.en}" has ${language}`)
      t.match(text.ru, cyrillic, `${code} "${text.en}" is written in Russian`)
      t.notMatch(text.en, cyrillic, `${code} "${text.en}" is written in English`)
    }
  }
})

t.test('every Russian message is in Cyrillic and says something other than the English', async t => {
  // Arguments of any shape: only the words around them are checked here (test/plugins/errors.test.ts has each).
  const args = ['GET', '/x']
  for (const code of catalog.errorCodes) {
    const messages = catalog.messagesOf(code) as Record<catalog.Language, (...args: unknown[]) => string>
    const ru = messages.ru(...args)
    t.match(ru, /[а-яё]/i, `${code}: ${ru}`)
    t.not(ru, messages.en(...args), `${code} is translated`)
  }
})

/** Every way a request can earn an error whose message has a free detail, as an app or an operator sends it. */
const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const consoleCall = (body: string, headers: Record<string, string> = {}) => ({
  method: 'POST' as const,
  url: '/request-console',
  headers: { 'content-type': 'application/json', 'x-console-key': CONSOLE_KEY, ...headers },
  payload: body
})
interface Refusal { method?: 'GET' | 'POST', url: string, headers?: Record<string, string>, payload?: string }
const refusals: Record<string, Refusal> = {
  'a malformed x-app-version': { url: '/api/users/profile', headers: { 'x-app-version': 'v2.14' } },
  'no bearer token': { url: '/api/users/profile' },
  'a malformed token': { url: '/api/users/profile', headers: { authorization: 'Bearer not-a-jwt' } },
  'an expired token': {
    url: '/api/users/profile', headers: bearer(hs256(claimsFor(undefined, { iat: 1, exp: 2 })))
  },
  'a token of another secret': {
    url: '/api/users/profile', headers: bearer(hs256(claimsFor(), 'another-secret-of-thirty-two-characters!'))
  },
  'a token without the client claims': { url: '/api/users/profile', headers: bearer(hs256({ sub: 'x', exp: 2e9 })) },
  'no console key': { ...consoleCall('{}', { 'x-console-key': '' }) },
  'a console body that is not JSON': consoleCall('{"operation":'),
  'an empty console body': consoleCall(''),
  'a console body without its operation': consoleCall('{"params":{}}'),
  'an unknown operation': consoleCall('{"operation":"passport.drop_tables","params":{}}'),
  'an extra field': consoleCall('{"operation":"dealer.discount","params":{"uid_client":' +
    '"3E7A2C55-91B0-4F6D-B2C8-0A4D5E6F7081"},"debug":true}'),
  'a malformed UUID': consoleCall('{"operation":"dealer.discount","params":{"uid_client":"nope"}}'),
  'metrics without their key': { url: '/metrics' }
}

t.test('every detail the service sends is in Russian too, never only the generic text', async t => {
  const { app } = await buildTestApp(t, { METRICS_API_KEY: METRICS_KEY })
  const generic = new Map(Object.entries(catalog.details).map(([code, texts]) => [code, texts[0]!]))
  for (const [what, request] of Object.entries(refusals)) {
    const said: Partial<Record<catalog.Language, Json>> = {}
    for (const language of catalog.languages) {
      const res = await app.inject({ ...request, headers: { ...request.headers, 'accept-language': language } })
      said[language] = res.json()
      t.equal(res.headers['content-language'], language, `${what}: answered in ${language}`)
    }
    const { en, ru } = said as Record<catalog.Language, Json>
    t.ok(en.statusCode >= 400 && en.statusCode < 500, `${what}: refused (${en.statusCode} ${en.code})`)
    t.equal(ru.code, en.code, `${what}: the same code in both`)
    t.match(ru.message, /[а-яё]/i, `${what}: "${ru.message}" is Russian`)
    t.notMatch(en.message, /[а-яё]/i, `${what}: "${en.message}" is English`)
    const fallback = generic.get(en.code)
    if (fallback !== undefined && en.message !== fallback.en) {
      t.not(ru.message, fallback.ru, `${what}: "${en.message}" has its own Russian text, not the generic one`)
    }
  }
})
