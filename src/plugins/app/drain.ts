// Shutdown that ends when the work does. Once the app closes, every answer carries `Connection: close`
// and each keep-alive connection is closed as soon as its last answer is written, so the server's close,
// and with it the process, waits for in-flight work and nothing else.
//
// Why this is needed (Fastify 5.12, Node 24): server.close() closes the connections idle at that moment
// (Node's closeIdleConnections) and Fastify answers requests that arrive later with `Connection: close`.
// But a request already in flight when the close began is answered as keep-alive, and Node does not look
// again when that answer ends: the connection waits out keepAliveTimeout (72 s) and holds server.close()
// open, so the process outlived SHUTDOWN_GRACE_MS for nothing (fastify/fastify#7044).
import type { Socket } from 'node:net'
import type { ServerResponse } from 'node:http'
import fp from 'fastify-plugin'

/** The answer a connection is writing now (node:http's own link from socket to response). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null }

export default fp(async function drain (fastify) {
  // Per connection, not per request: with keep-alive callers, connections are few and long-lived.
  const sockets = new Set<HttpSocket>()
  function forget (this: HttpSocket) { sockets.delete(this) }
  fastify.server.on('connection', (socket: HttpSocket) => {
    sockets.add(socket)
    socket.once('close', forget)
  })

  fastify.addHook('preClose', function closeConnectionsAfterTheirAnswers (done) {
    for (const socket of sockets) {
      const res = socket._httpMessage
      // Idle: server.close() closes it at once. Its request still arriving: Fastify answers it with
      // `Connection: close`, and Node then closes the connection after the answer.
      if (res === undefined || res === null) continue
      // In flight: node:http ends a connection whose answer says `Connection: close` once it is written.
      if (!res.headersSent) res.setHeader('connection', 'close')
      else res.once('finish', () => { socket.end() })
    }
    done()
  })
}, { name: 'drain' })
