// The routes an app serves, read from Fastify's printRoutes tree: the route tests and the stranger harness list
// every route (the registry's and the plugins' own) the same way.

/** `METHOD /path` of every route in Fastify's printRoutes tree (one node per line, four columns per level). */
export function servedRoutes (tree: string): string[] {
  const served: string[] = []
  const prefixes: string[] = []
  for (const line of tree.split('\n')) {
    const node = /^(.*?)(?:├── |└── )(.*?) \(([A-Z, ]+)\)$/.exec(line)
    if (node === null) continue
    const [, indent, segment, methods] = node as unknown as [string, string, string, string]
    const depth = indent.length / 4
    const path = (prefixes[depth - 1] ?? '') + segment
    prefixes[depth] = path
    prefixes.length = depth + 1
    for (const method of methods.split(', ')) served.push(`${method} ${path}`)
  }
  return served
}
