// `npm run models`: the Kotlin compiles (node_modules/kotlin-compiler/bin/kotlinc-jvm, with the machine's java; in
// CI a missing java fails, elsewhere the compile is skipped with a message), the Swift is checked as text (a Codable
// struct per component, optionals as `T?`), --from reads a running service, and bad arguments are named.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { parse } from 'yaml'
import {
  DEFAULT_PACKAGE, KOTLIN_FILE, ModelsError, parseModelsArgs, readComponents, runModels, SWIFT_FILE
} from '../../scripts/models.ts'
import { buildTestApp } from '../helpers/build-app.ts'

const run = promisify(execFile)
const KOTLINC = new URL('../../node_modules/kotlin-compiler/bin/kotlinc-jvm', import.meta.url).pathname
const IN_CI = (process.env.CI ?? '') !== '' && process.env.CI !== 'false'

type Json = Record<string, any>
const components: Record<string, Json> = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'))
  .components.schemas
/** The components generated as types with fields: every object with properties (a free map is a type alias). */
const objects = Object.entries(components).filter(([, schema]) => Object.keys(schema.properties ?? {}).length > 0)

/** Whether `java` runs here. */
async function hasJava (): Promise<boolean> {
  try {
    await run('java', ['-version'])
    return true
  } catch {
    return false
  }
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

// The compiler's own JVM: about 9 s and 560 MB on an idle machine, a minute or more on a busy one.
t.setTimeout(360_000)

t.test('every component becomes a Kotlin data class that compiles and a Swift Codable struct', async t => {
  const out = t.testdir()
  const files = await runModels(['--out', out, '--package', 'ru.dealer.app.api'])
  t.strictSame(files, [join(out, KOTLIN_FILE), join(out, SWIFT_FILE)])
  const kotlin = readFileSync(join(out, KOTLIN_FILE), 'utf8')
  const swift = readFileSync(join(out, SWIFT_FILE), 'utf8')

  t.match(kotlin, /^package ru\.dealer\.app\.api$/m, 'the package asked for')
  t.notMatch(kotlin, /^import /m, 'no library, not even java.time: dates are strings')
  t.notMatch(swift, /^import (?!Foundation$)/m, 'Foundation only')
  for (const [name] of objects) t.match(kotlin, new RegExp(`^data class ${name} \\($`, 'm'), `Kotlin ${name}`)
  t.match(kotlin, /^ {4}val minAppVersion: String\? = null,$/m, 'the 426 field, optional')

  const structs = swiftStructs(swift)
  for (const [name, schema] of objects) {
    const fields = structs.get(name)
    t.ok(fields, `a Codable struct ${name}`)
    if (fields === undefined) continue
    const required = new Set<string>(schema.required ?? [])
    for (const [key, property] of Object.entries(schema.properties as Json)) {
      const type = fields.get(key)
      const nullable = (property.anyOf ?? []).some((branch: Json) => branch.type === 'null')
      t.ok(type, `${name}.${key} is a field`)
      t.equal(type?.endsWith('?'), !required.has(key) || nullable,
        `${name}.${key}: ${type} (${required.has(key) ? 'required' : 'optional'}${nullable ? ', nullable' : ''})`)
      if (property.format === 'date-time') t.equal(type?.replace('?', ''), 'String', `${name}.${key} stays a string`)
    }
  }
  t.equal(structs.get('Profile')?.get('stale'), '[Stale]', 'response enums are Swift enums')
  for (const name of ['Error', 'Data', 'Date', 'URL', 'UUID', 'String', 'Decimal']) {
    t.notMatch(swift, new RegExp(`^public (struct|enum|class) ${name}\\b`, 'm'), `no type shadows Swift's ${name}`)
  }

  const java = await hasJava()
  if (!java && IN_CI) t.fail('java not found: .ci/run installs default-jre-headless')
  const skip = java ? false : 'java not found: install a JRE (apt-get install default-jre-headless) to compile it'
  await t.test('the Kotlin compiles', { skip }, async t => {
    const classes = join(out, 'classes')
    await run(KOTLINC, [join(out, KOTLIN_FILE), '-d', classes], { timeout: 300_000 })
    const compiled = await readdir(join(classes, 'ru', 'dealer', 'app', 'api'))
    for (const [name] of objects) t.ok(compiled.includes(`${name}.class`), `${name}.class`)
  })
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
  t.throws(() => parseModelsArgs(['--out', 'x', '--package', 'com.1x', '--from', 'nope']), new ModelsError(
    `--package "com.1x" is not a Kotlin package name such as ${DEFAULT_PACKAGE}; --from nope is not a URL`))
  t.throws(() => parseModelsArgs(['--out', 'x', '--from', 'file:///etc/passwd']),
    { message: '--from file:///etc/passwd is not an http or https URL' })
  t.throws(() => parseModelsArgs(['--out', 'x', '--lang', 'go']), { message: /Unknown option '--lang'/ })
  t.strictSame(parseModelsArgs(['--out', 'x']), { out: 'x', from: undefined, packageName: DEFAULT_PACKAGE })
})

t.test('the command line: files written, or the problem and the usage on stderr with exit 1', async t => {
  const out = t.testdir()
  const ok = await run(process.execPath, ['scripts/models.ts', '--out', out])
  t.match(ok.stdout, `wrote ${join(out, KOTLIN_FILE)}`)
  t.ok(existsSync(join(out, SWIFT_FILE)))
  const bad = await run(process.execPath, ['scripts/models.ts', '--package', 'x-y']).catch(error => error)
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^npm run models: --out DIR is required; --package "x-y" is not a Kotlin package name/)
  t.match(bad.stderr, 'Usage: npm run models -- --out DIR')
})
