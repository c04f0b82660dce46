// Who the upstream calls of a request are for: one object with the breakers' key, a digest of the client's id.
import { createHash } from 'node:crypto'
import t from 'tap'
import { upstreamCallerOf } from '../../src/profile/passport-record.ts'
import { IVANOV } from '../../schemas/fixtures.ts'

t.test('the upstream caller carries a SHA-256 of the client\'s id as its breaker key, never the id', async t => {
  const caller = upstreamCallerOf(IVANOV)
  t.strictSame(caller, {
    id: IVANOV.uid_client,
    login: IVANOV.login,
    key: createHash('sha256').update(IVANOV.uid_client).digest('base64url')
  })
})
