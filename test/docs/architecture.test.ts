// docs/architecture.md's "Code layout" is the plan a newcomer reads first: every folder under src/ has its line,
// and every file or folder it names exists. It need not name every file: a file split or added inside a folder
// costs no doc edit, a folder added, moved or removed does, and a name left behind fails here, by name.
import { readdirSync } from 'node:fs'
import t from 'tap'
import { page, root, section } from './markdown.ts'

/** Every file and folder under src/, as a path from the repository's root; a folder ends with a slash. */
function sourcePaths (): string[] {
  return readdirSync(root('src'), { recursive: true, withFileTypes: true })
    .map(entry => `${entry.parentPath.slice(root('').length)}/${entry.name}${entry.isDirectory() ? '/' : ''}`
      .replace(/^\/+/, ''))
    .sort()
}

/**
 * The paths the layout's text block names. An entry is a name at column 0, 2, 4 or 6 (one level per two spaces)
 * followed by a space; a folder ends with `/`. Lines indented deeper continue a description.
 */
function layoutPaths (): string[] {
  const layout = /```text\n([\s\S]*?)```/.exec(section(page('docs/architecture.md'), 'Code layout'))?.[1] ?? ''
  const folders: string[] = []
  const paths: string[] = []
  for (const [, indent, name] of layout.matchAll(/^((?: {2}){0,3})([\w.-]+\/?)(?: |$)/gm)) {
    if (name === undefined || indent === undefined) continue
    const level = indent.length / 2
    const path = folders.slice(0, level).join('') + name
    if (name.endsWith('/')) folders.splice(level, Infinity, name)
    paths.push(path)
  }
  return paths
}

const listed = new Set(layoutPaths())
const paths = sourcePaths()

t.test('the layout is read as a tree', async t => {
  t.ok(paths.length > 50, 'src/ is found')
  for (const path of ['src/', 'src/upstream/transport/', 'src/plugins/app/', 'src/profile/last-known/', 'src/app.ts']) {
    t.ok(listed.has(path), `${path} is read`)
  }
})

t.test('every folder under src/ has its line in the code layout', async t => {
  for (const folder of paths.filter(path => path.endsWith('/'))) {
    t.ok(listed.has(folder), `${folder} is not named in docs/architecture.md's "Code layout": add a line for it`)
  }
})

t.test('every file or folder the code layout names under src/ exists', async t => {
  const present = new Set(['src/', ...paths])
  for (const path of listed) {
    if (!path.startsWith('src/')) continue
    t.ok(present.has(path), `docs/architecture.md's "Code layout" names ${path}, which is not in the repository`)
  }
})
