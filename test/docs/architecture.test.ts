// docs/architecture.md's "Code layout" names every file under src/, each on its own line under its folder, and
// names none that is gone: a file added, moved or removed without its line fails here, by name.
import { readdirSync } from 'node:fs'
import t from 'tap'
import { page, root, section } from './markdown.ts'

/** Every file under src/, as a path from the repository's root. */
function sourceFiles (): string[] {
  return readdirSync(root('src'), { recursive: true, withFileTypes: true })
    .filter(entry => entry.isFile())
    .map(entry => `${entry.parentPath.slice(root('').length)}/${entry.name}`.replace(/^\/+/, ''))
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
const files = sourceFiles()

t.test('the layout is read as a tree', async t => {
  t.ok(files.length > 50, 'src/ is found')
  for (const path of ['src/', 'src/upstream/transport/', 'src/plugins/app/', 'src/profile/last-known/']) {
    t.ok(listed.has(path), `${path} is read`)
  }
})

t.test('every file under src/ has its line in the code layout', async t => {
  for (const file of files) {
    const folder = file.slice(0, file.lastIndexOf('/') + 1)
    t.ok(listed.has(file),
      `${file} is not named in docs/architecture.md's "Code layout": add a line for it under ${folder}`)
  }
})

t.test('every file the code layout names under src/ exists', async t => {
  const present = new Set(files)
  for (const path of listed) {
    if (!path.startsWith('src/') || path.endsWith('/')) continue
    t.ok(present.has(path), `docs/architecture.md's "Code layout" names ${path}, which is not in the repository`)
  }
})
