// A stand-in identity provider for the key-set tests: a node:http server on a free local port that
// publishes a JSON Web Key Set the test changes at will, counts the fetches, and can fail on demand.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto'
import { listenLocally } from './local-server.ts'

interface Teardown { teardown (fn: () => unknown): void }

export interface SetKeyPair {
  kid: string
  privateKey: KeyObject
  /** The public member as published. */
  jwk: JsonWebKey & { kid: string }
}

/** A fresh key pair with its public JWK under `kid`. */
export function setKeyPair (kind: 'rsa' | 'ec' | 'ed25519', kid: string): SetKeyPair {
  const { privateKey, publicKey } = kind === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : kind === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519')
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' } }
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void

export interface KeySetServer {
  /** The key set URL, e.g. http://127.0.0.1:39123/certs */
  url: string
  /** Fetches served so far, failed ones included. */
  readonly fetches: number
  /** Publishes these members (or any body, for the garbage cases) with optional headers. */
  publish (members: unknown[] | { body: string }, headers?: Record<string, string>): void
  /** Answers every fetch with this instead, until `publish` is called again. */
  failWith (handler: Handler): void
}

export async function startKeySetServer (t: Teardown): Promise<KeySetServer> {
  let fetches = 0
  let handler: Handler = (_request, response) => { response.writeHead(503).end() }
  const server = createServer((request, response) => {
    fetches++
    handler(request, response)
  })
  const origin = await listenLocally(t, server)
  return {
    url: `${origin}/certs`,
    get fetches () { return fetches },
    publish (members, headers = {}) {
      const body = Array.isArray(members) ? JSON.stringify({ keys: members }) : members.body
      handler = (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(body)
      }
    },
    failWith (next) { handler = next }
  }
}

/** Polls `condition` every 20 ms until it holds; fails after `withinMs` (a generous bound, not a timing assertion). */
export async function eventually (
  condition: () => boolean | Promise<boolean>, what: string, withinMs = 20_000
): Promise<void> {
  const deadline = Date.now() + withinMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}
