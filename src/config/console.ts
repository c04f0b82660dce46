// The console's variables: the operators' keys that open POST /request-console.
import { Type, type Static } from 'typebox'

export const ConsoleConfigSchema = Type.Object({
  CONSOLE_API_KEY: Type.Optional(Type.String({
    minLength: 16,
    description: 'Opens POST /request-console (operator `console` in the audit log); unset with CONSOLE_API_KEYS, ' +
      'the route answers 404.'
  })),
  CONSOLE_API_KEYS: Type.Optional(Type.String({
    pattern: '^\\s*[A-Za-z0-9_.-]{1,64}:[^,\\s]{16,}\\s*(,\\s*[A-Za-z0-9_.-]{1,64}:[^,\\s]{16,}\\s*)*$',
    description: 'Console keys per operator, a comma list of name:key (names of letters, digits, _ . -; keys of 16+ ' +
      'characters without commas or spaces); the audit log names the operator.'
  }))
})

type ConsoleConfig = Static<typeof ConsoleConfigSchema>

/**
 * The console keys by operator name: CONSOLE_API_KEYS' `name:key` pairs, and CONSOLE_API_KEY as the
 * operator `console`. Empty when the console is off.
 */
export function consoleOperators (config: ConsoleConfig): Map<string, string> {
  const operators = new Map<string, string>()
  if (config.CONSOLE_API_KEY !== undefined) operators.set('console', config.CONSOLE_API_KEY)
  for (const pair of config.CONSOLE_API_KEYS?.split(',') ?? []) {
    const at = pair.indexOf(':')
    operators.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim())
  }
  return operators
}

/** One name per operator and one operator per key, or the audit log could not say who it was. */
export function consoleKeyProblems (config: ConsoleConfig): string[] {
  const pairs = config.CONSOLE_API_KEYS?.split(',').map(pair => pair.slice(0, pair.indexOf(':')).trim()) ?? []
  const names = config.CONSOLE_API_KEY === undefined ? pairs : ['console', ...pairs]
  const keys = [...consoleOperators(config).values()]
  const problems: string[] = []
  if (new Set(names).size !== names.length) {
    problems.push('CONSOLE_API_KEYS names an operator twice (CONSOLE_API_KEY is the operator "console")')
  }
  if (new Set(keys).size !== keys.length) problems.push('CONSOLE_API_KEYS gives two operators the same key')
  return problems
}
