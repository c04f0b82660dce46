// docs/configuration.md is the one table of variables: it must be ConfigSchema's list, with its defaults, and any
// other table of the docs that names a variable must show that variable's current default.
import { readdirSync } from 'node:fs'
import t from 'tap'
import { ConfigSchema } from '../../src/config.ts'
import { page, root, section, tableRows } from './markdown.ts'

const configuration = page('docs/configuration.md')
const properties = ConfigSchema.properties as Record<string, { default?: unknown }>

t.test('the variable table names every ConfigSchema variable with its default, and no other', async t => {
  const rows = tableRows(section(configuration, 'Variables'))
  const names = Object.keys(properties)
  t.strictSame([...rows.keys()].sort(), [...names].sort(), 'one row per variable of src/config.ts')
  const required = new Set<string>((ConfigSchema as { required?: string[] }).required ?? [])
  for (const [name, schema] of Object.entries(properties)) {
    const last = rows.get(name)?.at(-1) ?? ''
    if (schema.default !== undefined) {
      t.match(last, `\`${String(schema.default)}\``,
        `${name} defaults to ${String(schema.default)}`)
    } else if (required.has(name)) t.match(last, 'required', `${name} is required`)
    else t.match(last, 'unset', `${name} is optional`)
  }
})

t.test('no other page repeats the variable table', async t => {
  const others = ['README.md', ...readdirSync(root('docs')).map(name => `docs/${name}`)]
    .filter(path => path.endsWith('.md') && path !== 'docs/configuration.md')
  for (const path of others) {
    const named = [...tableRows(page(path)).keys()].filter(name => name in properties)
    t.ok(named.length < 5, `${path} has no table of ConfigSchema variables (names ${named.join(', ') || 'none'})`)
    // A variable a table does name (a small example table) shows its current default.
    for (const [name, cells] of tableRows(page(path))) {
      const schema = properties[name]
      if (schema?.default === undefined) continue
      t.match(cells.at(-1), `\`${String(schema.default)}\``, `${path}: ${name} defaults to ${String(schema.default)}`)
    }
  }
})
