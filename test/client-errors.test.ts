// Node's own answers before routing, over raw sockets against the app on port 0: malformed HTTP (400),
// header overflow (431) and a request not received in time (408) all carry the catalog's error body.
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { Compile } from 'typebox/compile'
import { ErrorBody } from '../schemas/errors.ts'
import { buildTestApp, CONSOLE_KEY } from './helpers/build-app.ts'

const isErrorBody = Compile(ErrorBody)

interface RawResponse { status: number, headers: Map<string, string>, body: unknown }

/** Writes `bytes` on a fresh connection and reads everything the server sends until it closes. */
function raw (origin: string, bytes: string): Promise<RawResponse> {
  const { hostname, port } = new URL(origin)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { text += chunk })
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers =
        new Map(lines.map(line =>
          [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
      let parsed: unknown = body
      try { parsed = JSON.parse(body) } catch {}
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed })
    })
    socket.write(bytes)
  })
}

async function listening (t: Test, env: Record<string, string | undefined> = {}) {
  // Short header and request deadlines, so the 408 comes quickly.
  const { app } = await buildTestApp(t, { SERVER_HEADERS_TIMEOUT_MS: '300', SERVER_REQUEST_TIMEOUT_MS: '600', ...env })
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

function assertErrorResponse (t: Test, answer: RawResponse, status: number, code: string) {
  t.equal(answer.status, status)
  t.ok(isErrorBody.Check(answer.body), `an ErrorBody: ${JSON.stringify(answer.body)}`)
  t.match(answer.body, { statusCode: status, code, error: String, message: String })
  t.match(answer.headers.get('content-type'), /^application\/json/)
  t.match(answer.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'a fresh request id')
  t.equal(answer.headers.get('connection'), 'close')
  t.equal(answer.headers.get('vary'), 'Accept-Language')
}

t.test('malformed HTTP: 400 BAD_REQUEST in the error body', async t => {
  const origin = await listening(t)
  const answer = await raw(origin, 'THIS IS NOT HTTP\r\n\r\n')
  assertErrorResponse(t, answer, 400, 'BAD_REQUEST')
  // Nothing of it could be read, Accept-Language included: DEFAULT_LANGUAGE (en in the tests' config).
  t.match(answer.body, { message: 'The request is not valid HTTP' })
  t.equal(answer.headers.get('content-language'), 'en')
})

t.test('before routing, with DEFAULT_LANGUAGE unset, the answers are in Russian', async t => {
  const origin = await listening(t, { DEFAULT_LANGUAGE: undefined })
  const malformed = await raw(origin, 'THIS IS NOT HTTP\r\n\r\n')
  assertErrorResponse(t, malformed, 400, 'BAD_REQUEST')
  t.match(malformed.body, { message: 'Не удалось разобрать запрос: это не HTTP' })
  t.equal(malformed.headers.get('content-language'), 'ru')
  const large = await raw(origin,
    `GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`)
  assertErrorResponse(t, large, 431, 'HEADERS_TOO_LARGE')
  t.match(large.body, { message: 'Заголовки запроса слишком большие' })
  const slow = await raw(origin, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\n')
  assertErrorResponse(t, slow, 408, 'REQUEST_TIMEOUT')
  t.match(slow.body, { message: 'Запрос не получен полностью за отведённое время' })
})

t.test('headers over the limit: 431 HEADERS_TOO_LARGE in the error body', async t => {
  const origin = await listening(t)
  const answer = await raw(origin,
    `GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`)
  assertErrorResponse(t, answer, 431, 'HEADERS_TOO_LARGE')
  t.match(answer.body, { message: 'The request headers are too large' })
})

t.test('headers not received in time: 408 REQUEST_TIMEOUT in the error body', async t => {
  const origin = await listening(t)
  // Headers begun, never finished.
  const answer = await raw(origin, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\n')
  assertErrorResponse(t, answer, 408, 'REQUEST_TIMEOUT')
  t.match(answer.body, { message: 'The request was not received in time' })
})

t.test('a body not received in time: 408 in the language its headers asked for', async t => {
  const origin = await listening(t)
  // Headers complete, with Accept-Language; the body promised by Content-Length never comes.
  const answer = await raw(origin, 'POST /request-console HTTP/1.1\r\nHost: localhost\r\n' +
    'Accept-Language: en;q=0.5, ru-RU\r\n' +
    `X-Console-Key: ${CONSOLE_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"op`)
  assertErrorResponse(t, answer, 408, 'REQUEST_TIMEOUT')
  t.match(answer.body, { message: 'Запрос не получен полностью за отведённое время' })
  t.equal(answer.headers.get('content-language'), 'ru')
})

t.test('a well-formed request on the same server is served as usual', async t => {
  const origin = await listening(t)
  const answer = await raw(origin, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  t.equal(answer.status, 200)
})
