import t from 'tap'
import { buildTestApp } from '../helpers/build-app.ts'

t.test('live and ready answer while the app runs', async t => {
  const { app } = await buildTestApp(t)
  const live = await app.inject('/health/live')
  t.equal(live.statusCode, 200)
  t.same(live.json(), { status: 'ok' })
  const ready = await app.inject('/health/ready')
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ready' })
  t.ok(ready.headers['x-request-id'])
})

t.test('ready turns 503 once shutdown starts, so the balancer drains us', async t => {
  const { app } = await buildTestApp(t)
  // preClose runs before the server stops accepting; ask while it is closing.
  let during: Response | undefined
  app.addHook('preClose', async () => {
    during = await fetch(`${url}/health/ready`)
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  await app.close()
  t.equal(during?.status, 503, await during?.clone().text() ?? 'no answer')
  t.match(await during?.json(), { statusCode: 503, code: 'SERVICE_UNAVAILABLE' })
})
