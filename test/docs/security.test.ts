// SECURITY.md is the reporting policy GitHub shows; docs/security.md is the threat model, and points at tests:
// every file it names must exist, and every OWASP row must name one.
import { existsSync } from 'node:fs'
import t from 'tap'
import pkg from '../../package.json' with { type: 'json' }
import { page, root, section } from './markdown.ts'

const policy = page('SECURITY.md')
const model = page('docs/security.md')

t.test('SECURITY.md says how to report privately, what to include, when we answer and what is supported', async t => {
  const reporting = section(policy, 'Reporting a vulnerability')
  t.match(reporting, /privately/i)
  t.match(reporting, /private vulnerability reporting/i, 'names GitHub private vulnerability reporting')
  t.match(reporting, /never in a public issue/i)
  t.match(reporting, /include/i, 'says what a report should hold')
  t.match(section(policy, 'What happens next'), /\d+ working days/, 'gives response times')
  const [major, minor] = pkg.version.split('.')
  t.match(section(policy, 'Supported versions'), `\`${major}.${minor}.x\``,
    `the current ${major}.${minor} line is supported`)
  t.match(policy, '](docs/security.md)', 'links the threat model')
  t.notMatch(policy, /^\| API\d+ \|/m, 'the threat model is not repeated in the policy')
})

t.test('every OWASP API Top 10 (2023) item has a row in docs/security.md that names a test', async t => {
  for (let i = 1; i <= 10; i++) {
    const row = model.split('\n').find(line => line.startsWith(`| API${i} |`))
    t.ok(row, `API${i} has a row`)
    t.match(row ?? '', /`test\/[\w/.-]+\.test\.ts`/, `API${i} names a test file`)
  }
})

t.test('every test file docs/security.md names exists', async t => {
  const files = [...new Set(model.match(/test\/[\w/.-]+\.test\.ts/g) ?? [])]
  t.ok(files.length > 10)
  for (const file of files) t.ok(existsSync(root(file)), `${file} exists`)
})

t.test('docs/security.md states the principle for callers without credentials, and each protection names its test',
  async t => {
    const principle = section(model, 'Callers without credentials, and small groups of accounts')
    t.match(principle, 'A request without valid credentials costs a small bounded amount of work and moves no state')
    t.match(principle, 'no small group of accounts can hold shared protection')
    const rows = principle.split('\n').filter(line => line.startsWith('| ') && !line.startsWith('| Protection'))
    t.ok(rows.length >= 5, 'a row per protection')
    for (const row of rows) {
      // A protection set outside the service (the ingress) says so; every other one names the test that holds it.
      t.match(row, /`test\/[\w/.-]+\.test\.ts` › |the ingress/, row.slice(0, 60))
    }
  })
