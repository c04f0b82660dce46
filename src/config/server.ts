// The front server's variables: where it listens, whom it believes, its timeouts and body limit, CORS, compression
// and the shutdown grace.
import { isIP } from 'node:net'
import { Type, type Static } from 'typebox'
import { Millis } from './kinds.ts'

export const ServerConfigSchema = Type.Object({
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Address the front listens on.' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'Port the front listens on.' }),
  SHUTDOWN_GRACE_MS: Millis(10_000, 'On SIGTERM, how long in-flight requests may take to finish before the process ' +
    'is stopped.'),
  TRUST_PROXY: Type.Optional(Type.String({
    description: 'Balancers whose X-Forwarded-For is believed: `true` (every peer) or a comma list of addresses, ' +
      'CIDRs or loopback/linklocal/uniquelocal; unset, the peer address is the client.'
  })),
  CORS_ORIGINS: Type.Optional(Type.String({
    pattern: '^https?://[^/\\s,]+(\\s*,\\s*https?://[^/\\s,]+)*$',
    description: 'Comma list of exact browser origins (scheme://host[:port]) allowed by CORS; unset, CORS is off.'
  })),
  COMPRESSION: Type.Enum(['on', 'off'], {
    default: 'on',
    description: '`on`: answers of 1 KiB or more are compressed (br, gzip) by the caller\'s Accept-Encoding; `off`: ' +
      'sent as they are, for an ingress that compresses.'
  }),
  DOCS: Type.Enum(['ui', 'document', 'off'], {
    default: 'ui',
    description: '`ui`: the OpenAPI document at /docs/json and /docs/yaml and Swagger UI at /docs; `document`: the ' +
      'document only; `off`: neither (404).'
  }),
  SERVER_HEADERS_TIMEOUT_MS: Millis(10_000, 'Time a client has to send the request headers.'),
  SERVER_REQUEST_TIMEOUT_MS: Millis(15_000, 'Time a client has to send the whole request, body included (not the ' +
    'time to answer it).'),
  SERVER_CONNECTION_TIMEOUT_MS: Millis(20_000, 'Socket inactivity allowed, handling time included; raised to exceed ' +
    'PROFILE_TIMEOUT_MS and UPSTREAM_TIMEOUT_MS when shorter.'),
  SERVER_KEEP_ALIVE_TIMEOUT_MS: Millis(72_000, 'Idle keep-alive connection lifetime; above the balancer\'s idle ' +
    'timeout (often 60 s).'),
  SERVER_MAX_REQUESTS_PER_SOCKET: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    default: 0,
    description: 'Requests served on one connection before it is closed; 0 is no limit.'
  }),
  SERVER_BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 1024 * 1024,
    default: 16 * 1024,
    description: 'Largest request body of a route without its own limit (the console has 16 KiB).'
  })
})

type ServerConfig = Static<typeof ServerConfigSchema>

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** One TRUST_PROXY entry: an address, an address/prefix, or one of proxy-addr's names. */
function isProxyEntry (entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/**
 * Fastify's `trustProxy` from TRUST_PROXY; undefined when the value is not acceptable. A hop count is
 * not accepted: it would believe X-Forwarded-For from any direct peer (Fastify itself fails it closed).
 */
export function trustProxySetting (value: string | undefined): boolean | string[] | undefined {
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  const entries = value.split(',').map(entry => entry.trim())
  return entries.every(isProxyEntry) ? entries : undefined
}

/** TRUST_PROXY's list, which the schema cannot spell. */
export function trustProxyProblems (variables: Record<string, string | undefined>): string[] {
  if (variables.TRUST_PROXY === undefined || trustProxySetting(variables.TRUST_PROXY) !== undefined) return []
  return ['TRUST_PROXY must be true, false, or a comma list of addresses, CIDRs or loopback/linklocal/uniquelocal']
}

/** Timeouts that only make sense in relation to each other. */
export function serverTimeoutProblems (config: ServerConfig): string[] {
  const problems: string[] = []
  // Node refuses a headers timeout beyond the request timeout.
  if (config.SERVER_HEADERS_TIMEOUT_MS > config.SERVER_REQUEST_TIMEOUT_MS) {
    problems.push('SERVER_HEADERS_TIMEOUT_MS must not exceed SERVER_REQUEST_TIMEOUT_MS')
  }
  return problems
}
