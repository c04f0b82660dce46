// Reading the docs' Markdown the way their tests need it: a section by its heading, and table rows by name.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** A path from the repository's root. */
export const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))

/** The text of a Markdown file of the repository. */
export const page = (path: string) => readFileSync(root(path), 'utf8')

/** The text of one `## ` section of `text`, up to the next one; empty when there is none. */
export function section (text: string, title: string): string {
  const start = text.indexOf(`\n## ${title}\n`)
  if (start === -1) return ''
  const end = text.indexOf('\n## ', start + 1)
  return text.slice(start, end === -1 ? undefined : end)
}

/** The cells of every table row whose first cell is a backticked name (or several), keyed by each name. */
export function tableRows (text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const cells = line.split('|').slice(1, -1).map(cell => cell.trim())
    const first = cells[0] ?? ''
    if (!/^`[A-Z0-9_]+`(?:, `[A-Z0-9_]+`)*$/.test(first)) continue
    for (const name of first.match(/[A-Z0-9_]+/g) ?? []) rows.set(name, cells)
  }
  return rows
}
