// `npm run openapi:breaking`: the real script on documents written to a temp dir (the released contract and a
// changed copy of it), failing on what would break an installed app and passing on additions; then each of
// our own rules over the library's output, and the committed openapi.yaml against the released contract.
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { stringify } from 'yaml'
import { breakingChanges, CURRENT_FILE, readDocument, RELEASED_FILE } from '../../scripts/openapi-breaking.ts'

const SCRIPT = fileURLToPath(new URL('../../scripts/openapi-breaking.ts', import.meta.url))
const run = promisify(execFile)
const STRING = { type: 'string' }

// Loose on purpose: the tests reach into the document by the names the profile schema gives it.
type Doc = Record<string, any>
const released = await readDocument(RELEASED_FILE) as Doc
const changed = (change: (doc: Doc) => void): Doc => {
  const doc = structuredClone(released)
  change(doc)
  return doc
}
const client = (doc: Doc) => doc.components.schemas.Client
const profileGet = (doc: Doc) => doc.paths['/api/users/profile'].get

/** Runs the script as `npm run openapi:breaking` would, on the released contract and `current`. */
async function check (t: Test, current: Doc): Promise<{ code: number, out: string }> {
  const dir = t.testdir()
  await writeFile(join(dir, 'released.yaml'), stringify(released))
  await writeFile(join(dir, 'current.yaml'), stringify(current))
  try {
    const { stdout } = await run(process.execPath, [SCRIPT, join(dir, 'released.yaml'), join(dir, 'current.yaml')])
    return { code: 0, out: stdout }
  } catch (error) {
    const failed = error as { code: number, stderr: string }
    return { code: failed.code, out: failed.stderr }
  }
}

t.test('the script fails naming a removed response field', async t => {
  const { code, out } = await check(t, changed(doc => {
    delete client(doc).properties.is_staff
    client(doc).required = client(doc).required.filter((name: string) => name !== 'is_staff')
  }))
  t.equal(code, 1)
  t.match(out, 'GET /api/users/profile: [Removed] property `is_staff` from `client` in Response 200')
  t.match(out, 'docs/api.md', 'points at the versioning policy')
})

t.test('the script fails naming a changed type', async t => {
  const { code, out } = await check(t, changed(doc => { client(doc).properties.is_staff.type = 'string' }))
  t.equal(code, 1)
  t.match(out, '[Changed] type of `client.is_staff` from boolean to string in Response 200')
})

t.test('the script fails naming a field made nullable, in both forms of OpenAPI 3.1', async t => {
  const anyOf = await check(t, changed(doc => {
    client(doc).properties.client_data = { anyOf: [{ $ref: '#/components/schemas/ClientDataReg' }, { type: 'null' }] }
  }))
  t.equal(anyOf.code, 1)
  t.match(anyOf.out, '[Made nullable] `client.client_data` in Response 200')
  const typeList = await check(t, changed(doc => { client(doc).properties.is_staff.type = ['boolean', 'null'] }))
  t.equal(typeList.code, 1)
  t.match(typeList.out, '[Made nullable] `client.is_staff` in Response 200')
})

t.test('the script passes an added optional response field and an added route', async t => {
  const { code, out } = await check(t, changed(doc => {
    client(doc).properties.nickname = { type: 'string' }
    doc.paths['/api/v2/users/profile'] = structuredClone(doc.paths['/api/users/profile'])
  }))
  t.equal(code, 0, out)
  t.match(out, 'keeps the released contract')
})

t.test('each break the guard names', async t => {
  const cases: Array<[string, (doc: Doc) => void, string]> = [
    ['a field made optional in a response',
      doc => { client(doc).required = client(doc).required.filter((name: string) => name !== 'is_staff') },
      'GET /api/users/profile: [Made optional] `client.is_staff` in Response 200'],
    ['a removed enum value',
      doc => { doc.components.schemas.Profile.properties.degraded.items.enum = ['discount'] },
      'GET /api/users/profile: [Removed] enum value "contractor" of `degraded[]` in Response 200'],
    ['an added response enum value (apps with strict enums fail on it)',
      doc => { doc.components.schemas.Profile.properties.stale.items.enum.push('bonuses') },
      'GET /api/users/profile: [Replaced] possible values of `stale[]` in Response 200 content (application/json)'],
    ['a removed path', doc => { delete doc.paths['/health/live'] }, '[Removed] operation GET /health/live'],
    ['a removed method',
      doc => { doc.paths['/health/live'] = { post: doc.paths['/health/live'].get } },
      '[Removed] operation GET /health/live'],
    ['a new required parameter',
      doc => { profileGet(doc).parameters = [{ in: 'header', name: 'x-new', required: true, schema: STRING }] },
      'GET /api/users/profile: [Added] required header parameter `x-new`'],
    ['a new required request field',
      doc => {
        const params = doc.components.schemas.PassportParams
        params.properties.extra = { type: 'string' }
        params.required.push('extra')
      },
      'POST /request-console: [Made required] `params.extra` in the request']
  ]
  for (const [name, change, expected] of cases) {
    t.ok(breakingChanges(released, changed(change)).includes(expected), name)
  }
})

t.test('additions pass: an optional parameter, a response header, an added response', async t => {
  t.same(breakingChanges(released, changed(doc => {
    profileGet(doc).parameters = [{ in: 'header', name: 'accept-language', required: false, schema: STRING }]
    const refused = profileGet(doc).responses['401']
    refused.headers = { ...refused.headers, 'content-language': { schema: { type: 'string', enum: ['ru', 'en'] } } }
    profileGet(doc).responses['418'] = structuredClone(profileGet(doc).responses['401'])
  })), [])
})

t.test('a removed response header is a break', async t => {
  const removed = changed(doc => { delete profileGet(doc).responses['401'].headers['www-authenticate'] })
  t.same(breakingChanges(released, removed),
    ['GET /api/users/profile: [remove] responses.401.headers.www-authenticate'])
})

t.test('the committed openapi.yaml keeps the released contract', async t => {
  t.same(breakingChanges(released, await readDocument(CURRENT_FILE)), [])
})
