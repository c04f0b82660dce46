// `npm start` as data: `NAME=value... node <flags> src/server.ts`. The Dockerfile tests hold the image to
// it and the bench starts the service processes with it, so production is what both measure.
import pkg from '../package.json' with { type: 'json' }

/** `NAME=value` as a pair, split at the first `=` (a value may hold more). */
export function assignment (word: string): [string, string] | undefined {
  const at = word.indexOf('=')
  return at <= 0 ? undefined : [word.slice(0, at), word.slice(at + 1)]
}

function words (): string[] {
  return pkg.scripts.start.trim().split(/\s+/)
}

/** `npm start`'s command line from node on: node, its flags, the entry file. */
export function startCommand (): string[] {
  const all = words()
  return all.slice(all.indexOf('node'))
}

/** The node flags alone, between `node` and the entry file. */
export function startFlags (): string[] {
  return startCommand().slice(1, -1)
}

/** The environment `npm start` sets before node. */
export function startEnv (): Record<string, string> {
  const all = words()
  return Object.fromEntries(all.slice(0, all.indexOf('node')).map(word => {
    const pair = assignment(word)
    if (pair === undefined) throw new Error(`npm start: ${word} before node is not NAME=value`)
    return pair
  }))
}
