// SECURITY.md points at tests: every file it names must exist, and every OWASP row must name one.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'

const text = readFileSync(new URL('../../SECURITY.md', import.meta.url), 'utf8')

t.test('every OWASP API Top 10 (2023) item has a row that names a test', async t => {
  for (let i = 1; i <= 10; i++) {
    const row = text.split('\n').find(line => line.startsWith(`| API${i} |`))
    t.ok(row, `API${i} has a row`)
    t.match(row ?? '', /`test\/[\w/.-]+\.test\.ts`/, `API${i} names a test file`)
  }
})

t.test('every test file SECURITY.md names exists', async t => {
  const files = [...new Set(text.match(/test\/[\w/.-]+\.test\.ts/g) ?? [])]
  t.ok(files.length > 10)
  for (const file of files) t.ok(existsSync(new URL(`../../${file}`, import.meta.url)), `${file} exists`)
})
