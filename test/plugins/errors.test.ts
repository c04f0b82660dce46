import t, { type Test } from 'tap'
import Fastify, { type FastifyError } from 'fastify'
import { Type } from 'typebox'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import errors from '../../src/plugins/app/errors/index.ts'
import { languageOf, languagePrefix, toErrorBody } from '../../src/error-body.ts'
import { serverOptions } from '../../src/app.ts'
import requestIdPlugin from '../../src/plugins/app/request-id/index.ts'
import routeMethods from '../../src/plugins/app/route-methods.ts'
import {
  AppUpdateRequiredError, BadRequestError, ClientNotFoundError, details, errorCodes, HeadersTooLargeError,
  InternalError, languages, MethodNotAllowedError, NotFoundError, PayloadTooLargeError, RateLimitedError,
  RequestTimeoutError, ServiceUnavailableError, SigningKeyPendingError, UnauthorizedError,
  UnsupportedMediaTypeError, UpstreamBadResponseError, UpstreamTimeoutError, UpstreamUnavailableError, withReason,
  type Language, type Texts
} from '../../src/errors.ts'
import { PETROVA } from '../../schemas/fixtures.ts'
import { buildTestApp, CONSOLE_KEY, testConfig } from '../helpers/build-app.ts'

// A small app with the real error handler and a few routes that fail in each way a route can.
async function build (t: Test) {
  // The service's own server options, with a body limit small enough to exceed in a test.
  const app = Fastify({ ...serverOptions(testConfig(), { logger: false }), bodyLimit: 64 })
  app.setValidatorCompiler(TypeBoxValidatorCompiler)
  await app.register(requestIdPlugin)
  await app.register(routeMethods)
  await app.register(errors)
  app.get('/boom', async () => { throw new Error('db password is hunter2 at /srv/app.ts:12') })
  app.get('/not-found', async () => { throw new ClientNotFoundError() })
  app.get('/upstream',
    async () => {
      throw new UpstreamBadResponseError('passport.get_client',
        { cause: new Error('socket to 10.0.0.5') })
    })
  app.post('/body',
    { schema: { body: Type.Object({ uid: Type.String({ format: 'uuid' }) }, { additionalProperties: false }) } },
    async () => ({ ok: true }))
  t.teardown(() => app.close())
  return app
}

const isErrorBody = (t: Test, body: Record<string, unknown>, statusCode: number, code: string) => {
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'], 'exactly the four fields')
  t.equal(body.statusCode, statusCode)
  t.equal(body.code, code)
  t.type(body.message, 'string')
}

t.test('an unexpected 500 says nothing of its internals', async t => {
  const app = await build(t)
  const res = await app.inject('/boom')
  t.equal(res.statusCode, 500)
  isErrorBody(t, res.json(), 500, 'INTERNAL_ERROR')
  t.notMatch(res.body, /hunter2|srv|stack|at /)
  t.ok(res.headers['x-request-id'])
})

t.test('catalog errors keep their code and status', async t => {
  const app = await build(t)
  const res = await app.inject('/not-found')
  isErrorBody(t, res.json(), 404, 'CLIENT_NOT_FOUND')
  const up = await app.inject('/upstream')
  t.equal(up.statusCode, 502)
  isErrorBody(t, up.json(), 502, 'UPSTREAM_BAD_RESPONSE')
  t.notMatch(up.body, /10\.0\.0\.5|socket/, 'the cause stays in the logs')
})

t.test('an unknown route is a 404 NOT_FOUND without its query', async t => {
  const app = await build(t)
  const res = await app.inject('/nowhere?token=secret')
  isErrorBody(t, res.json(), 404, 'NOT_FOUND')
  t.notMatch(res.body, /secret/)
})

t.test('validation failures are 400 BAD_REQUEST naming the field', async t => {
  const app = await build(t)
  const bad = await app.inject({ method: 'POST', url: '/body', payload: { uid: 'nope' } })
  isErrorBody(t, bad.json(), 400, 'BAD_REQUEST')
  t.match(bad.json().message, /uid/)
  const extra = await app.inject({
    method: 'POST',
    url: '/body',
    payload: { uid: '9F1C3B2A-6D4E-4C1B-8A7F-2E5D6C7B8A90', admin: true }
  })
  isErrorBody(t, extra.json(), 400, 'BAD_REQUEST')
})

