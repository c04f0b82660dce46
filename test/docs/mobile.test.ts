// docs/mobile.md's curl lines, run as written against a dev-mode instance (`npm run dev` with MIN_APP_VERSION):
// each ends in `# <status> [header: value]`, which the answer must match. OkHttp and URLSession cannot run here.
import t from 'tap'
import { startDev } from '../../sandbox/dev.ts'
import { OUTCOME_CLIENTS } from '../../sandbox/outcomes.ts'
import { TOKEN_REASONS } from '../../schemas/errors.ts'
import { BEARER_CHALLENGES } from '../../src/auth/bearer-challenges.ts'
import { components, dateKind, schemaOf, type DateKind } from '../helpers/openapi-document.ts'
import { page, section } from './markdown.ts'

const DOC = page('docs/mobile.md')

/** Every curl line of the page's sh blocks, with the status and header its comment promises. */
function curlLines (text: string): Array<{ line: string, status: number, header?: [string, string] }> {
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map(match => match[1]!)
  return blocks.flatMap(block => block.split('\n')).filter(line => line.startsWith('curl ')).map(line => {
    const promise = /#\s*(\d{3})(?:\s+([\w-]+)(?::\s*(\S+))?)?\s*$/.exec(line)
    if (promise === null) throw new Error(`a curl line without its "# status" promise: ${line}`)
    const [, status, name, value] = promise
    return { line, status: Number(status), ...(name === undefined ? {} : { header: [name, value ?? ''] }) }
  })
}

