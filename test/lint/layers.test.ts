// The lint rules that keep the layers pointing one way (eslint.config.js, docs/architecture.md): each zone of
// import-x/no-restricted-paths fails on a deliberate violation, the imports the layer table allows pass, a route or a
// plugin importing a value from a plugin (a plugin file, or a plugin folder's index.ts) fails while a type and the
// modules beside a plugin in its folder pass, and an import cycle fails. The project's config is copied into a
// temporary directory and only a few synthetic files are linted there: nothing is written into the checkout, and the
// real tree is linted by `npm run lint`.
import t from 'tap'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ESLint, type Linter } from 'eslint'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** One synthetic file of the temporary tree that imports another (a value, unless `type`). */
interface Case { file: string, imports: string, type?: true }

/** Imports that break a zone: each must be reported (and between them, every zone must be). */
const violations: Case[] = [
  { file: 'src/x.ts', imports: 'sandbox/sign.ts' },
  { file: 'src/upstream/x.ts', imports: 'test/helpers/tokens.ts' },
  { file: 'schemas/x.ts', imports: 'src/upstream/client.ts' },
  { file: 'bench/x.ts', imports: 'test/helpers/tokens.ts' },
  { file: 'src/errors.ts', imports: 'src/plugins/app/errors/index.ts' },
  { file: 'src/client-errors.ts', imports: 'src/app.ts' },
  { file: 'src/config/x.ts', imports: 'src/upstream/client.ts' },
  { file: 'src/tracing/x.ts', imports: 'src/upstream/client.ts' },
  { file: 'src/tracing/x.ts', imports: 'src/plugins/app/metrics/path.ts' },
  { file: 'src/auth/x.ts', imports: 'src/plugins/app/auth.ts' },
  { file: 'src/upstream/contract/x.ts', imports: 'src/upstream/client.ts' },
  { file: 'src/upstream/contract/y.ts', imports: 'src/upstream/errors.ts' },
  { file: 'src/upstream/transport/z.ts', imports: 'src/upstream/errors.ts' },
  { file: 'src/upstream/transport/x.ts', imports: 'src/upstream/breaker.ts' },
  { file: 'src/upstream/transport/y.ts', imports: 'src/tracing/tracer.ts' },
  { file: 'src/upstream/z.ts', imports: 'src/auth/caller.ts' },
  { file: 'src/upstream/y.ts', imports: 'src/profile/flow.ts' },
  { file: 'src/profile/x.ts', imports: 'src/plugins/app/auth.ts' },
  { file: 'src/profile/y.ts', imports: 'src/routes/profile/route.ts' },
  { file: 'src/plugins/app/x.ts', imports: 'src/routes/profile/route.ts' },
  { file: 'src/routes/x.ts', imports: 'src/app.ts' },
  { file: 'src/routes/feature/x.ts', imports: 'src/app.ts' },
  { file: 'src/plugins/app/y.ts', imports: 'src/routes/personal.ts' },
  { file: 'src/metrics/x.ts', imports: 'src/auth/caller.ts' },
  { file: 'src/metrics/y.ts', imports: 'src/plugins/app/app-version/metrics.ts' },
  { file: 'src/upstream/w.ts', imports: 'src/plugins/external/docs/prefix.ts' },
  { file: 'src/profile/w.ts', imports: 'src/plugins/external/rate-limit/route-limits.ts' },
  { file: 'src/profile/z.ts', imports: 'src/metrics/registry.ts' }
]

/** Value imports of a plugin file from a route or from another plugin file: each must be reported. */
const pluginValues: Case[] = [
  { file: 'src/routes/v.ts', imports: 'src/plugins/app/auth.ts' },
  { file: 'src/routes/w.ts', imports: 'src/plugins/external/rate-limit/index.ts' },
  { file: 'src/routes/feature/w.ts', imports: 'src/plugins/app/errors/index.ts' },
  { file: 'src/plugins/app/v.ts', imports: 'src/plugins/app/drain.ts' },
  { file: 'src/plugins/app/w.ts', imports: 'src/plugins/external/docs/index.ts' },
  { file: 'src/plugins/app/x.ts', imports: 'src/plugins/app/errors/index.ts' },
  { file: 'src/plugins/external/v.ts', imports: 'src/plugins/app/auth.ts' },
  { file: 'src/plugins/app/f/v.ts', imports: 'src/plugins/app/f/index.ts' },
  { file: 'src/plugins/app/f/w.ts', imports: 'src/plugins/app/auth.ts' },
  { file: 'src/plugins/app/f/x.ts', imports: 'src/plugins/external/security.ts' },
  { file: 'src/plugins/app/f/y.ts', imports: 'src/plugins/app/cache-control/index.ts' },
  { file: 'src/plugins/app/f/z.ts', imports: 'src/plugins/external/docs/index.ts' },
  { file: 'src/routes/feature/v.ts', imports: 'src/plugins/app/auth.ts' }
]

