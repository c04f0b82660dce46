// The README is a newcomer's first page: what it states about commands, variables, error codes and files
// is checked against the code, so it cannot drift.
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import pkg from '../../package.json' with { type: 'json' }
import { ConfigSchema } from '../../src/config.ts'
import * as catalog from '../../src/errors.ts'

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))
const readme = readFileSync(root('README.md'), 'utf8')

/** The text of one `## ` section, up to the next one. */
function section (title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`)
  if (start === -1) return ''
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
}

/** The cells of every table row whose first cell is a backticked name, keyed by that name. */
function tableRows (text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const cells = line.split('|').slice(1, -1).map(cell => cell.trim())
    for (const name of /^`[A-Z0-9_]+`(?:, `[A-Z0-9_]+`)*$/.test(cells[0] ?? '') ? cells[0]!.match(/[A-Z0-9_]+/g)! : []) {
      rows.set(name, cells)
    }
  }
  return rows
}

t.test('the two set-up commands are near the top, exactly', async t => {
  const top = readme.split('\n').slice(0, 30).join('\n')
  t.match(top, /^npm ci && npm run dev\s/m)
  t.match(top, /^npm ci && npm test\s/m)
})

t.test('the configuration table names every ConfigSchema variable with its default, and no other', async t => {
  const rows = tableRows(section('Configuration'))
  const names = Object.keys(ConfigSchema.properties)
  t.strictSame([...rows.keys()].sort(), [...names].sort(), 'one row per variable of src/config.ts')
  const required = new Set<string>((ConfigSchema as { required?: string[] }).required ?? [])
  for (const [name, schema] of Object.entries(ConfigSchema.properties) as Array<[string, { default?: unknown }]>) {
    const last = rows.get(name)?.at(-1) ?? ''
    if (schema.default !== undefined) t.match(last, `\`${String(schema.default)}\``, `${name} defaults to ${String(schema.default)}`)
    else if (required.has(name)) t.match(last, 'required', `${name} is required`)
    else t.match(last, 'unset', `${name} is optional`)
  }
})

t.test('every other table that names a variable shows its current default', async t => {
  const rows = tableRows(readme.replace(section('Configuration'), ''))
  const properties = ConfigSchema.properties as Record<string, { default?: unknown }>
  for (const [name, cells] of rows) {
    const schema = properties[name]
    if (schema?.default === undefined) continue
    t.match(cells.at(-1), `\`${String(schema.default)}\``, `${name} defaults to ${String(schema.default)}`)
  }
})

t.test('the error code table has every code of src/errors.ts with its status', async t => {
  const rows = tableRows(section('Error codes'))
  // Each catalog error, made without arguments, tells its own code and status.
  type CatalogError = new () => { code: string, statusCode: number }
  const errors = Object.values(catalog)
    .filter(value => typeof value === 'function')
    .map(ErrorClass => new (ErrorClass as unknown as CatalogError)())
  t.strictSame([...rows.keys()].sort(), [...catalog.errorCodes].sort(), 'one row per code')
  t.equal(errors.length, catalog.errorCodes.length, 'one error class per code')
  for (const { code, statusCode } of errors) t.equal(rows.get(code)?.[1], String(statusCode), `${code} is ${statusCode}`)
})

t.test('every npm script it names exists', async t => {
  const named = new Set([...readme.matchAll(/npm run (?:-s )?([\w:-]+)/g)].map(m => m[1]!))
  t.ok(named.has('dev') && named.has('token') && named.has('test:contract'))
  for (const script of named) t.ok(script in pkg.scripts, `npm run ${script}`)
})

t.test('every CONTRACT_* variable the contract tests read is documented', async t => {
  const source = readFileSync(root('test/contract/upstream.contract.test.ts'), 'utf8')
  const variables = new Set(source.match(/CONTRACT_[A-Z_]+/g))
  t.ok(variables.size > 0)
  for (const name of variables) t.match(section('Tests'), `\`${name}\``, name)
})

t.test('every file or folder it names exists', async t => {
  const layout = section('Code layout')
  // Entries start at column 0 (top level) or 2 (inside the folder above); deeper lines continue a description.
  const listed = [...layout.matchAll(/^( {0,2})([\w.-]+(?:\/[\w.-]+)*\/?)\s/gm)]
  let folder = ''
  const paths: string[] = []
  for (const [, indent, name] of listed) {
    if (name === undefined) continue
    const path = indent === '' ? name : folder + name
    if (indent === '' && name.endsWith('/')) folder = name
    paths.push(path)
  }
  const quoted = [...readme.matchAll(/`((?:src|schemas|scripts|test|bench|\.ci)\/[\w./-]*)`/g)].map(m => m[1]!)
  t.ok(paths.length > 10, 'the layout lists the tree')
  for (const path of new Set([...paths, ...quoted])) t.ok(existsSync(root(path)), path)
})

t.test('the nginx configuration it shows is the one the load-balancer test runs', async t => {
  const shown = /```nginx\n([\s\S]*?)```/.exec(section('Running several instances'))?.[1]
  t.equal(shown, readFileSync(root('deploy/nginx/dealer-bff.conf'), 'utf8'), 'README and deploy/nginx/dealer-bff.conf are the same text')
})
