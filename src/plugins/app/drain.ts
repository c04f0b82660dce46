// Shutdown that ends when the work does. Once the app closes, every answer carries `Connection: close`
// and each keep-alive connection is closed as soon as its last answer is written, so the server's close,
// and with it the process, waits for in-flight work and nothing else.
//
// Why this is needed (Fastify 5.12, Node 24): server.close() closes the connections idle at that moment
// (Node's closeIdleConnections) and Fastify answers requests that arrive later with `Connection: close`.
// But a request already in flight when the close began is answered as keep-alive, and Node does not look
// again when that answer ends: the connection waits out keepAliveTimeout (72 s) and holds server.close()
// open, so the process outlived SHUTDOWN_GRACE_MS for nothing (fastify/fastify#7044).
import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'

export default fp(async function drain (fastify) {
  // The answers not yet closed. Node's 'request' event, in the same tick as Fastify's own listener: a request
  // is either here before the close begins, or routed after it (and then answered with `Connection: close`).
  const responses = new Set<ServerResponse>()
  function forget (this: ServerResponse) { responses.delete(this) }
  fastify.server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    responses.add(response)
    response.on('close', forget)
  })

  fastify.addHook('preClose', function closeConnectionsAfterTheirResponses (done) {
    for (const response of responses) {
      // node:http ends a connection whose answer says `Connection: close` once it is written.
      if (!response.headersSent) {
        response.setHeader('connection', 'close')
        continue
      }
      // Its headers are out: the socket is ended once the answer is (node:http detaches it then).
      const socket = response.socket
      if (socket !== null) response.once('finish', () => { socket.end() })
    }
    done()
  })
}, { name: 'drain' })
