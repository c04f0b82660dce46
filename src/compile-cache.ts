// `node <npm start's flags> src/compile-cache.ts [<file>.ts...]`: fills Node's compile cache (NODE_COMPILE_CACHE) with
// every module of src/ and schemas/, so a service started with the same V8 flags and user never loads the type
// stripper, which stays resident (docs/performance.md, register). The Dockerfile runs it at build; a changed
// file is simply stripped again.
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
  const files = [
    ...typeScriptFiles(join(ROOT, 'src')),
    ...typeScriptFiles(join(ROOT, 'schemas')),
    ...process.argv.slice(2).map(file => resolve(file))
  ]
    .filter(file => file !== self)
  // Importing is what compiles a module: none of ours acts at import (the entries act only as main).
  for (const file of files) await import(pathToFileURL(file).href)
  flushCompileCache()
  process.stdout.write(`compile cache: ${files.length} modules in ${relative(process.cwd(), cache) || cache}\n`)
}

if (import.meta.main) await main()
