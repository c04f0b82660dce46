// What docs/ states about error codes, contract-test variables, files and the nginx site is checked against the
// code, so it cannot drift.
import { existsSync, readFileSync } from 'node:fs'
import t from 'tap'
import * as catalog from '../../src/errors.ts'
import { operations } from '../../schemas/operations.ts'
import { TRACING_HEADERS } from '../../src/upstream/transport/tracing-headers.ts'
import { page, root, section, tableRows } from './markdown.ts'

t.test('the error code table of docs/api.md has every code of src/errors.ts with its status', async t => {
  const rows = tableRows(section(page('docs/api.md'), 'Error codes'))
  // Each catalog error, made without arguments, tells its own code and status.
  type CatalogError = new () => { code: string, statusCode: number }
  const errors = Object.values(catalog)
    .filter(value => typeof value === 'function' && value.prototype instanceof Error)
    .map(ErrorClass => new (ErrorClass as unknown as CatalogError)())
  t.strictSame([...rows.keys()].sort(), [...catalog.errorCodes].sort(), 'one row per code')
  t.equal(errors.length, catalog.errorCodes.length, 'one error class per code')
  for (const { code, statusCode } of errors) {
    t.equal(rows.get(code)?.[1], String(statusCode),
      `${code} is ${statusCode}`)
  }
})

t.test('every CONTRACT_* variable the contract tests read is in docs/testing.md', async t => {
  const source = readFileSync(root('test/contract/upstream.contract.test.ts'), 'utf8')
  const variables = new Set(source.match(/CONTRACT_[A-Z_]+/g))
  t.ok(variables.size > 0)
  for (const name of variables) t.match(section(page('docs/testing.md'), 'Contract tests'), `\`${name}\``, name)
})

t.test('every file or folder of the code layout in docs/architecture.md exists', async t => {
  const layout = /```text\n([\s\S]*?)```/.exec(section(page('docs/architecture.md'), 'Code layout'))?.[1] ?? ''
  // An entry starts at column 0, 2 or 4 (one level per two spaces); deeper lines continue a description.
  const folders: string[] = []
  const paths: string[] = []
  for (const [, indent, name] of layout.matchAll(/^((?: {2}){0,2})([\w.-]+(?:\/[\w.-]+)*\/?)\s/gm)) {
    if (name === undefined || indent === undefined) continue
    const level = indent.length / 2
    const path = folders.slice(0, level).join('') + name
    if (name.endsWith('/')) folders.splice(level, Infinity, name)
    paths.push(path)
  }
  t.ok(paths.length > 30, 'the layout lists the tree')
  t.ok(paths.includes('src/upstream/transport/') && paths.includes('src/plugins/external/'), 'nested folders are read')
  for (const path of paths) t.ok(existsSync(root(path)), path)
})

t.test('the nginx configuration docs/operations.md shows is the one the fleet test runs', async t => {
  const shown = /```nginx\n([\s\S]*?)```/.exec(section(page('docs/operations.md'), 'Several instances and Redis'))?.[1]
  t.equal(shown, readFileSync(root('deploy/nginx/dealer-bff.conf'), 'utf8'),
    'the page and deploy/nginx/dealer-bff.conf are the same text')
})

t.test('docs/upstream.md has a row for every operation of the registry, and names every forwarded header', async t => {
  const text = page('docs/upstream.md')
  const rows = section(text, 'Operations').split('\n').filter(line => line.startsWith('| `'))
  t.equal(rows.length, Object.keys(operations).length, 'one row per operation')
  for (const [name, operation] of Object.entries(operations)) {
    const row = rows.find(line => line.startsWith(`| \`${name}\` |`))
    t.ok(row, name)
    t.match(row ?? '', `| \`${operation.path}\` |`, `${name} at ${operation.path}`)
    t.match(row ?? '', `| ${operation.key} |`, `${name} with the ${operation.key} key`)
  }
  for (const header of TRACING_HEADERS) t.match(section(text, 'How a call is made'), `\`${header}\``, header)
})
