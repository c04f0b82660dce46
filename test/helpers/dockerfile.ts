// The Dockerfile and .dockerignore as data, read with a real Dockerfile parser (dockerfile-ast) and
// Docker's own .dockerignore matching (@balena/dockerignore, a port of Docker's matcher), so the lint and
// the replay test read exactly what `docker build` would.
import type Dockerignore from '@balena/dockerignore'
import { DockerfileParser, JSONInstruction, ModifiableInstruction } from 'dockerfile-ast'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { assignment } from '../../scripts/start-command.ts'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

// A CommonJS module whose types claim a default export; required, it is the factory itself.
const ignore = createRequire(import.meta.url)('@balena/dockerignore') as typeof Dockerignore.default

/** Docker's matcher for the lines of a .dockerignore (the repository's own by default). */
export function dockerignore (text = readFileSync(join(ROOT, '.dockerignore'), 'utf8')) {
  return ignore().add(text.split('\n'))
}

export interface Step {
  keyword: string
  /** The arguments after any `--flag`s, as the parser split them (shell form) or the JSON strings (exec form). */
  args: string[]
  /** `--name=value` flags, e.g. `mount=type=cache,target=/root/.npm`. */
  flags: Array<{ name: string, value: string | null }>
  /** True for the exec (JSON array) form of RUN, CMD and ENTRYPOINT. */
  execForm: boolean
  /** One-based line in the Dockerfile, for failure messages. */
  line: number
}

export function dockerfileSteps (text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')): Step[] {
  return DockerfileParser.parse(text).getInstructions().map(instruction => {
    const json = instruction instanceof JSONInstruction && instruction.getOpeningBracket() !== null
      ? instruction.getJSONStrings().map(s => s.getJSONValue())
      : undefined
    return {
      keyword: instruction.getKeyword(),
      args: json ?? instruction.getArguments().map(a => a.getValue()),
      flags: instruction instanceof ModifiableInstruction
        ? instruction.getFlags().map(f => ({ name: f.getName(), value: f.getValue() }))
        : [],
      execForm: json !== undefined,
      line: instruction.getRange().start.line + 1
    }
  })
}

/** ENV NAME=value... as a record (one step may set several). */
export function envOf (step: Step): Record<string, string> {
  return Object.fromEntries(step.args.map(arg => {
    const pair = assignment(arg)
    if (pair === undefined) throw new Error(`line ${step.line}: ENV ${arg}: only the NAME=value form is read`)
    return pair
  }))
}

/** Every file of the build context that .dockerignore leaves, relative with `/` separators, sorted. */
export function buildContextFiles (root = ROOT): string[] {
  const lines = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n')
  const matcher = dockerignore(lines.join('\n'))
  // An ignored folder is skipped whole (node_modules, .git) unless an exception (`!path`) could re-include
  // something inside it, as Docker itself does.
  const exceptions = lines.map(l => l.trim()).filter(l => l.startsWith('!')).map(l => l.slice(1).replace(/^\/+/, ''))
  const mayReinclude = (dir: string) => exceptions.some(p => /^[*?[]/.test(p) || p.startsWith(`${dir}/`))
  const files: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`
      if (entry.isDirectory()) {
        if (!matcher.ignores(path) || mayReinclude(path)) walk(path)
      } else if (!matcher.ignores(path)) {
        files.push(path)
      }
    }
  }
  walk('')
  return files.sort()
}
