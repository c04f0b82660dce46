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

export interface PreparedAnswer {
  readonly type: string
  readonly etag: string
  /** Headers of the answer beside type, tag and encoding (the static files' Cache-Control, Last-Modified). */
  readonly headers: Readonly<Record<string, string>>
  readonly identity: Buffer
  readonly compressible: boolean
  /** Each encoding's bytes, made at the first request that takes it (or at once by prepareAnswer's `eager`). */
  readonly encoded: Map<Encoding, Promise<Buffer>>
}

function encode (answer: PreparedAnswer, encoding: Encoding): Promise<Buffer> {
  let bytes = answer.encoded.get(encoding)
  if (bytes === undefined) {
    bytes = encoding === 'br'
      ? brotli(answer.identity, { params: BROTLI_PARAMS })
      : gzipped(answer.identity, { level: GZIP_LEVEL })
    answer.encoded.set(encoding, bytes)
  }
  return bytes
}

/**
 * An answer of `identity` bytes; `compressible` ones get br and gzip forms (both at once when `eager`). The tag
 * names the bytes (weak: the encodings are the same content).
 */
export async function prepareAnswer (identity: Buffer, options: {
  type: string, compressible: boolean, eager?: boolean, headers?: Record<string, string>
}): Promise<PreparedAnswer> {
  const answer: PreparedAnswer = {
    type: options.type,
    etag: `W/"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    headers: options.headers ?? {},
    identity,
    compressible: options.compressible && identity.length >= THRESHOLD_BYTES,
    encoded: new Map()
  }
  if (answer.compressible && options.eager === true) await Promise.all([encode(answer, 'br'), encode(answer, 'gzip')])
  return answer
}

/**
 * Sends `answer` in the encoding the request's Accept-Encoding prefers (br, then gzip, else as it is), with
 * `Vary: Accept-Encoding` on a compressible one, or a 304 when If-None-Match names its tag.
 */
export async function sendPrepared (
  request: FastifyRequest, reply: FastifyReply, answer: PreparedAnswer
): Promise<FastifyReply> {
  reply.header('etag', answer.etag)
  for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value)
  if (answer.compressible) reply.header('vary', 'accept-encoding')
  if (fresh(request.headers, { etag: answer.etag, 'last-modified': answer.headers['last-modified'] })) {
    return reply.code(304).send()
  }
  reply.type(answer.type)
  const accepted = request.headers['accept-encoding']
  const encoding = answer.compressible && accepted !== undefined
    ? negotiate(accepted.toLowerCase().replace(GZIP_ALIAS, 'gzip'), ENCODINGS)
    : undefined
  if (encoding !== 'br' && encoding !== 'gzip') {
    return reply.header('content-length', answer.identity.length).send(answer.identity)
  }
  const bytes = await encode(answer, encoding)
  return reply.header('content-encoding', encoding).header('content-length', bytes.length).send(bytes)
}