t.test('body parser failures speak our codes', async t => {
  const app = await build(t)
  const json = await app.inject({
    method: 'POST',
    url: '/body',
    headers: { 'content-type': 'application/json' },
    payload: '{"uid":'
  })
  isErrorBody(t, json.json(), 400, 'BAD_REQUEST')
  const type = await app.inject({
    method: 'POST',
    url: '/body',
    headers: { 'content-type': 'text/csv' },
    payload: 'a,b'
  })
  isErrorBody(t, type.json(), 415, 'UNSUPPORTED_MEDIA_TYPE')
  const large = await app.inject({ method: 'POST', url: '/body', payload: { uid: 'x'.repeat(200) } })
  isErrorBody(t, large.json(), 413, 'PAYLOAD_TOO_LARGE')
})

t.test('x-request-id: a well-formed inbound id is kept, anything else replaced', async t => {
  const app = await build(t)
  const kept = await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'trace-42.a:b' } })
  t.equal(kept.headers['x-request-id'], 'trace-42.a:b')
  const replaced = await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'x'.repeat(200) } })
  t.match(replaced.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  const error = await app.inject('/boom')
  t.match(error.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'errors carry it too')
})

t.test('toErrorBody maps statuses it does not know by name, and never passes a 5xx message', async t => {
  const teapot = toErrorBody(Object.assign(new Error('short and stout'), { statusCode: 418, code: 'X' }))
  t.same(teapot, { statusCode: 418, code: 'I_M_A_TEAPOT', error: "I'm a Teapot", message: 'short and stout' })
  const limited =
    toErrorBody(Object.assign(new Error('Rate limit exceeded, retry in 1 minute'),
      { statusCode: 429, code: 'FST_ERR_RATE_LIMIT' }))
  t.equal(limited.code, 'RATE_LIMITED')
  const gateway =
    toErrorBody(Object.assign(new Error('connect ECONNREFUSED 10.1.1.1'), { statusCode: 502, code: 'UND_ERR' }))
  t.same(gateway,
    { statusCode: 500, code: 'INTERNAL_ERROR', error: 'Internal Server Error', message: 'Internal server error' })
})

t.test('reason: only a refused bearer token has one, in every language; an upstream failure\'s own reason never ' +
  'reaches the body', async t => {
  const expired = withReason(new UnauthorizedError('The bearer token has expired'), 'token_expired')
  for (const language of languages) t.equal(toErrorBody(expired, language).reason, 'token_expired', language)
  t.equal(toErrorBody(new SigningKeyPendingError('3')).reason, 'signing_key_pending')
  t.equal(toErrorBody(withReason(new RateLimitedError(7), 'token_invalid')).reason, 'token_invalid')
  const tooDeep = Object.assign(new UpstreamBadResponseError('dealer.client'), { reason: 'too_deep' })
  t.notOk('reason' in toErrorBody(tooDeep), 'the upstream failure\'s reason is for logs only')
  t.notOk('reason' in toErrorBody(new UnauthorizedError('Send the console key in the x-console-key header')),
    'an operator key has none')
})

// Languages: every catalog code over real HTTP in Russian and English, and the choice by Accept-Language.