/** Imports the layer table allows: none may be reported by a zone. */
const allowed: Case[] = [
  { file: 'src/profile/ok.ts', imports: 'src/auth/caller.ts' },
  { file: 'src/profile/ok2.ts', imports: 'src/upstream/client.ts' },
  { file: 'src/upstream/errors-ok2.ts', imports: 'src/upstream/transport/exchange.ts' },
  { file: 'src/upstream/transport/ok2.ts', imports: 'src/upstream/contract/check.ts' },
  { file: 'src/upstream/errors-ok.ts', imports: 'src/upstream/contract/check.ts' },
  { file: 'src/upstream/contract/ok.ts', imports: 'src/errors.ts' },
  { file: 'src/upstream/ok.ts', imports: 'src/tracing/tracer.ts' },
  { file: 'src/shared-ok.ts', imports: 'src/config.ts' },
  { file: 'src/config.ts', imports: 'src/config/server.ts' },
  { file: 'src/config/ok.ts', imports: 'src/errors.ts' },
  { file: 'src/upstream/ok.ts', imports: 'src/config/upstream.ts' },
  { file: 'src/plugins/app/ok.ts', imports: 'src/profile/flow.ts' },
  { file: 'src/plugins/app/ok.ts', imports: 'src/plugins/app/metrics/path.ts' },
  { file: 'src/plugins/app/ok.ts', imports: 'src/plugins/external/docs/prefix.ts' },
  { file: 'src/plugins/external/ok.ts', imports: 'src/plugins/external/docs/prefix.ts' },
  { file: 'src/plugins/app/f/index.ts', imports: 'src/plugins/app/f/module.ts' },
  { file: 'src/plugins/app/f/index.ts', imports: 'src/plugins/app/cache-control/no-store.ts' },
  { file: 'src/plugins/app/f/index.ts', imports: 'src/plugins/external/rate-limit/route-limits.ts' },
  { file: 'src/plugins/app/f/index.ts', imports: 'src/metrics/registry.ts' },
  { file: 'src/plugins/app/f/ok.ts', imports: 'src/plugins/app/auth.ts', type: true },
  { file: 'src/plugins/app/ok.ts', imports: 'src/metrics/registry.ts' },
  { file: 'src/plugins/app/ok.ts', imports: 'src/plugins/app/metrics/index.ts', type: true },
  { file: 'src/plugins/external/ok.ts', imports: 'src/plugins/app/auth.ts', type: true },
  { file: 'src/plugins/external/ok.ts', imports: 'src/upstream/client.ts' },
  { file: 'src/routes/ok.ts', imports: 'src/plugins/app/auth.ts', type: true },
  { file: 'src/routes/ok.ts', imports: 'src/plugins/external/rate-limit/route-limits.ts' },
  { file: 'src/routes/feature/ok.ts', imports: 'src/plugins/app/errors/error-response.ts' },
  { file: 'src/routes/feature/ok.ts', imports: 'src/plugins/app/errors/index.ts', type: true },
  { file: 'src/plugins/app/f/ok.ts', imports: 'src/auth/caller.ts' },
  { file: 'src/plugins/app/f/ok.ts', imports: 'src/config.ts' },
  { file: 'src/routes/feature/ok.ts', imports: 'src/routes/standard-responses.ts' },
  { file: 'src/metrics/ok.ts', imports: 'src/prom.ts' },
  { file: 'src/app.ts', imports: 'src/plugins/app/auth.ts' },
  { file: 'src/app.ts', imports: 'src/plugins/app/errors/index.ts' },
  { file: 'src/server.ts', imports: 'src/app.ts' },
  { file: 'src/app.ts', imports: 'src/routes/profile/route.ts' },
  { file: 'sandbox/ok.ts', imports: 'src/config.ts' }
]

