// docs/runbook.md: one entry per alert, under the alert's own name, each saying what users see, how to
// confirm, what to do and when to escalate; every runbook_url and in-page link lands on an entry; the
// panels it sends the reader to are the dashboard's; the README links it.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { DEFAULT_RUNBOOK_URL, ruleGroups, type AlertRule } from '../../scripts/alert-rules.ts'
import { dashboard } from '../../scripts/dashboard.ts'

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const runbook = read('docs/runbook.md')
const alerts = ruleGroups.flatMap(group => group.rules).filter((rule): rule is AlertRule => 'alert' in rule)
const alertNames = [...new Set(alerts.map(rule => rule.alert))]

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')

/** The level-2 sections: heading and body. */
const entries = new Map(runbook.split(/^## /m).slice(1).map(section => {
  const [heading = '', ...body] = section.split('\n')
  return [heading.trim(), body.join('\n')]
}))
const anchors = new Set([...entries.keys()].map(slug))

t.test('one entry per alert, named as the alert, and no entry for an alert that is gone', async t => {
  t.strictSame([...entries.keys()].sort(), [...alertNames].sort())
})

t.test('each entry: what users see, how to confirm, what to do, when to escalate', async t => {
  for (const [name, body] of entries) {
    for (const part of ['**What it means for users.**', '**Confirm.**', '**What to do.**', '**Escalate**']) {
      t.ok(body.includes(part), `${name}: ${part}`)
    }
  }
})

t.test('every runbook_url and every in-page link lands on an entry', async t => {
  for (const rule of alerts) {
    const [base, anchor = ''] = rule.annotations.runbook_url.split('#')
    t.equal(base, DEFAULT_RUNBOOK_URL, `${rule.alert}: the runbook's address`)
    t.ok(anchors.has(anchor), `${rule.alert}: #${anchor} exists`)
  }
  const links = [...runbook.matchAll(/\]\(#([^)]+)\)/g)].map(m => m[1]!)
  t.ok(links.length > 0)
  for (const link of links) t.ok(anchors.has(link), `#${link} exists`)
})

t.test('the panels it names are the dashboard\'s', async t => {
  const titles = new Set(dashboard().panels.map(panel => panel.title))
  // *Panel title*, possibly wrapped over two lines.
  const named = [...runbook.matchAll(/(?<!\*)\*([^*]+)\*(?!\*)/g)].map(m => m[1]!.replace(/\s+/g, ' '))
  t.ok(named.length >= 10, `${named.length} panels named`)
  for (const title of new Set(named)) t.ok(titles.has(title), `panel "${title}"`)
})

t.test('the README links the runbook', async t => {
  t.match(read('README.md'), /\]\(docs\/runbook\.md\)/)
})
