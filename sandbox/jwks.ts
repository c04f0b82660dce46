// The sandbox's identity provider for `npm run dev -- --jwks`: a JSON Web Key Set of one RSA and one EC
// P-256 key, made for this run, served over http on the loopback as AUTH_JWKS_URL expects; the private
// halves sign the printed tokens. Nothing here is ever a production key.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PrivateJwk } from './sign.ts'

const KEY_SET_PATH = '/realms/sandbox/protocol/openid-connect/certs'

export interface SandboxKeySet {
  /** The key set's URL, for AUTH_JWKS_URL. */
  url: string
  /** The private keys the printed tokens are signed with, by kind. */
  signing: { rsa: PrivateJwk, ec: PrivateJwk }
  close (): Promise<void>
}

function privateJwk (kind: 'rsa' | 'ec'): PrivateJwk {
  const { privateKey } = kind === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return { ...privateKey.export({ format: 'jwk' }), kid: `sandbox-${kind}-${randomBytes(4).toString('hex')}` }
}

/** The public member of a private JWK, as a provider publishes it. */
export function publicMember (
  { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }: PrivateJwk
): Record<string, unknown> {
  return { ...rest, use: 'sig', alg: rest.kty === 'RSA' ? 'RS256' : 'ES256' }
}

export async function startSandboxKeySet ({ host = '127.0.0.1' }: { host?: string } = {}): Promise<SandboxKeySet> {
  const signing = { rsa: privateJwk('rsa'), ec: privateJwk('ec') }
  const body = JSON.stringify({ keys: [publicMember(signing.rsa), publicMember(signing.ec)] })
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== KEY_SET_PATH) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'max-age=300' }).end(body)
  })
  server.listen(0, host)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host}:${port}${KEY_SET_PATH}`,
    signing,
    async close () {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    }
  }
}