/** The zones of the project's config, as written there. */
async function configuredZones (): Promise<Array<{ message: string }>> {
  const url = pathToFileURL(join(ROOT, 'eslint.config.js')).href
  const config = (await import(url) as { default: Linter.Config[] }).default
  for (const block of config) {
    const rule = block.rules?.['import-x/no-restricted-paths']
    if (Array.isArray(rule)) return (rule[1] as { zones: Array<{ message: string }> }).zones
  }
  throw new Error('eslint.config.js has no import-x/no-restricted-paths rule')
}

/** A file importing `target` (a side-effect import is a value import to the rules), relative to itself. */
function importer ({ file, imports, type }: Case): string {
  let path = relative(dirname(file), imports)
  if (!path.startsWith('.')) path = `./${path}`
  return type === true ? `import type { T } from '${path}'\n` : `import '${path}'\n`
}

const dir = mkdtempSync(join(tmpdir(), 'layers-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
// The config as it is, with the packages it loads; its basePath (import.meta.dirname) is then this directory.
copyFileSync(join(ROOT, 'eslint.config.js'), join(dir, 'eslint.config.js'))
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n')
symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')

const files = new Map<string, string>()
const cases = [...violations, ...pluginValues, ...allowed]
for (const c of cases) {
  files.set(c.file, (files.get(c.file) ?? '') + importer(c))
  if (!files.has(c.imports)) files.set(c.imports, 'export {}\n')
}
files.set('src/cycle-a.ts', "import { b } from './cycle-b.ts'\nexport const a = (): unknown => b\n")
files.set('src/cycle-b.ts', "import { a } from './cycle-a.ts'\nexport const b = (): unknown => a\n")
// The vocabulary rule (id-match): the old private words are refused as declared names, ConsoleAnswer (a component
// name of the document) and frontend pass.
const OLD_NAMES = ['answer', 'frontMetrics', 'reducedCause', 'keep', 'who']
files.set('src/names.ts', [...OLD_NAMES, 'ConsoleAnswer', 'frontend', 'keeper']
  .map(name => `export const ${name} = 1`).join('\n') + '\n')
for (const [file, text] of files) {
  mkdirSync(join(dir, dirname(file)), { recursive: true })
  writeFileSync(join(dir, file), text)
}

const linted = [...new Set(cases.map(c => c.file)), 'src/cycle-a.ts', 'src/names.ts']
const results = await new ESLint({ cwd: dir }).lintFiles(linted.map(file => join(dir, file)))
const messages = new Map(results.map(result => [relative(dir, result.filePath), result.messages]))

/** The messages `rule` reported for a case's import. */
function ruleMessages (c: Case, rule: string): string[] {
  const line = (files.get(c.file) ?? '').split('\n').indexOf(importer(c).trimEnd()) + 1
  return (messages.get(c.file) ?? [])
    .filter(message => message.ruleId === rule && message.line === line)
    .map(message => message.message)
}

const zoneMessages = (c: Case) => ruleMessages(c, 'import-x/no-restricted-paths')
const pluginImportMessages = (c: Case) => ruleMessages(c, '@typescript-eslint/no-restricted-imports')

t.test('every deliberate violation is reported by a zone', async t => {
  for (const violation of violations) {
    t.not(zoneMessages(violation).length, 0, `${violation.file} importing ${violation.imports}`)
  }
})

t.test('every zone of the config fails on one of them', async t => {
  const reported = violations.flatMap(zoneMessages).join('\n')
  for (const { message } of await configuredZones()) t.ok(reported.includes(message), message)
})

t.test('a route or a plugin importing a value from a plugin file fails', async t => {
  for (const c of pluginValues) {
    t.match(pluginImportMessages(c), [/imports no value from/], `${c.file} importing ${c.imports}`)
  }
})

t.test('the imports the layer table allows pass, types from a plugin file too', async t => {
  for (const fine of allowed) {
    const what = `${fine.file} importing ${fine.type === true ? 'types of ' : ''}${fine.imports}`
    t.strictSame([...zoneMessages(fine), ...pluginImportMessages(fine)], [], what)
  }
})

t.test('an import cycle fails the lint', async t => {
  const rules = (messages.get('src/cycle-a.ts') ?? []).map(message => message.ruleId)
  t.ok(rules.includes('import-x/no-cycle'), 'import-x/no-cycle reports it')
})

t.test('names: the old private vocabulary is refused, document names pass', async t => {
  const refused = (messages.get('src/names.ts') ?? []).filter(message => message.ruleId === 'id-match')
    .map(message => message.line)
  t.strictSame(refused, OLD_NAMES.map((_, i) => i + 1), 'each old name is reported, nothing else')
})
