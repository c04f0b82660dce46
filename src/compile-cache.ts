// `node <npm start's flags> src/compile-cache.ts [more.ts...]`: fills Node's compile cache (the folder
// NODE_COMPILE_CACHE names) with every module of src/ and schemas/, and the files named after it, stripped
// of their types and compiled. A service started later with the same V8 flags, as the same user (Node keys
// the cache by both) and from the same files then strips no TypeScript at all: Node never loads its type
// stripper, which would otherwise keep about 17 MiB resident for the life of the process (npm run bench).
// The Dockerfile runs it once at build; `npm start` fills the cache on its first run by itself.
// A module whose file changed is simply stripped again: the cache is checked against the source.
import { readdirSync } from 'node:fs'
import { flushCompileCache, getCompileCacheDir } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Every .ts file under `dir`, recursively, in a stable order. */
function typeScriptFiles (dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(file => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .sort()
    .map(file => join(dir, file))
}

async function main (): Promise<void> {
  const cache = getCompileCacheDir()
  if (cache === undefined) {
    process.stderr.write('NODE_COMPILE_CACHE is not set (or the folder cannot be written): nothing to fill\n')
    process.exit(1)
  }
  const self = fileURLToPath(import.meta.url)
  const files = [...typeScriptFiles(join(ROOT, 'src')), ...typeScriptFiles(join(ROOT, 'schemas')), ...process.argv.slice(2).map(file => resolve(file))]
    .filter(file => file !== self)
  // Importing is what compiles a module: none of ours acts at import (the entries act only as main).
  for (const file of files) await import(pathToFileURL(file).href)
  flushCompileCache()
  process.stdout.write(`compile cache: ${files.length} modules in ${relative(process.cwd(), cache) || cache}\n`)
}

if (import.meta.main) await main()
