// Constant-time checks of the operators' keys (console and metrics): shared by the route and the plugin
// that guard with a key, so neither imports the other.
import { createHash, timingSafeEqual } from 'node:crypto'

/** The header an operator sends the console key in. */
export const CONSOLE_KEY_HEADER = 'x-console-key'
// No registered scheme exists for an API key header; the challenge names the header to send.
export const CONSOLE_CHALLENGE = `${CONSOLE_KEY_HEADER} realm="request-console"`
export const CONSOLE_UNAUTHORIZED = `Send the console key in the ${CONSOLE_KEY_HEADER} header`

const sha256 = (value: string) => createHash('sha256').update(value).digest()

/**
 * A constant-time check of the console key: both sides are hashed first, so the comparison runs over
 * equal lengths and neither the key's length nor its prefix leaks through timing.
 */
export function consoleKeyCheck (expected: string): (presented: unknown) => boolean {
  const want = sha256(expected)
  return presented => typeof presented === 'string' && timingSafeEqual(sha256(presented), want)
}

/**
 * The operator a presented console key belongs to, or undefined. Every key is compared, in constant time
 * (digests of equal length, no early exit), so timing tells neither which key nor how close a guess came.
 */
export function consoleOperatorCheck (
  operators: ReadonlyMap<string, string>
): (presented: unknown) => string | undefined {
  const digests = [...operators].map(([name, key]) => ({ name, digest: sha256(key) }))
  return presented => {
    if (typeof presented !== 'string') return undefined
    const digest = sha256(presented)
    let found: string | undefined
    for (const entry of digests) if (timingSafeEqual(digest, entry.digest)) found = entry.name
    return found
  }
}
