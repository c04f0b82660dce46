// The README is a newcomer's first page, and docs/ holds the rest: the README stays short, reaches every page,
// and no link or named file of either leads nowhere.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import pkg from '../../package.json' with { type: 'json' }
import { section } from './markdown.ts'
import { Profile } from '../../schemas/profile.ts'

const rootDir = fileURLToPath(new URL('../../', import.meta.url))
const root = (path: string) => join(rootDir, path)
const readme = readFileSync(root('README.md'), 'utf8')
const pages = ['README.md', 'SECURITY.md',
  ...readdirSync(root('docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)]
const texts = new Map(pages.map(page => [page, readFileSync(root(page), 'utf8')]))

/** The pages the README must link: every topic moved out of it. */
const DOCS = ['docs/api.md', 'docs/configuration.md', 'docs/operations.md', 'docs/architecture.md', 'docs/security.md',
  'docs/performance.md', 'docs/testing.md', 'docs/runbook.md', 'SECURITY.md']

/** The text outside fenced code blocks, where a link is a link. */
function prose (text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '')
}

/** The inline links of a page: [text](target), with their target split into path and anchor. */
function links (text: string): Array<{ path: string, anchor: string }> {
  return [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map(m => {
    const [path = '', anchor = ''] = m[1]!.split('#')
    return { path, anchor }
  })
}

/** GitHub's anchors for the headings of a page: lower case, punctuation dropped, spaces to hyphens. */
function anchors (text: string): Set<string> {
  const slugs = [...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map(m => m[1]!.trim().toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'))
  return new Set(slugs)
}

t.test('the two set-up commands are near the top, exactly', async t => {
  const top = readme.split('\n').slice(0, 30).join('\n')
  t.match(top, /^npm ci && npm run dev\s/m)
  t.match(top, /^npm ci && npm test\s/m)
})

t.test('the README is at most 250 lines', async t => {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0)
  t.ok(lines <= 250, `README.md has ${lines} lines`)
})

t.test('the README links every page of docs/ the rest moved to, and each exists', async t => {
  const linked = new Set(links(readme).map(link => link.path))
  for (const page of DOCS) {
    t.ok(linked.has(page), `README.md links ${page}`)
    t.ok(existsSync(root(page)), `${page} exists`)
  }
  for (const page of pages.filter(page => page.startsWith('docs/'))) t.ok(linked.has(page), `README.md links ${page}`)
})

t.test('every relative link of README.md, SECURITY.md and docs/*.md leads to a ' +
  'file, and to a heading there', async t => {
  let count = 0
  for (const [page, text] of texts) {
    for (const { path, anchor } of links(text)) {
      if (/^[a-z]+:/.test(path)) continue
      count++
      const target = path === '' ? page : relative(rootDir, join(rootDir, dirname(page), path))
      t.ok(existsSync(root(target)), `${page} → ${path}`)
      if (anchor !== '' && target.endsWith('.md') && existsSync(root(target))) {
        t.ok(anchors(readFileSync(root(target), 'utf8')).has(anchor), `${page} → ${path}#${anchor}`)
      }
    }
  }
  t.ok(count > 20, 'the pages link each other')
})

t.test('every npm script they name exists', async t => {
  const named = new Set([...[...texts.values()].join('\n').matchAll(/npm run (?:-s )?([\w:-]+)/g)].map(m => m[1]!))
  t.ok(named.has('dev') && named.has('token') && named.has('test:contract') && named.has('bench'))
  for (const script of named) t.ok(script in pkg.scripts, `npm run ${script}`)
})

t.test('every file or folder they name in backquotes exists', async t => {
  const pattern = /`((?:src|schemas|scripts|sandbox|test|bench|deploy|docs|\.ci)\/[\w./-]*)`/g
  const quoted = new Set([...[...texts.values()].join('\n').matchAll(pattern)].map(m => m[1]!))
  t.ok(quoted.size > 30, 'the pages name files')
  for (const path of quoted) t.ok(existsSync(root(path)), path)
})

t.test('the README names every variable npm run dev reads, and every field of the profile', async t => {
  const dev = readFileSync(root('sandbox/dev.ts'), 'utf8')
  const read = new Set([...dev.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map(m => m[1]!))
  t.ok(read.has('PORT') && read.has('AUTH_JWT_ISSUER'), 'the variables are found in sandbox/dev.ts')
  const tour = section(readme, 'Five-minute tour on the sandbox')
  for (const name of read) t.match(tour, `\`${name}\``, `the tour names ${name}`)
  for (const field of Object.keys(Profile.properties)) {
    t.match(readme, new RegExp(`\`${field}(?:\`|: )`), `the README names ${field}`)
  }
})

t.test('the README says how to try npm start on the stand-in upstream', async t => {
  t.match(section(readme, 'Running against a real upstream (`npm start`)'), /`npm run sandbox`/)
})
