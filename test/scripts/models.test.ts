// `npm run models`: the Gson flavour, compiled with the project's Kotlin compiler (node_modules/kotlin-compiler, the
// machine's java, Debian's gson.jar) beside DecodeResponses.kt, decodes live answers of every state an app meets, all
// from `npm run dev` (its seeded clients, its test identities for the degraded, stale, 502, 503 and 504, its 426 and
// 429 settings), with every required property present and every enum value known, and each date string parses with
// the java.time type its kind names. The kotlinx flavour and the Swift are checked as text: a wire name on every
// property and enum entry, optional and nullable as the document says, unknown enum values read as Unknown. In CI a
// missing java or gson.jar fails; elsewhere the Kotlin part is skipped with a message. --from reads a running
// service, and bad arguments are named.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { PROFILE_PATH, startDev, type DevRun } from '../../sandbox/dev.ts'
import { OUTCOME_CLIENTS, type OutcomeClient } from '../../sandbox/outcomes.ts'
import {
  DEFAULT_PACKAGE, KOTLIN_FILE, ModelsError, parseModelsArgs, readComponents, runModels, SHAPELESS_NOTE, SWIFT_FILE
} from '../../scripts/models.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import { components, DATE_LIKE, dateKind, resolve, schemaOf, walk, type Json } from '../helpers/openapi-document.ts'
import { fetchUnlessShed } from '../helpers/shed-retry.ts'

const run = promisify(execFile)
const KOTLINC = new URL('../../node_modules/kotlin-compiler/bin/kotlinc-jvm', import.meta.url).pathname
const KOTLIN_LIB = new URL('../../node_modules/kotlin-compiler/lib/', import.meta.url).pathname
const GSON_JAR = '/usr/share/java/gson.jar'
const DECODER = new URL('DecodeResponses.kt', import.meta.url).pathname
// A JVM for one short job: the quick compiler only and the serial collector halve the compile's CPU (12 s against
// 19 to 25 s here).
const SHORT_JVM = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC']
const IN_CI = (process.env.CI ?? '') !== '' && process.env.CI !== 'false'
const PACKAGE = 'ru.dealer.app.api'
// The dev run's settings an app team may change: its update screen's version and a limit the 429 is met within.
const MIN_APP_VERSION = '2.3.0'
const PROFILES_PER_MINUTE = 10

/** The components generated as types with fields: every object with properties (a free map is a type alias). */
const objects = Object.entries(components).filter(([, schema]) => Object.keys(schema.properties ?? {}).length > 0)

/** Every `enum` list of the document, as the set of its values. */
const documentEnums: string[][] = []
JSON.stringify(components, (key, value) => {
  if (key === 'enum' && Array.isArray(value)) documentEnums.push(value)
  return value
})

/** Whether a property may be null: one branch of its anyOf is null. */
const isNullable = (property: Json) => (property.anyOf ?? []).some((branch: Json) => branch.type === 'null')

/** Whether a property is any JSON value at all, null included (Kotlin `T?`, Swift's JSONAny). */
const isAny = (property: Json) => Object.keys(property).every(keyword => ['description', 'examples'].includes(keyword))

/** The generated enum (name and wire values) that holds every value of `values`. */
const enumOf = <T extends string[]>(generated: Map<string, T>, values: string[]) =>
  [...generated].find(([, wire]) => values.every(value => wire.includes(value)))

/** Whether `program` runs here. */
async function runs (program: string): Promise<boolean> {
  try {
    await run(program, ['-version'])
    return true
  } catch {
    return false
  }
}

/** What stops the Kotlin part here; false when java and gson.jar are present. In CI their absence fails. */
async function kotlinSkip (t: Test): Promise<string | false> {
  const missing = [...(await runs('java')) ? [] : ['java'], ...existsSync(GSON_JAR) ? [] : [GSON_JAR]]
  if (missing.length === 0) return false
  if (IN_CI) t.fail(`${missing.join(' and ')} not found: .ci/run installs default-jre-headless and libgoogle-gson-java`)
  return `${missing.join(' and ')} not found: apt-get install default-jre-headless libgoogle-gson-java to compile`
}

