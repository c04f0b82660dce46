// Request logging: one access line per request at info, with every field an operator looks for.
import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp } from '../src/app.ts'
import { loggerOptions } from '../src/logger.ts'
import { testConfig } from './helpers/build-app.ts'

async function logged (level: 'info' | 'debug', url: string): Promise<Array<Record<string, any>>> {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const config = testConfig({ LOG_LEVEL: level })
  const app = await buildApp(config, { logger: { ...loggerOptions(config), stream } })
  await app.inject({ url, headers: { 'x-request-id': 'access-line-1', authorization: 'Bearer not-a-token' } })
  await app.close()
  return lines.map(line => JSON.parse(line))
}

t.test('at info, one line per request carries the request, the status, the time and the request id', async t => {
  const lines = await logged('info', '/api/users/profile?x=1')
  const ofRequest = lines.filter(line => line.reqId === 'access-line-1')
  // Besides why it was refused (errors.ts), one line for the request itself.
  t.notOk(ofRequest.some(line => line.msg === 'incoming request'), 'no arrival line at info')
  const access = ofRequest.filter(line => line.msg === 'request completed')
  t.equal(access.length, 1, 'one access line for the request')
  t.match(access[0], {
    level: 30,
    msg: 'request completed',
    reqId: 'access-line-1',
    req: { method: 'GET', url: '/api/users/profile?x=1', host: String, remoteAddress: String },
    res: { statusCode: 401 },
    responseTime: Number
  })
  t.notOk(JSON.stringify(lines).includes('not-a-token'), 'the token stays out of the log')
})

t.test('at debug, the arrival is logged too, for a request that never completes', async t => {
  const lines = await logged('debug', '/api/users/profile')
  const messages = lines.filter(line => line.reqId === 'access-line-1').map(line => line.msg)
  t.ok(messages.includes('incoming request'))
  t.ok(messages.includes('request completed'))
})
