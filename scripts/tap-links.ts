// Run by the prepare script after `tap build`: tap links .tap/plugins/node_modules/@tapjs/core to an absolute
// path, so a copy of the tree (`cp -a`) loaded the original's tap core and failed every file with "test count(0)
// != plan(1)"; a link relative to its own folder moves with the tree. Links leaving the tree stay as they are.
import { existsSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, sep } from 'node:path'

/** The symbolic links under `dir`, never looking inside the folders they point at. */
function linksUnder (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isSymbolicLink()) return [path]
    return entry.isDirectory() ? linksUnder(path) : []
  })
}

const root = realpathSync('.')
const plugins = join(root, '.tap/plugins')
for (const link of existsSync(plugins) ? linksUnder(plugins) : []) {
  const target = readlinkSync(link)
  if (!isAbsolute(target) || !target.startsWith(root + sep)) continue
  rmSync(link)
  symlinkSync(relative(dirname(link), target), link)
}