/** The request a curl line makes, its variables filled in; single- and double-quoted words, as the page writes. */
function request (line: string, vars: Record<string, string>, origin: string): { url: string, init: RequestInit } {
  const fill = (word: string) => word.replace(/\$(\w+)/g, (_, name: string) => vars[name] ?? `$${name}`)
  // Words first, then variables (as the shell expands them): not in single quotes, into one word.
  const words = [...line.replace(/#.*$/, '').trim().matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)]
    .map(m => m[1] ?? fill(m[2] ?? m[3]!))
  const headers: Record<string, string> = {}
  let url = ''
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!
    if (word === '-sS' || word === '-i') continue
    if (word === '-H') {
      const header = words[++i]!
      headers[header.slice(0, header.indexOf(':')).toLowerCase()] = header.slice(header.indexOf(':') + 1).trim()
    } else if (word.startsWith('http://127.0.0.1:3000')) url = word.replace('http://127.0.0.1:3000', origin)
    else throw new Error(`a curl option this test does not know: ${word} in ${line}`)
  }
  return { url, init: { headers } }
}

t.test('every curl line of docs/mobile.md answers as the page says', async t => {
  const run = await startDev({
    env: { MIN_APP_VERSION: '2.3.0' }, port: 0, logLevel: 'silent', log: { write: () => {} }
  })
  t.teardown(() => run.close())
  const vars: Record<string, string> = { TOKEN: run.clients[0]!.token }
  // The test identities' tokens, as the page names them: a variable of each identity's name.
  for (const client of run.outcomes) vars[client.label] = client.token
  const lines = curlLines(DOC)
  t.ok(lines.length >= 5, 'the page has its curl lines')
  const promised = new Set(lines.map(({ status }) => status))
  for (const status of [200, 304, 426, 502, 503, 504]) t.ok(promised.has(status), `a curl line promises ${status}`)
  for (const { line, status, header } of lines) {
    const { url, init } = request(line, vars, run.url)
    const res = await fetch(url, init)
    const body = res.status === 304 ? null : await res.json() as Record<string, unknown>
    t.equal(res.status, status, line)
    if (header !== undefined && header[1] !== '') {
      t.equal(res.headers.get(header[0]), header[1], `${line}: ${header[0]}`)
    } else if (header !== undefined) t.ok(res.headers.get(header[0]), `${line}: ${header[0]}`)
    if (status === 200) vars.ETAG = res.headers.get('etag') ?? ''
    if (status === 304) t.equal(await res.text(), '', 'a 304 has no body')
    if (status === 426) {
      t.match(body, { code: 'APP_UPDATE_REQUIRED', min_app_version: '2.3.0' }, 'the update screen\'s field')
      t.match(DOC, String(body!.message), 'the page shows the message the sandbox sends')
    }
  }
})

t.test('the page says what the service does about dates, optionals, retries and request ids', async t => {
  const models = section(DOC, 'Generating models')
  t.match(models, '--flavour gson', 'the Gson flavour')
  t.match(models, 'ignoreUnknownKeys = true', 'kotlinx decodes ignoring the keys added later')
  t.match(models, '`T?`')
  t.match(section(DOC, 'Dates'), '`.iso8601`', 'why dates are strings')
  const retries = section(DOC, 'Retries')
  for (const code of ['RATE_LIMITED', 'SERVICE_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE', 'SIGNING_KEY_PENDING',
    'UPSTREAM_BAD_RESPONSE', 'UPSTREAM_TIMEOUT', 'INTERNAL_ERROR', 'UNAUTHORIZED', 'APP_UPDATE_REQUIRED']) {
    t.match(retries, code, `${code} has its retry rule`)
  }
  t.match(retries, '### Refresh, sign in again, or wait')
  for (const reason of Object.keys(TOKEN_REASONS)) t.match(retries, `| \`${reason}\` |`, `${reason} has its row`)
  for (const challenge of Object.values(BEARER_CHALLENGES)) t.match(retries, `\`${challenge}\``, challenge)
  t.match(section(DOC, 'Unknown enum values'), 'degraded')
})

t.test('the page lists every test identity, and what the app team had to find out', async t => {
  const states = section(DOC, 'Every state on the sandbox')
  for (const client of OUTCOME_CLIENTS) {
    for (const value of [client.name, client.login, client.uid_client]) t.match(states, `\`${value}\``, value)
    t.match(states, `$${client.name}"`, `a curl line for ${client.name}`)
  }
  for (const code of ['RATE_LIMITED', 'APP_UPDATE_REQUIRED', 'RATE_LIMIT_PROFILE_PER_MINUTE', 'MIN_APP_VERSION']) {
    t.match(states, code, `how to reach ${code}`)
  }
  t.match(states, /one client's failures\s+never open a breaker/, 'why no identity opens a breaker')
  t.match(section(DOC, 'Tokens and the clock'), '30 s after its `exp`')
  t.match(section(DOC, 'At logout'), /profile and its `ETag`/)
  const phone = section(DOC, 'Trying it from a phone')
  for (const text of ['HOST=0.0.0.0 npm run dev', '10.0.2.2', 'cleartextTrafficPermitted="true"', 'src/debug/',
    'NSAllowsLocalNetworking']) t.match(phone, text)
  t.match(section(DOC, 'ETag and If-None-Match'), 'response.body.string()', 'OkHttp 5: the body is not nullable')
})

t.test('the Dates table names every date field of the document with the parser of its kind', async t => {
  const parsers: Record<DateKind, string> = {
    'date-time': '`OffsetDateTime.parse`', date: '`LocalDate.parse`', 'local-date-time': '`LocalDateTime.parse`'
  }
  const rows = section(DOC, 'Dates').split('\n').filter(line => line.startsWith('| '))
  const fields = Object.values(components).flatMap(schema => Object.entries(schema.properties ?? {}))
    .map(([name, property]) => ({ name, kind: dateKind(schemaOf(property as object, '') ?? {}) }))
    .filter((field): field is { name: string, kind: DateKind } => field.kind !== undefined)
  for (const kind of Object.keys(parsers) as DateKind[]) t.ok(fields.some(f => f.kind === kind), `a ${kind} field`)
  for (const { name, kind } of fields) {
    const row = rows.find(line => new RegExp(`[\`.]${name}\``).test(line))
    t.match(row, parsers[kind], `${name}: a ${kind}, parsed with ${parsers[kind]}`)
  }
  for (const name of ['discount', 'last_dealer', 'contact_persons']) {
    t.match(section(DOC, 'Undocumented shapes'), `\`${name}\``, `how to read ${name}`)
  }
})