/** What each error says in each language: the texts the app shows, written out here, not read from the catalog. */
const SAID: Array<[FastifyError, Texts]> = [
  [new BadRequestError('The request body is not valid JSON'),
    { en: 'The request body is not valid JSON', ru: 'Тело запроса — некорректный JSON' }],
  [new UnauthorizedError('The bearer token has expired'),
    { en: 'The bearer token has expired', ru: 'Срок действия токена истёк, войдите заново' }],
  [new NotFoundError('GET', '/nowhere'), { en: 'Route GET /nowhere not found', ru: 'Адрес GET /nowhere не найден' }],
  [new MethodNotAllowedError('POST', '/api/users/profile'), {
    en: 'Method POST is not allowed on /api/users/profile; the Allow header lists those that are',
    ru: 'Метод POST недоступен для /api/users/profile; допустимые методы — в заголовке Allow'
  }],
  [new ClientNotFoundError(),
    { en: 'The client is not known to the passport service', ru: 'Клиент не найден в сервисе паспортов' }],
  [new PayloadTooLargeError(), { en: 'The request body is too large', ru: 'Тело запроса слишком большое' }],
  [new UnsupportedMediaTypeError(), {
    en: 'The request content type is not supported; send application/json',
    ru: 'Этот тип содержимого не поддерживается, отправьте application/json'
  }],
  [new RequestTimeoutError(),
    { en: 'The request was not received in time', ru: 'Запрос не получен полностью за отведённое время' }],
  [new HeadersTooLargeError(), { en: 'The request headers are too large', ru: 'Заголовки запроса слишком большие' }],
  [new RateLimitedError(1),
    { en: 'Too many requests; retry in 1 second', ru: 'Слишком много запросов, повторите через 1 секунду' }],
  [new RateLimitedError(42),
    { en: 'Too many requests; retry in 42 seconds', ru: 'Слишком много запросов, повторите через 42 секунды' }],
  [new RateLimitedError(15),
    { en: 'Too many requests; retry in 15 seconds', ru: 'Слишком много запросов, повторите через 15 секунд' }],
  [new AppUpdateRequiredError('2.3.0'), {
    en: 'This version of the app is no longer supported; update the app to version 2.3.0 or later',
    ru: 'Эта версия приложения больше не поддерживается. Обновите приложение до версии 2.3.0 или новее.'
  }],
  [new InternalError(), { en: 'Internal server error', ru: 'Внутренняя ошибка сервиса' }],
  [new ServiceUnavailableError('The service is overloaded; retry later'),
    { en: 'The service is overloaded; retry later', ru: 'Сервис перегружен, повторите попытку позже' }],
  [new SigningKeyPendingError('1'), {
    en: 'The key that signed the bearer token is not known yet; retry in 1 second',
    ru: 'Ключ, которым подписан токен доступа, ещё не получен, повторите через 1 секунду'
  }],
  [new SigningKeyPendingError('3'), {
    en: 'The key that signed the bearer token is not known yet; retry in 3 seconds',
    ru: 'Ключ, которым подписан токен доступа, ещё не получен, повторите через 3 секунды'
  }],
  [new UpstreamTimeoutError('passport.get_client'), {
    en: 'Upstream operation passport.get_client did not answer in time',
    ru: 'Внешний сервис не ответил вовремя (операция passport.get_client)'
  }],
  [new UpstreamBadResponseError('passport.get_client', { cause: new Error('socket') }), {
    en: 'Upstream operation passport.get_client gave an unusable answer',
    ru: 'Внешний сервис вернул непригодный ответ (операция passport.get_client)'
  }],
  [new UpstreamUnavailableError('dealer.discount'), {
    en: 'Upstream operation dealer.discount is unavailable',
    ru: 'Внешний сервис недоступен (операция dealer.discount)'
  }]
]

/** A server on a free port whose route `/said/<i>` throws SAID[i] (and `/detail/<code>/<i>` a listed detail). */
async function listening (t: Test, defaultLanguage?: Language): Promise<string> {
  const app = Fastify({ logger: false })
  await app.register(routeMethods)
  await app.register(errors, defaultLanguage === undefined ? {} : { defaultLanguage })
  app.get<{ Params: { i: string } }>('/said/:i', async request => { throw SAID[Number(request.params.i)]![0] })
  const thrown = {
    BAD_REQUEST: BadRequestError, UNAUTHORIZED: UnauthorizedError, SERVICE_UNAVAILABLE: ServiceUnavailableError
  }
  app.get<{ Params: { code: keyof typeof thrown, i: string } }>('/detail/:code/:i', async request => {
    const { code, i } = request.params
    throw new (thrown[code] as new (detail: string) => FastifyError)(details[code][Number(i)]!.en)
  })
  t.teardown(() => app.close())
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

async function get (url: string, acceptLanguage?: string) {
  const res = await fetch(url, { headers: acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage } })
  return { status: res.status, headers: res.headers, body: await res.json() as Record<string, unknown> }
}

