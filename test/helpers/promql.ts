// A crude reading of PromQL, enough to list what an expression asks Prometheus for: the metric names
// (identifiers followed by `{` or `[`, or bare) and the label names (inside `{}`, and in `by (...)`,
// `without`, `on`, `ignoring`, `group_left`, `group_right`). Functions, keywords, strings, numbers,
// durations and Grafana's `$variables` are left out. Not a parser: the tests use it against a live scrape.

export interface PromqlNames {
  /** Metric names, each with the labels its own selector matches on. */
  metrics: Map<string, Set<string>>
  /** Labels named in grouping clauses, whatever metric they come from. */
  grouping: Set<string>
}

const KEYWORDS = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan'
])
const IDENTIFIER = /[a-zA-Z_:][\w:]*/g

export function promqlNames (expr: string): PromqlNames {
  const metrics = new Map<string, Set<string>>()
  const grouping = new Set<string>()
  const add = (name: string, labels: Iterable<string> = []) => {
    const known = metrics.get(name) ?? new Set<string>()
    for (const label of labels) known.add(label)
    metrics.set(name, known)
  }
  let rest = expr
    // Grafana's variables ($job, ${datasource}, $__rate_interval) and quoted strings name nothing.
    .replace(/\$\{?\w+\}?/g, ' ')
  // Selectors: `name{...}` or a bare `{...}`; label names are what stands before a matcher operator.
  rest = rest.replace(/([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g, (_, name: string | undefined, body: string) => {
    const labels = [...body.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""').matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map(m => m[1]!)
    if (name !== undefined && !KEYWORDS.has(name)) add(name, labels)
    else for (const label of labels) grouping.add(label)
    return ' '
  })
  rest = rest
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_, __, list: string) => {
      for (const label of list.split(',').map(l => l.trim()).filter(l => l !== '')) grouping.add(label)
      return ' '
    })
    .replace(/\boffset\s+\S+/g, ' ')
    .replace(/\b\d[\w.]*/g, ' ')
  for (const match of rest.matchAll(IDENTIFIER)) {
    const name = match[0]
    const after = rest.slice(match.index + name.length)
    if (KEYWORDS.has(name.toLowerCase()) || /^\s*\(/.test(after)) continue
    add(name)
  }
  return { metrics, grouping }
}

/** Metric names and label names of a Prometheus text exposition: per metric, and all together. */
export function exposition (text: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels = found.get(match[1]!) ?? new Set<string>()
    for (const m of (match[2] ?? '').matchAll(/(\w+)="/g)) labels.add(m[1]!)
    found.set(match[1]!, labels)
  }
  return found
}

/** Labels Prometheus itself puts on every scraped series (static configs and the Operator's ServiceMonitor). */
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod', 'service', 'container', 'endpoint']

/**
 * What in `expr` the scrape does not export: unknown metrics, labels a metric's selector names but the
 * metric does not carry, grouping labels no metric carries. `records` are the recording rules' names.
 */
export function unknownNames (expr: string, scraped: Map<string, Set<string>>, records: Set<string>): string[] {
  const { metrics, grouping } = promqlNames(expr)
  const allLabels = new Set([...TARGET_LABELS, ...[...scraped.values()].flatMap(labels => [...labels])])
  const problems: string[] = []
  for (const [name, labels] of metrics) {
    const own = scraped.get(name)
    if (own === undefined && !records.has(name)) {
      problems.push(`metric ${name}`)
      continue
    }
    const allowed = own === undefined ? allLabels : new Set([...TARGET_LABELS, ...own])
    for (const label of labels) if (!allowed.has(label)) problems.push(`label ${label} of ${name}`)
  }
  for (const label of grouping) if (!allLabels.has(label)) problems.push(`label ${label}`)
  if (metrics.size === 0) problems.push('no metric at all')
  return problems
}
