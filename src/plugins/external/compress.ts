// Answers compressed by the caller's Accept-Encoding (br, gzip); COMPRESSION=off for an ingress that compresses.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { constants } from 'node:zlib'
import type { Config } from '../../config.ts'

/** Smaller answers go as they are: a frame's worth of bytes is not worth the CPU (health, most errors). */
const COMPRESSION_THRESHOLD_BYTES = 1024
// Higher qualities save a few bytes (the same TCP segments) for several times the CPU (bench/compression.ts).
const BROTLI_QUALITY = 1
// zlib's default: lower levels lose half the gain on long profiles, higher ones only cost CPU.
const GZIP_LEVEL = 6

// Every answer of ours is JSON but the metrics' text and the docs' files; all compress well.
const COMPRESSIBLE = /^(?:text\/|application\/(?:[\w.+-]*\+)?json|application\/(?:x-)?(?:javascript|yaml))/

/**
 * Vary on every compressible answer, compressed or not: a shared cache must never mix the two up. A 304 has no
 * body nor type, but carries the Vary of the 200 it stands for (RFC 9110 15.4.5): ours are all JSON.
 */
function varyOnEncoding (
  request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void
): void {
  const type = reply.getHeader('content-type')
  if (reply.statusCode === 304 || (typeof type === 'string' && COMPRESSIBLE.test(type))) {
    const vary = reply.getHeader('vary')
    if (vary === undefined) reply.header('vary', 'accept-encoding')
    else if (!/accept-encoding/i.test(String(vary))) reply.header('vary', `${String(vary)}, accept-encoding`)
  }
  done(null, payload)
}

export default fp<{ config: Config }>(async function compression (fastify, { config }) {
  if (config.COMPRESSION === 'off') return
  // Imported only when on: with its userland streams it costs every instance resident memory.
  const { default: compress } = await import('@fastify/compress')
  await fastify.register(compress, {
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    customTypes: COMPRESSIBLE,
    brotliOptions: {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT
      }
    },
    zlibOptions: { level: GZIP_LEVEL },
    // Request bodies are small JSON: a compressed one would only let a caller inflate past the body limit.
    globalDecompression: false
  })
  fastify.addHook('onSend', varyOnEncoding)
}, { name: 'compression' })