t.test('every catalog code answers in Russian and in English over HTTP, its code unchanged', async t => {
  t.same(new Set(SAID.map(([error]) => error.code)), new Set(errorCodes), 'every code is here')
  const origin = await listening(t)
  for (const [i, [error, texts]] of SAID.entries()) {
    for (const language of languages) {
      const res = await get(`${origin}/said/${i}`, language)
      t.equal(res.status, error.statusCode, `${error.code} ${language}: its status`)
      const { statusCode, code } = error
      const extra = error instanceof AppUpdateRequiredError
        ? { min_app_version: '2.3.0' }
        : error instanceof SigningKeyPendingError ? { reason: 'signing_key_pending' } : {}
      const expected = { statusCode, code, error: res.body.error, message: texts[language], ...extra }
      t.same(res.body, expected, `${error.code} in ${language}`)
      t.equal(res.headers.get('content-language'), language)
      t.match(res.headers.get('vary'), /Accept-Language/)
    }
  }
})

t.test('every listed detail answers in its own Russian text', async t => {
  const origin = await listening(t)
  for (const code of ['BAD_REQUEST', 'UNAUTHORIZED', 'SERVICE_UNAVAILABLE'] as const) {
    for (const [i, texts] of details[code].entries()) {
      t.equal((await get(`${origin}/detail/${code}/${i}`, 'ru')).body.message, texts.ru, `${code}: ${texts.en}`)
      t.equal((await get(`${origin}/detail/${code}/${i}`, 'en')).body.message, texts.en)
    }
  }
})

t.test('Accept-Language: only a bounded prefix is parsed, 8 entries within 256 characters', async t => {
  const flood = 'a,'.repeat(8192) // 16 KiB
  t.equal(languagePrefix(flood), 'a,a,a,a,a,a,a,a', 'of 16 KiB, eight one-letter entries')
  t.equal(languagePrefix(`${'de-DE-x-'.repeat(40)},en`), '', 'one entry past the bound: nothing is read')
  const long = `${'xx-YY;q=0.1,'.repeat(3)}${'z'.repeat(300)},ru`
  t.equal(languagePrefix(long), 'xx-YY;q=0.1,xx-YY;q=0.1,xx-YY;q=0.1', 'an entry cut by the bound is left out whole')
  t.equal(languagePrefix('en-US,en;q=0.9,ru;q=0.8'), 'en-US,en;q=0.9,ru;q=0.8', 'a real header whole')
  t.equal(languagePrefix(['en', 'ru;q=0.5']), 'en,ru;q=0.5', 'repeated fields as one list')
  // What lies past the bound does not choose the language, where an unbounded parse would take it.
  t.equal(languageOf(`${flood}en`, 'ru'), 'ru', 'en after 8192 entries is not read')
  t.equal(languageOf('a,a,a,a,a,a,a,a,en', 'ru'), 'ru', 'nor a ninth entry')
  t.equal(languageOf(`a,a,a,a,a,a,a,en,${flood}`, 'ru'), 'en', 'an eighth is')
  const origin = await listening(t)
  // 8 KiB: the whole 16 KiB would pass Node's header limit of the small app (a 431 before any of this).
  const res = await get(`${origin}/said/1`, `${'a,'.repeat(4096)}en`)
  t.equal(res.status, 401)
  t.equal(res.headers.get('content-language'), 'ru', 'over HTTP: the default, in its language')
})

t.test('Accept-Language picks the language by quality; the default answers the rest', async t => {
  const cases: Array<[string | undefined, Language, Language]> = [
    // header, with DEFAULT_LANGUAGE ru, with DEFAULT_LANGUAGE en
    [undefined, 'ru', 'en'],
    ['en', 'en', 'en'],
    ['ru', 'ru', 'ru'],
    ['en-US,en;q=0.9', 'en', 'en'],
    ['ru-RU', 'ru', 'ru'],
    ['ru;q=0.3, en;q=0.8', 'en', 'en'],
    ['en;q=0.2, ru', 'ru', 'ru'],
    ['de-DE, fr;q=0.9', 'ru', 'en'],
    ['de, en;q=0.1', 'en', 'en'],
    ['*', 'ru', 'en'],
    ['', 'ru', 'en']
  ]
  const ru = await listening(t)
  const en = await listening(t, 'en')
  for (const [header, underRu, underEn] of cases) {
    for (const [origin, expected] of [[ru, underRu], [en, underEn]] as const) {
      const res = await get(`${origin}/said/1`, header)
      t.equal(res.body.code, 'UNAUTHORIZED')
      t.equal(res.headers.get('content-language'), expected, `${JSON.stringify(header)} -> ${expected}`)
      t.equal(res.body.message, SAID[1]![1][expected])
    }
  }
})

