// The repository explains itself: no comment of the code and no page of the docs names a repository file that does
// not exist (a path from a top-level folder, a relative path or link, a bare file name), and nothing cites the
// documents the service was first specified in, which the repository does not have (docs/ holds what they said).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** Where the comments and docs are read. */
const SCANNED = ['src', 'schemas', 'sandbox', 'scripts', 'bench', 'test', 'docs', 'README.md', 'SECURITY.md']
/** Never part of the repository: installed, generated or local. */
const SKIPPED = new Set(['node_modules', '.git', '.tap', 'coverage', 'test-output', 'scratch'])
const CODE = /\.(?:ts|cjs|mjs|js)$/
/** Local files the repository never holds (git-ignored): naming them is fine. */
const LOCAL = /(?:^|\/)\.env(?:\.[\w.-]*)?$/
/** Files outside the repository that a comment or a page may not cite. */
const OUTSIDE = /\b(?:design|upstream-spec)\.md\b/g

/** Every file and folder of the repository, relative to its root; folders end with a slash. */
function tree (dir = ''): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap(entry => {
    if (SKIPPED.has(entry.name)) return []
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`
    return entry.isDirectory() ? [`${path}/`, ...tree(path)] : [path]
  })
}

interface Repository { paths: ReadonlySet<string>, tops: readonly string[], basenames: ReadonlySet<string> }

function repository (paths: readonly string[]): Repository {
  return {
    paths: new Set(paths),
    tops: paths.filter(path => /^[^/]+\/$/.test(path)).map(path => path.slice(0, -1)),
    basenames: new Set(paths.filter(path => !path.endsWith('/')).map(path => path.slice(path.lastIndexOf('/') + 1)))
  }
}

/** Whether `path` (from the root; a trailing slash asks for a folder; `*` and `<name>` stand for any name) exists. */
function exists (repo: Repository, path: string): boolean {
  const clean = normalize(path).replace(/\\/g, '/')
  if (!/[*<]/.test(clean)) return repo.paths.has(clean) || repo.paths.has(`${clean}/`)
  const pattern = clean.split(/(\*\*|\*|<[^>/]*>)/).map(part =>
    part === '**' ? '.*' : part === '*' || part.startsWith('<') ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
  const wanted = new RegExp(`^${pattern.join('')}/?$`)
  return [...repo.paths].some(candidate => wanted.test(candidate))
}

/** JSDoc's own nodes: their text is the comment the next token's trivia holds. */
const isJsDoc = (node: ts.Node) => node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode

/** The comments of a source file, with their offsets: every comment between tokens, found by the TypeScript parser. */
function comments (file: string, text: string): Array<{ at: number, text: string }> {
  const kind = file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind)
  const found = new Map<number, string>()
  const visit = (node: ts.Node): void => {
    // Between two tokens: the comments on the line of the one before, then those on the lines above the next.
    const ranges = [
      ...ts.getTrailingCommentRanges(text, node.pos) ?? [], ...ts.getLeadingCommentRanges(text, node.pos) ?? []
    ]
    for (const range of ranges) found.set(range.pos, text.slice(range.pos, range.end))
    for (const child of node.getChildren(source)) if (!isJsDoc(child)) visit(child)
  }
  visit(source)
  return [...found].map(([at, comment]) => ({ at, text: comment }))
}

const PATH_CHARS = String.raw`[\w.*<>/-]`
// A name not glued to a longer word, path, URL, package or route (`@scope/pkg/x`, `https://h/docs/x`, `/docs/json`).
const BEFORE = String.raw`(?<![\w.*/@:~$\\-])`

/** The repository paths a text names, each resolved from the root, with its offset in the text. */
function namedPaths (
  repo: Repository, file: string, text: string, markdown: boolean
): Array<{ at: number, named: string, path: string }> {
  const named: Array<{ at: number, named: string, path: string }> = []
  const trim = (path: string) => path.replace(/[.>-]+$/, '')
  // A file has an extension, a folder a trailing slash; a bare `deploy/dealer-profile-bff` is a Kubernetes name.
  const pathLike = (path: string) => /\/$|\.\w+$|[*<]/.test(path)
  const fromRoot = new RegExp(`${BEFORE}((?:${repo.tops.map(top => top.replace(/\./g, '\\.')).join('|')})/${PATH_CHARS}*)`, 'g')
  for (const match of text.matchAll(fromRoot)) {
    if (pathLike(trim(match[1]!))) named.push({ at: match.index, named: match[1]!, path: trim(match[1]!) })
  }
  const fromHere = new RegExp(`${BEFORE}(\\.\\.?/${PATH_CHARS}+)`, 'g')
  for (const match of text.matchAll(fromHere)) {
    if (!pathLike(trim(match[1]!))) continue
    named.push({ at: match.index, named: match[1]!, path: relative(ROOT, join(ROOT, dirname(file), trim(match[1]!))) })
  }
  if (markdown) {
    // Links: [text](target), the target relative to the page unless it is a URL or an anchor of the page itself.
    for (const match of text.matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)) {
      const target = match[1]!
      if (/^[a-z][a-z+.-]*:/i.test(target) || target.startsWith('/')) continue
      const at = match.index + 2
      if (named.some(other => other.at === at)) continue
      named.push({ at, named: target, path: relative(ROOT, join(ROOT, dirname(file), target)) })
    }
  }
  // A bare file name of ours (`breaker.ts`, `operations.md`) must be somewhere in the repository.
  for (const match of text.matchAll(new RegExp(`${BEFORE}([\\w-]+\\.(?:ts|cjs|md|yaml))\\b(?![\\w/-])`, 'g'))) {
    const name = match[1]!
    const inside = named.some(other => other.at <= match.index && match.index < other.at + other.named.length)
    if (!repo.basenames.has(name) && !inside) {
      named.push({ at: match.index, named: name, path: `**/${name}` })
    }
  }
  return named
}

function lineOf (text: string, at: number): number {
  return text.slice(0, at).split('\n').length
}

const paths = tree()
const repo = repository(paths)
const scanned = SCANNED.flatMap(entry => entry.includes('.')
  ? [entry]
  : paths.filter(path => path.startsWith(`${entry}/`)))
  .filter(path => (CODE.test(path) || path.endsWith('.md')) && statSync(join(ROOT, path)).isFile())

t.test('the check finds what it should and nothing else', async t => {
  const sample = repository(['src/', 'src/app.ts', 'docs/', 'docs/api.md', 'schemas/', 'schemas/operations.ts'])
  const text = [
    'src/app.ts, src/missing.ts and docs/api.md#error-codes; `docs/gone.md`; src/*.ts and docs/<page>.md.',
    '[a link](api.md) and [a broken one](../docs/nowhere.md), [a URL](https://example.com/docs/x.md).',
    'Not ours: @fastify/swagger/index.js, https://h/src/x.ts, GET /docs/json, fastify/lib/src/x.ts.',
    'operations.ts exists somewhere; resilience.ts does not; ./api.md is beside this page, ./nope.md is not.'
  ].join('\n')
  const missing = namedPaths(sample, 'docs/here.md', text, true).filter(({ path }) => !exists(sample, path))
  t.strictSame(missing.map(({ named }) => named).sort(),
    ['../docs/nowhere.md', './nope.md', 'docs/gone.md', 'resilience.ts', 'src/missing.ts'])
  t.ok(exists(sample, 'src/'), 'a folder')
  t.notOk(exists(sample, 'docs/api.md/'), 'a file is not a folder')
})

t.test('comments are what the parser says they are', async t => {
  const text = [
    '// a line comment naming src/a.ts',
    "const url = 'https://x/y' // trailing, src/b.ts",
    'const re = /\\/\\/src\\/not-a-comment.ts/',
    'const s = `$' + '{url}// src/not-either.ts`',
    '/** JSDoc src/c.ts */',
    'function f () {',
    '  g()',
    '  /* last in a block, src/d.ts */',
    '}'
  ].join('\n')
  const found = comments('x.ts', text).map(c => c.text)
  t.strictSame(found.map(c => /src\/\w+\.ts/.exec(c)?.[0]), ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'])
})

t.test('every repository path a comment or a doc names exists', async t => {
  t.ok(scanned.length > 100, `${scanned.length} files read`)
  const missing = (file: string, text: string, markdown: boolean) =>
    namedPaths(repo, file, text, markdown).filter(({ path }) => !LOCAL.test(path) && !exists(repo, path))
  let inDocs = 0
  for (const file of scanned) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    const markdown = file.endsWith('.md')
    if (markdown) inDocs += namedPaths(repo, file, text, markdown).length
    // Parsing is the slow part: only a file naming a missing path somewhere is parsed, to see whether a comment does.
    else if (missing(file, text, false).length === 0) continue
    for (const part of markdown ? [{ at: 0, text }] : comments(file, text)) {
      for (const { at, named } of missing(file, part.text, markdown)) {
        t.fail(`${file}:${lineOf(text, part.at + at)} names ${named}, which does not exist`)
      }
    }
  }
  t.ok(inDocs > 200, `${inDocs} paths named by the docs`)
})

t.test('nothing cites a document the repository does not have', async t => {
  for (const file of scanned) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    for (const match of text.matchAll(OUTSIDE)) {
      t.fail(`${file}:${lineOf(text, match.index)} cites ${match[0]}: say it in docs/ and cite that`)
    }
  }
  t.pass('none')
})
