// The profile plugin: `fastify.profile` holds the flow and the last-known store; the copies it keeps in the
// process are let go when the app closes; with copies off there is no store at all.
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'
import { respondToOperations } from '../helpers/upstream-mock.ts'

t.test('a fresh answer becomes the caller\'s copy in the process; closing the app lets it go', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  const lastKnown = app.profile.lastKnown
  if (lastKnown === null) throw new Error('copies are on by default (PROFILE_STALE_IF_ERROR_S)')
  t.equal(lastKnown.store, 'memory')
  respondToOperations(upstream, {
    'passport.get_client': { status: 200, body: fx.passportFound },
    'dealer.discount': { status: 200, body: fx.discountWithBonuses },
    'dealer.client': { status: 200, body: fx.contractorResult }
  })
  const res = await app.inject({ url: '/api/users/profile', headers: bearer(hs256()) })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8', 'the serialized bytes, sent as JSON')
  t.same(res.json().degraded, [])
  agent.assertNoPendingInterceptors()
  // The copy is written once the answer has gone.
  await nextTurn()
  t.ok(lastKnown.size > 0, 'the copy is held')
  await app.close()
  t.equal(lastKnown.size, 0, 'released with the app')
})

t.test('with both windows at 0 the plugin holds no store', async t => {
  const { app } = await buildTestApp(t, { PROFILE_STALE_IF_ERROR_S: '0', PROFILE_FRESH_S: '0' })
  t.equal(app.profile.lastKnown, null)
  t.equal(typeof app.profile.respond, 'function')
})

t.test('requests sharing a load share its bytes and tag: serialized and hashed once per load, not per request',
  async t => {
    const { app, agent, upstream } = await buildTestApp(t)
    respondToOperations(upstream, {
      // Slow enough that the second request joins the first one's load.
      'passport.get_client': { status: 200, body: fx.passportFound, delay: 50 },
      'dealer.discount': { status: 200, body: fx.discountWithBonuses },
      'dealer.client': { status: 200, body: fx.contractorResult }
    })
    const request = (id: string) => ({ id, headers: {}, log: app.log, signal: new AbortController().signal })
    const [first, second] = await Promise.all([
      app.profile.respond(fx.IVANOV, request('first')),
      app.profile.respond(fx.IVANOV, request('second'))
    ])
    agent.assertNoPendingInterceptors()
    t.equal(first.body, second.body, 'the same bytes, not equal ones')
    t.equal(first.etag, second.etag)
    t.equal(first, second, 'one response for the load')

    respondToOperations(upstream, {
      'passport.get_client': { status: 200, body: fx.passportFound },
      'dealer.discount': { status: 200, body: fx.discountWithBonuses },
      'dealer.client': { status: 200, body: fx.contractorResult }
    })
    const later = await app.profile.respond(fx.IVANOV, request('later'))
    t.not(later.body, first.body, 'a new load serializes anew')
    t.equal(later.etag, first.etag, 'the same profile, the same tag')
  })