t.test('the plugins\' own answers and validation speak the language too (the whole app, over HTTP)', async t => {
  const { app } = await buildTestApp(t, { DEFAULT_LANGUAGE: undefined, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1' })
  const origin = await app.listen({ host: '127.0.0.1', port: 0 })
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${origin}${path}`, init)
    const language = res.headers.get('content-language')
    return { status: res.status, language, vary: res.headers.get('vary'), body: await res.json() }
  }
  const notFound = await call('/nowhere')
  t.match(notFound, {
    status: 404,
    language: 'ru',
    vary: /Accept-Language/,
    body: { code: 'NOT_FOUND', message: 'Адрес GET /nowhere не найден' }
  })
  const notAllowed = await call('/api/users/profile', { method: 'DELETE', headers: { 'accept-language': 'en' } })
  t.match(notAllowed, {
    status: 405, language: 'en', body: { code: 'METHOD_NOT_ALLOWED', message: /^Method DELETE is not allowed/ }
  })
  const console = { 'x-console-key': CONSOLE_KEY, 'content-type': 'application/json' }
  const invalid = await call('/request-console', {
    method: 'POST',
    headers: console,
    body: JSON.stringify({ operation: 'dealer.discount', params: { uid_client: 'nope' } })
  })
  t.match(invalid, {
    status: 400,
    language: 'ru',
    body: { code: 'BAD_REQUEST', message: /^Запрос составлен неверно: .*body\/params\/uid_client/ }
  })
  const extra = await call('/request-console', {
    method: 'POST',
    headers: console,
    body: JSON.stringify({ operation: 'dealer.discount', params: { uid_client: PETROVA.uid_client, x: 1 } })
  })
  t.match(extra.body, { code: 'BAD_REQUEST', message: 'Запрос составлен неверно: поле body/params/x не допускается' })
  const media = await call('/request-console', {
    method: 'POST', headers: { ...console, 'content-type': 'text/plain' }, body: 'x'
  })
  t.match(media, {
    status: 415, language: 'ru', body: { message: 'Этот тип содержимого не поддерживается, отправьте application/json' }
  })
  const refused = await call('/api/users/profile')
  t.match(refused, {
    status: 401, body: { message: 'Требуется авторизация: передайте токен в заголовке Authorization: Bearer' }
  })
  const limited = await call('/api/users/profile', { headers: { 'accept-language': 'ru' } })
  t.match(limited, {
    status: 429,
    language: 'ru',
    body: { code: 'RATE_LIMITED', message: /^Слишком много запросов, повторите через \d+ секунд[уы]?$/ }
  })
})

t.test('under pressure, the shed 503 is in the caller\'s language', async t => {
  const pressure = { UNDER_PRESSURE_MAX_RSS_MB: '1', UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '10' }
  const { app } = await buildTestApp(t, { DEFAULT_LANGUAGE: undefined, ...pressure })
  const origin = await app.listen({ host: '127.0.0.1', port: 0 })
  for (let i = 0; i < 500 && !app.isUnderPressure(); i++) await new Promise(resolve => setTimeout(resolve, 10))
  const ru = await fetch(`${origin}/nowhere`)
  t.equal(ru.status, 503)
  t.equal(ru.headers.get('content-language'), 'ru')
  t.match(await ru.json(), { code: 'SERVICE_UNAVAILABLE', message: 'Сервис перегружен, повторите попытку позже' })
  const en = await fetch(`${origin}/nowhere`, { headers: { 'accept-language': 'en' } })
  t.match(await en.json(), { code: 'SERVICE_UNAVAILABLE', message: 'The service is overloaded; retry later' })
})
