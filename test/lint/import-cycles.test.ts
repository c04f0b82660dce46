// No import cycle anywhere in the code, type-only imports included: ESLint's import-x/no-cycle skips `import type`,
// so a cycle held by a type alone would pass the lint. The graph is built from each file's imports as TypeScript
// reads them (static, type-only, `import()` types and calls, re-exports), relative specifiers only.
import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The code whose imports must point one way (tests may import anything of it). */
const FOLDERS = ['src', 'schemas', 'sandbox', 'scripts', 'bench']
const CODE = /\.(?:ts|cjs|mjs|js)$/

function codeFiles (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return codeFiles(path)
    return CODE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** The import graph of `sources` (path to text): each file to the files of the set it imports. */
function importGraph (sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const [file, text] of sources) {
    const { importedFiles } = ts.preProcessFile(text, true, true)
    graph.set(file, importedFiles
      .filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName }) => resolve(dirname(file), fileName))
      .filter(target => sources.has(target)))
  }
  return graph
}

/** Every cycle's files (strongly connected components of more than one file, or a file importing itself). */
function cycles (graph: ReadonlyMap<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const found: string[][] = []
  const visit = (file: string): void => {
    index.set(file, next)
    low.set(file, next++)
    stack.push(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!))
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || graph.get(file)!.includes(file)) found.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

t.test('a cycle held only by a type import is found', async t => {
  const sources = new Map([
    ['/x/a.ts', "import { b } from './b.ts'\nexport const a = b"],
    ['/x/b.ts', "import type { C } from './c.ts'\nexport const b: C = 1"],
    ['/x/c.ts', "import { a } from './a.ts'\nexport type C = typeof a"],
    ['/x/d.ts', "import { a } from './a.ts'\nexport const d = a"]
  ])
  t.strictSame(cycles(importGraph(sources)), [['/x/a.ts', '/x/b.ts', '/x/c.ts']])
  sources.set('/x/b.ts', 'export const b = 1')
  t.strictSame(cycles(importGraph(sources)), [], 'none once the type import is gone')
})

t.test('the code has no import cycle, type imports included', async t => {
  const files = FOLDERS.flatMap(folder => existsSync(join(ROOT, folder)) ? codeFiles(join(ROOT, folder)) : [])
  const graph = importGraph(new Map(files.map(file => [file, readFileSync(file, 'utf8')])))
  t.ok(graph.size > 100, `${graph.size} files read`)
  t.ok([...graph.values()].some(targets => targets.length > 0), 'imports resolved')
  t.strictSame(cycles(graph).map(cycle => cycle.map(file => relative(ROOT, file))), [])
})
