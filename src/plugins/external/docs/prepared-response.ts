// Public answers whose bytes never change while the process runs (the OpenAPI document, Swagger UI's files): made
// once, compressed once per encoding, then every request is a lookup. A stranger's GET of Swagger UI's bundle cost
// 27-76 ms of CPU compressed anew; from here it costs what a refused token does (docs/performance.md).
import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { FastifyReply, FastifyRequest } from 'fastify'
import negotiate from '@fastify/accept-negotiator'
import fresh from 'fresh'

// Made once per process, so quality pays: about a tenth smaller than the per-request settings, in tens of ms once.
const BROTLI_QUALITY = 9
const GZIP_LEVEL = 9
const ENCODINGS = ['br', 'gzip']
// Read as @fastify/compress reads it (`*` and `x-gzip` are gzip), so that it never encodes what is sent as it is.
const GZIP_ALIAS = /\*|x-gzip/gu
// As the compression plugin: a frame's worth of bytes is not worth an encoding.
const THRESHOLD_BYTES = 1024

const BROTLI_PARAMS = {
  [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT
}
const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

type Encoding = 'br' | 'gzip'

export interface PreparedResponse {
  readonly type: string
  readonly etag: string
  /** Headers of the answer beside type, tag and encoding (the static files' Cache-Control, Last-Modified). */
  readonly headers: Readonly<Record<string, string>>
  readonly identity: Buffer
  readonly compressible: boolean
  /** Each encoding's bytes, made at the first request that takes it (or at once by prepareResponse's `eager`). */
  readonly encoded: Map<Encoding, Promise<Buffer>>
}

function encode (response: PreparedResponse, encoding: Encoding): Promise<Buffer> {
  let bytes = response.encoded.get(encoding)
  if (bytes === undefined) {
    bytes = encoding === 'br'
      ? brotli(response.identity, { params: BROTLI_PARAMS })
      : gzipped(response.identity, { level: GZIP_LEVEL })
    response.encoded.set(encoding, bytes)
  }
  return bytes
}

/**
 * An answer of `identity` bytes; `compressible` ones get br and gzip forms (both at once when `eager`). The tag
 * names the bytes (weak: the encodings are the same content).
 */
export async function prepareResponse (identity: Buffer, options: {
  type: string, compressible: boolean, eager?: boolean, headers?: Record<string, string>
}): Promise<PreparedResponse> {
  const response: PreparedResponse = {
    type: options.type,
    etag: `W/"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    headers: options.headers ?? {},
    identity,
    compressible: options.compressible && identity.length >= THRESHOLD_BYTES,
    encoded: new Map()
  }
  if (response.compressible && options.eager === true) {
    await Promise.all([encode(response, 'br'), encode(response, 'gzip')])
  }
  return response
}

/**
 * Sends `answer` in the encoding the request's Accept-Encoding prefers (br, then gzip, else as it is), with
 * `Vary: Accept-Encoding` on a compressible one, or a 304 when If-None-Match names its tag.
 */
export async function sendPrepared (
  request: FastifyRequest, reply: FastifyReply, response: PreparedResponse
): Promise<FastifyReply> {
  reply.header('etag', response.etag)
  for (const [name, value] of Object.entries(response.headers)) reply.header(name, value)
  if (response.compressible) reply.header('vary', 'accept-encoding')
  if (fresh(request.headers, { etag: response.etag, 'last-modified': response.headers['last-modified'] })) {
    return reply.code(304).send()
  }
  reply.type(response.type)
  const accepted = request.headers['accept-encoding']
  const encoding = response.compressible && accepted !== undefined
    ? negotiate(accepted.toLowerCase().replace(GZIP_ALIAS, 'gzip'), ENCODINGS)
    : undefined
  if (encoding !== 'br' && encoding !== 'gzip') {
    return reply.header('content-length', response.identity.length).send(response.identity)
  }
  const bytes = await encode(response, encoding)
  return reply.header('content-encoding', encoding).header('content-length', bytes.length).send(bytes)
}