// ---- The states an app meets, each an answer to decode -------------------------------------------------------

interface State {
  name: string
  status: number
  /** What the answer must show to be the state it claims (a degraded list, a code). */
  shows: Json
  answer (dev: DevRun): Promise<Response>
}

/**
 * The profile answer, as an app retries a shed request: the test's own work (quicktype, the compiler starting) can
 * lag this process's event loop past the load-shedding bound, which no state here is about.
 */
const profile = (base: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetchUnlessShed(`${base}${PROFILE_PATH}`, { headers }, { retries: 29, pauseMs: 1000 })

/** The token `npm run dev` printed for the client or test identity labelled `label`. */
function tokenOf (dev: DevRun, label: string): string {
  const client = [...dev.clients, ...dev.outcomes].find(c => c.label === label)
  if (client === undefined) throw new Error(`npm run dev printed no client ${label}`)
  return client.token
}

/** The profile of the client labelled `label`, with its printed token and `headers`. */
const fromDev = (label: string, headers: Record<string, string> = {}) => (dev: DevRun) =>
  profile(dev.url, { authorization: `Bearer ${tokenOf(dev, label)}`, ...headers })

/** Requests the profile of `label` until the per-client limit answers 429, within the limit the answers announce. */
const untilLimited = (label: string) => async (dev: DevRun) => {
  const headers = { authorization: `Bearer ${tokenOf(dev, label)}` }
  for (let sent = 0; ; sent++) {
    const res = await profile(dev.url, headers)
    if (res.status === 429) return res
    await res.arrayBuffer()
    const limit = Number(res.headers.get('x-ratelimit-limit'))
    if (!(sent <= limit)) throw new Error(`no 429 after ${sent + 1} requests (limit ${limit})`)
  }
}

/**
 * A test identity's state (sandbox/outcomes.ts): what it sees, after its warm-up requests (STALE's first load, the
 * copy the passport's failure then falls back on).
 */
const outcomeState = (client: OutcomeClient): State => {
  const { status, code, degraded, stale } = client.sees
  const shows: Json = code === null
    ? { degraded, stale, ...Object.fromEntries(degraded.map(section => [section, null])) }
    : { code }
  return {
    name: `${status} ${client.name}`,
    status,
    shows,
    answer: async dev => {
      for (let i = 0; i < client.warmUpRequests; i++) await (await fromDev(client.name)(dev)).arrayBuffer()
      return await fromDev(client.name)(dev)
    }
  }
}

/** Every state an app meets, each from `npm run dev`: its seeded clients, its test identities, its limits. */
const STATES: State[] = [
  { name: '200 full profile', status: 200, shows: { degraded: [], stale: [] }, answer: fromDev('IVANOV') },
  { name: '200 with bonuses', status: 200, shows: { discount: { balance: 1500 } }, answer: fromDev('PETROVA') },
  ...OUTCOME_CLIENTS.map(outcomeState),
  {
    name: '400 malformed x-app-version',
    status: 400,
    shows: { code: 'BAD_REQUEST' },
    answer: fromDev('IVANOV', { 'x-app-version': 'v2' })
  },
  {
    name: '401 without a token, in Russian',
    status: 401,
    shows: { code: 'UNAUTHORIZED' },
    answer: dev => profile(dev.url, { 'accept-language': 'ru' })
  },
  {
    name: '401 a bad token, in English',
    status: 401,
    shows: { code: 'UNAUTHORIZED' },
    answer: dev => profile(dev.url, { authorization: 'Bearer not.a.token', 'accept-language': 'en' })
  },
  { name: '404 unknown client', status: 404, shows: { code: 'CLIENT_NOT_FOUND' }, answer: fromDev('UNKNOWN') },
  {
    name: '426 an app too old',
    status: 426,
    shows: { code: 'APP_UPDATE_REQUIRED', min_app_version: MIN_APP_VERSION },
    answer: fromDev('IVANOV', { 'x-app-version': '2.2.0' })
  },
  // Last: it spends PETROVA's requests of this minute.
  { name: '429 rate limited', status: 429, shows: { code: 'RATE_LIMITED' }, answer: untilLimited('PETROVA') }
]

/** Every state's answer from `npm run dev`: its status and JSON body, checked to be the state it claims. */
async function collectResponses (t: Test): Promise<Array<{ name: string, status: number, body: unknown }>> {
  const dev = await startDev({
    env: { MIN_APP_VERSION, RATE_LIMIT_PROFILE_PER_MINUTE: String(PROFILES_PER_MINUTE) },
    port: 0,
    logLevel: 'silent',
    log: { write () {} }
  })
  t.teardown(() => dev.close())
  const answers = []
  for (const state of STATES) {
    const res = await state.answer(dev)
    const body = JSON.parse(await res.text())
    t.equal(res.status, state.status, `${state.name}: the status (${body.code ?? 'a profile'})`)
    t.match(body, state.shows, `${state.name}: the state it claims`)
    // t.match lets a longer list through: degraded and stale must be exactly the state's.
    for (const [key, list] of Object.entries(state.shows)) {
      if (Array.isArray(list)) t.strictSame(body[key], list, `${state.name}: ${key} exactly`)
    }
    answers.push({ name: state.name, status: res.status, body })
  }
  return answers
}

// ---- What the decoded answers must be ------------------------------------------------------------------------

/**
 * Where `encoded` (the answer as the app holds it, encoded again) differs from `original` by the document at
 * `node`: a required property missing, an optional one invented, a value changed, an enum value unknown.
 */
function differences (node: Json, original: unknown, encoded: unknown, path = ''): string[] {
  const schema = schemaOf(node, original)
  if (schema === null) return encoded === null ? [] : [`${path}: null sent, ${JSON.stringify(encoded)} decoded`]
  if (Array.isArray(schema.enum) && !schema.enum.includes(encoded)) {
    return [`${path}: ${JSON.stringify(encoded)} decoded, not a value of the document (${JSON.stringify(original)} ` +
      'sent)']
  }
  if (schema.properties !== undefined && Object.keys(schema.properties).length > 0) {
    const sent = original as Json
    const held = (encoded ?? {}) as Json
    const required = new Set<string>(schema.required ?? [])
    const found: string[] = []
    for (const [name, property] of Object.entries(schema.properties as Json)) {
      if (!(name in sent)) {
        if (required.has(name)) found.push(`${path}/${name}: required, not in the answer`)
        else if (held[name] !== undefined && held[name] !== null) found.push(`${path}/${name}: absent, yet decoded`)
      } else if (!(name in held)) found.push(`${path}/${name}: not decoded`)
      else found.push(...differences(property, sent[name], held[name], `${path}/${name}`))
    }
    for (const name of Object.keys(held)) {
      if (!(name in schema.properties)) found.push(`${path}/${name}: a property the document does not name`)
    }
    return found
  }
  if (schema.type === 'array' && Array.isArray(original) && Array.isArray(encoded) &&
    original.length === encoded.length && schema.items !== undefined) {
    return original.flatMap((item, i) => differences(schema.items, item, encoded[i], `${path}/${i}`))
  }
  return JSON.stringify(original) === JSON.stringify(encoded)
    ? []
    : [`${path}: ${JSON.stringify(original)} sent, ${JSON.stringify(encoded)} decoded`]
}

/** The date strings of a profile with the kind the document states for each (undefined when it states none). */
function datesOf (body: unknown): Array<{ path: string, value: string, kind: string | undefined }> {
  const dates: Array<{ path: string, value: string, kind: string | undefined }> = []
  walk(components.Profile!, body, (path, schema, value) => {
    if (typeof value === 'string' && (DATE_LIKE.test(value) || dateKind(schema) !== undefined)) {
      dates.push({ path, value, kind: dateKind(schema) })
    }
  })
  return dates
}

// The compiler's own JVM: 12 s of CPU, half a minute or more on a busy machine.
t.setTimeout(360_000)

t.test('the Gson flavour decodes every state an app meets, as the document says', async t => {
  const skip = await kotlinSkip(t)
  const out = t.testdir()
  await runModels(['--out', out, '--package', PACKAGE, '--flavour', 'gson'])
  // One compile, started first: it runs while the answers are collected.
  const classes = join(out, 'classes')
  const compiled = skip === false
    ? run(KOTLINC, [...SHORT_JVM.map(flag => `-J${flag}`), join(out, KOTLIN_FILE), DECODER, '-cp', GSON_JAR,
      '-d', classes], { timeout: 300_000 })
    : null
  compiled?.catch(() => {})

  const answers = await collectResponses(t)
  const decodedAs = (status: number) => status < 300 ? 'Profile' : 'ErrorBody'
  const live = answers.map(({ name, status, body }) => ({ name, type: decodedAs(status), body }))
  const unknownValue = { ...answers[0]!.body as Json, degraded: ['loyalty'] }
  // Controls: what the checks below must catch, so they cannot pass by construction.
  const controls = [
    { name: 'control: {} as an ErrorBody', type: 'ErrorBody', body: {} },
    { name: 'control: a degraded value from a newer service', type: 'Profile', body: unknownValue }
  ]
  const dates = answers.filter(a => a.status === 200).flatMap(a => datesOf(a.body).map(d => ({ ...d, state: a.name })))
  t.ok(dates.length >= 20, `the profiles hold their dates (${dates.length})`)
  for (const date of dates) t.ok(date.kind, `${date.state} ${date.path} ${date.value}: the document names its kind`)
  for (const kind of ['date', 'date-time', 'local-date-time']) {
    t.ok(dates.some(d => d.kind === kind), `a live profile holds a ${kind}`)
  }

  await t.test('decoded with Gson into the generated classes', { skip }, async t => {
    await compiled
    const input = join(out, 'answers.json')
    await writeFile(input, JSON.stringify({
      package: PACKAGE, answers: [...live, ...controls], dates: dates.filter(d => d.kind !== undefined)
    }))
    const classpath = [classes, GSON_JAR, `${KOTLIN_LIB}kotlin-stdlib.jar`, `${KOTLIN_LIB}kotlin-reflect.jar`].join(':')
    const { stdout } = await run('java', [...SHORT_JVM, '-cp', classpath, 'DecodeResponsesKt', input],
      { maxBuffer: 16 << 20 })
    const result = JSON.parse(stdout) as {
      answers: Array<{ name: string, encoded: unknown, problems: string[] }>
      dates: Array<{ kind: string, value: string, error: string | null }>
    }
    const byName = new Map(result.answers.map(a => [a.name, a]))
    for (const { name, type, body } of live) {
      const decoded = byName.get(name)!
      t.strictSame(decoded.problems, [], `${name}: no null in a non-null property, no unknown enum value`)
      t.strictSame(differences(components[type]!, body, decoded.encoded), [],
        `${name}: every property of the document decoded as sent`)
    }
    const empty = byName.get(controls[0]!.name)!
    t.match(empty.problems, ['/code: null in a non-null property'], 'Gson lets {} through; the check sees it')
    t.match(differences(components.ErrorBody!, {}, empty.encoded), ['/statusCode: required, not in the answer'])
    const newer = byName.get(controls[1]!.name)!
    t.strictSame(newer.problems, ['/degraded/0: a value the models do not know'], 'read as Unknown, not null')
    t.match(differences(components.Profile!, unknownValue, newer.encoded), [/^\/degraded\/0: "" decoded/])

    for (const date of result.dates) t.equal(date.error, null, `${date.kind} ${date.value} parses with java.time`)
    t.equal(result.dates.length, dates.filter(d => d.kind !== undefined).length, 'every date parsed')
  })
})

/** Each Swift String enum's raw values. */
function swiftEnums (swift: string): Map<string, string[]> {
  return new Map([...swift.matchAll(/^public enum (\w+): String, Codable \{\n([\s\S]*?)^\}$/gm)]
    .map(m => [m[1]!, [...m[2]!.matchAll(/^ {4}case \w+ = "([^"]*)"$/gm)].map(c => c[1]!)]))
}

// ---- The other flavour and the Swift, as text ----------------------------------------------------------------

/** Each Kotlin data class's properties by wire name: the annotation's name, the declared type and its default. */
function kotlinClasses (kotlin: string, annotation: string): Map<string, Map<string, string>> {
  const classes = new Map<string, Map<string, string>>()
  for (const match of kotlin.matchAll(/^data class (\w+) \(\n([\s\S]*?)^\)$/gm)) {
    const properties = new Map<string, string>()
    const body = match[2]!
    for (const line of body.matchAll(new RegExp(`^ {4}@${annotation}\\("([^"]+)"\\)\\n {4}val \\w+: (.+?),?$`, 'gm'))) {
      properties.set(line[1]!, line[2]!)
    }
    const vals = [...body.matchAll(/^ {4}val /gm)].length
    classes.set(match[1]!, vals === properties.size ? properties : new Map([['(a val without its annotation)', '']]))
  }
  return classes
}

/** Each Kotlin enum's entries as [wire name in the annotation, wire value in the constructor]. */
function kotlinEnums (kotlin: string, annotation: string): Map<string, string[][]> {
  const enums = new Map<string, string[][]>()
  for (const match of kotlin.matchAll(/^enum class (\w+)\(val value: String\) \{\n([\s\S]*?)^\}$/gm)) {
    enums.set(match[1]!, [...match[2]!.matchAll(new RegExp(`^ {4}@${annotation}\\("([^"]*)"\\) \\w+\\("([^"]*)"\\),$`,
      'gm'))].map(m => [m[1]!, m[2]!]))
  }
  return enums
}

/** Each Swift struct's fields by JSON key: the declared type, read from its CodingKeys and `let` lines. */
function swiftStructs (swift: string): Map<string, Map<string, string>> {
  const structs = new Map<string, Map<string, string>>()
  for (const match of swift.matchAll(/^public struct (\w+): Codable \{\n([\s\S]*?)^\}/gm)) {
    const body = match[2]!
    const types = new Map([...body.matchAll(/^ {4}public let (\w+): (.+)$/gm)].map(m => [m[1]!, m[2]!]))
    const keys = [...body.matchAll(/^ {8}case (\w+) = "([^"]+)"$/gm)]
    structs.set(match[1]!, new Map(keys.map(([, name, key]) => [key!, types.get(name!) ?? '(no let)'])))
  }
  return structs
}

for (const [flavour, annotation] of [['kotlinx', 'SerialName'], ['gson', 'SerializedName']] as const) {
  t.test(`the ${flavour} flavour names every wire name; optional and nullable as the document says`, async t => {
    const out = t.testdir()
    await runModels(['--out', out, '--package', PACKAGE, ...flavour === 'kotlinx' ? [] : ['--flavour', flavour]])
    const kotlin = readFileSync(join(out, KOTLIN_FILE), 'utf8')
    t.match(kotlin, /^package ru\.dealer\.app\.api$/m, 'the package asked for')
    t.match(kotlin, `(${flavour}) from openapi.yaml`, 'the header names the flavour')
    if (flavour === 'kotlinx') t.match(kotlin, 'Json { ignoreUnknownKeys = true }', 'decoding as the contract grows')
    t.notMatch(kotlin, /^import java\.time/m, 'dates are strings')

    const classes = kotlinClasses(kotlin, annotation)
    for (const [name, schema] of objects) {
      const properties = classes.get(name)
      t.ok(properties, `a data class ${name}`)
      if (flavour === 'kotlinx') t.match(kotlin, new RegExp(`^@Serializable\\ndata class ${name} \\($`, 'm'))
      const required = new Set<string>(schema.required ?? [])
      for (const [key, property] of Object.entries(schema.properties as Json)) {
        const type = properties?.get(key)
        // Required non-null: `T`; required nullable: `T?` (kotlinx refuses the answer without it); optional:
        // `T? = null`.
        const expected = !required.has(key) ? /\? = null$/ : isNullable(property) || isAny(property) ? /\?$/ : /[^?]$/
        t.match(type, expected, `${name}.${key}: ${type}`)
      }
    }
    t.match(classes.get('ErrorBody')?.get('statusCode'), /^Long$/, 'the one camelCase key, named as it is')
    const shapeless = [['Profile', 'discount'], ['Contractor', 'last_dealer'], ['Contractor', 'contact_persons']]
    for (const [name, key] of shapeless) {
      const raw = flavour === 'kotlinx' ? /^Json(Object|Array)\??$/ : /^(Map<String, Any\?>|List<Any\?>)\??$/
      t.match(classes.get(name!)?.get(key!), raw, `${name}.${key}: raw JSON`)
      t.match(kotlin, new RegExp(`${SHAPELESS_NOTE.split(' ').slice(0, 4).join(' ')}[\\s\\S]{0,200}` +
        `@${annotation}\\("${key}"\\)`), `${name}.${key}: a comment says its shape is not documented`)
    }

    const enums = kotlinEnums(kotlin, annotation)
    for (const values of documentEnums) {
      const wireNames = new Map([...enums].map(([name, entries]) => [name, entries.map(([wire]) => wire!)]))
      const found = enumOf(wireNames, values)
      t.ok(found, `an enum of ${values.join(', ')}`)
      if (found === undefined) continue
      const name = found[0]
      for (const [wire, value] of enums.get(name)!) t.equal(value, wire, `${name} ${wire}: its value is its wire name`)
      t.match(kotlin, new RegExp(`^enum class ${name}\\(val value: String\\) \\{[\\s\\S]*?^ {4}Unknown\\(""\\);$`, 'm'),
        `${name} has Unknown`)
      const lenient = flavour === 'kotlinx'
        ? [`@Serializable(with = ${name}Serializer::class)`, `object ${name}Serializer : KSerializer<${name}>`]
        : [`@JsonAdapter(${name}Adapter::class)`, `class ${name}Adapter : TypeAdapter<${name}>()`]
      for (const text of lenient) t.match(kotlin, text, `${name}: an unknown value read as Unknown`)
    }
  })
}

t.test('the Swift: CodingKeys with every wire name, enums that read an unknown value as .unknown', async t => {
  const out = t.testdir()
  const files = await runModels(['--out', out])
  t.strictSame(files, [join(out, KOTLIN_FILE), join(out, SWIFT_FILE)])
  const swift = readFileSync(join(out, SWIFT_FILE), 'utf8')
  t.notMatch(swift, /^import (?!Foundation$)/m, 'Foundation only')
  const structs = swiftStructs(swift)
  for (const [name, schema] of objects) {
    const fields = structs.get(name)
    t.ok(fields, `a Codable struct ${name}`)
    if (fields === undefined) continue
    const required = new Set<string>(schema.required ?? [])
    for (const [key, property] of Object.entries(schema.properties as Json)) {
      const type = fields.get(key)
      t.ok(type, `${name}.${key} has its CodingKey`)
      const said = `${required.has(key) ? 'required' : 'optional'}${isNullable(property) ? ', nullable' : ''}`
      t.equal(type?.endsWith('?'), !required.has(key) || isNullable(property), `${name}.${key}: ${type} (${said})`)
      if (resolve(property).format === 'date-time') {
        t.equal(type?.replace('?', ''), 'String', `${name}.${key}: a string`)
      }
    }
  }
  t.equal(structs.get('Profile')?.get('stale'), '[Stale]', 'response enums are Swift enums')
  const enums = swiftEnums(swift)
  for (const values of documentEnums) {
    const found = enumOf(enums, values)
    t.ok(found, `an enum of ${values.join(', ')}`)
    if (found === undefined) continue
    const name = found[0]
    t.ok(found[1].includes(''), `${name} has .unknown`)
    t.match(swift, `    public init(from decoder: Decoder) throws {
        self = ${name}(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .unknown
    }`, `${name} reads an unknown value as .unknown`)
  }
  for (const name of ['Error', 'Data', 'Date', 'URL', 'UUID', 'String', 'Decimal']) {
    t.notMatch(swift, new RegExp(`^public (struct|enum|class) ${name}\\b`, 'm'), `no type shadows Swift's ${name}`)
  }
})

t.test('--from reads the document a running service serves, the same as the committed one', async t => {
  const { app } = await buildTestApp(t)
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  const out = t.testdir()
  await runModels(['--out', out, '--from', `${origin}/docs/json`])
  const served = readFileSync(join(out, KOTLIN_FILE), 'utf8')
  await runModels(['--out', out])
  const committed = readFileSync(join(out, KOTLIN_FILE), 'utf8')
  t.match(served, new RegExp(`^package ${DEFAULT_PACKAGE.replaceAll('.', '\\.')}$`, 'm'), 'the default package')
  t.equal(served.split('\n').slice(1).join('\n'), committed.split('\n').slice(1).join('\n'),
    'the same types; only the header names the source')
  t.match(served, `from ${origin}/docs/json`)

  await t.rejects(readComponents(`${origin}/nowhere`), new ModelsError(`${origin}/nowhere answered 404, ` +
    'not the OpenAPI document'))
  await t.rejects(readComponents(`${origin}/health/live`), { message: /is not an OpenAPI document/ })
  await app.close()
  await t.rejects(readComponents(`${origin}/docs/json`), { message: new RegExp(`^cannot reach ${origin}`) })
})

t.test('bad arguments are named, all at once', async t => {
  t.throws(() => parseModelsArgs([]), new ModelsError('--out DIR is required'))
  t.throws(() => parseModelsArgs(['--out', 'x', '--package', 'com.1x', '--from', 'nope', '--flavour', 'moshi']),
    new ModelsError(`--package "com.1x" is not a Kotlin package name such as ${DEFAULT_PACKAGE}; ` +
      '--from nope is not a URL; --flavour moshi is not one of kotlinx, gson'))
  t.throws(() => parseModelsArgs(['--out', 'x', '--from', 'file:///etc/passwd']),
    { message: '--from file:///etc/passwd is not an http or https URL' })
  t.throws(() => parseModelsArgs(['--out', 'x', '--lang', 'go']), { message: /Unknown option '--lang'/ })
  t.strictSame(parseModelsArgs(['--out', 'x']),
    { out: 'x', from: undefined, packageName: DEFAULT_PACKAGE, flavour: 'kotlinx' })
  t.equal(parseModelsArgs(['--out', 'x', '--flavour', 'gson']).flavour, 'gson')
})

t.test('the command line: files written, or the problem and the usage on stderr with exit 1', async t => {
  const out = t.testdir()
  const ok = await run(process.execPath, ['scripts/models.ts', '--out', out, '--flavour', 'gson'])
  t.match(ok.stdout, `wrote ${join(out, KOTLIN_FILE)}`)
  t.match(readFileSync(join(out, KOTLIN_FILE), 'utf8'), '@SerializedName("uid_client")')
  t.ok(existsSync(join(out, SWIFT_FILE)))
  const bad = await run(process.execPath, ['scripts/models.ts', '--package', 'x-y']).catch(error => error)
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^npm run models: --out DIR is required; --package "x-y" is not a Kotlin package name/)
  t.match(bad.stderr, 'Usage: npm run models -- --out DIR')
  t.match(bad.stderr, '--flavour kotlinx|gson')
})
