// The lint rules that keep the layers pointing one way (eslint.config.js, docs/architecture.md) fail on
// a deliberate import cycle and on an import that points up a layer.
import t from 'tap'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Lints files written under `dir` (inside the checkout, so the project's config and zones apply). */
async function lint (t: Test, dir: string, files: Record<string, string>) {
  const base = join(ROOT, dir)
  mkdirSync(base, { recursive: true })
  t.teardown(() => rmSync(base, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(base, name), text)
  const eslint = new ESLint({ cwd: ROOT })
  const results = await eslint.lintFiles(Object.keys(files).map(name => join(base, name)))
  return results.flatMap(result => result.messages.map(message => message.ruleId))
}

t.test('an import cycle fails the lint', async t => {
  const rules = await lint(t, 'src/zz-lint-cycle', {
    'a.ts': "import { b } from './b.ts'\nexport const a = (): unknown => b\n",
    'b.ts': "import { a } from './a.ts'\nexport const b = (): unknown => a\n"
  })
  t.ok(rules.includes('import-x/no-cycle'), 'import-x/no-cycle reports it')
})

t.test('a type-only cycle across layers fails too, by the layer zones', async t => {
  const rules = await lint(t, 'src/upstream/zz-lint-layer', {
    'up.ts': "import type { Caller } from '../../plugins/app/auth.ts'\nexport type C = Caller\n"
  })
  t.ok(rules.includes('import-x/no-restricted-paths'), 'the upstream client may not import a plugin')
})

t.test('production code may not import the sandbox', async t => {
  const rules = await lint(t, 'src/zz-lint-sandbox', {
    'x.ts': "import { signToken } from '../../sandbox/sign.ts'\nexport const s = signToken\n"
  })
  t.ok(rules.includes('import-x/no-restricted-paths'))
})

t.test('the schemas may not import src/: they are the source of truth src/ builds on', async t => {
  const rules = await lint(t, 'schemas/zz-lint-src', {
    'x.ts': "import { operations } from '../../src/upstream/client.ts'\nexport const o = operations\n"
  })
  t.ok(rules.includes('import-x/no-restricted-paths'))
})

t.test('the tree as it is passes the layer rules', async t => {
  const eslint = new ESLint({ cwd: ROOT })
  const results = await eslint.lintFiles(['src', 'schemas', 'bench'])
  const layered = results.flatMap(result => result.messages
    .filter(message => message.ruleId === 'import-x/no-cycle' || message.ruleId === 'import-x/no-restricted-paths')
    .map(message => `${result.filePath}:${message.line} ${message.message}`))
  t.strictSame(layered, [])
})
