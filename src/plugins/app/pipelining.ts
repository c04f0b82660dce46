// What one connection may hold. node:http hands over every request of a chunk it has read (a 64 KiB read holds
// some 1,700 small ones) before it pauses the socket, and no Node or Fastify setting bounds pipelined requests in
// flight: a client that never reads made the service build answer after answer for it until the heap ran out.
// Here, before Fastify sees a request: at most IN_FLIGHT requests of a connection run at once, the next ones wait
// until an earlier answer is written (to the kernel: a client that does not read holds them back), no waiting one
// starts while the socket buffers WRITE_BUFFER_BYTES for the client, and a connection that has more than WAITING
// requests waiting is closed. Numbers and why: docs/security.md (pipelined requests).
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import fp from 'fastify-plugin'

/** Requests of one connection run at once: HTTP/1.1 answers them in order, so more only buffer answers. */
export const IN_FLIGHT = 8
/** Requests of one connection that may wait to run; past it the connection is closed (no app pipelines so deep). */
export const WAITING = 56
/** Bytes the socket may buffer for a client before a waiting request starts. */
const WRITE_BUFFER_BYTES = 1024 * 1024

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

interface Connection {
  running: number
  waiting: Array<[IncomingMessage, ServerResponse]>
  drainAwaited: boolean
}

/** `handler` (Fastify's request listener) behind the bounds above, per connection. */
function boundedPerConnection (handler: RequestListener): RequestListener {
  const connections = new WeakMap<Socket, Connection>()

  function run (socket: Socket, connection: Connection, request: IncomingMessage, response: ServerResponse): void {
    connection.running++
    response.once('finish', () => {
      connection.running--
      startWaiting(socket, connection)
    })
    handler(request, response)
  }

  function startWaiting (socket: Socket, connection: Connection): void {
    while (connection.running < IN_FLIGHT && connection.waiting.length > 0 && !socket.destroyed) {
      if (socket.writableLength >= WRITE_BUFFER_BYTES) {
        // Past the socket's high-water mark, so 'drain' comes once the client has read the buffer.
        if (!connection.drainAwaited) {
          connection.drainAwaited = true
          socket.once('drain', () => {
            connection.drainAwaited = false
            startWaiting(socket, connection)
          })
        }
        return
      }
      const [request, response] = connection.waiting.shift()!
      run(socket, connection, request, response)
    }
  }

  return function boundedRequestListener (request, response) {
    const socket = request.socket
    // Requests parsed from the rest of a chunk after the connection was closed: node:http drops them with it.
    if (socket.destroyed) return
    let connection = connections.get(socket)
    if (connection === undefined) {
      const created: Connection = { running: 0, waiting: [], drainAwaited: false }
      connections.set(socket, created)
      socket.once('close', () => { created.waiting.length = 0 })
      connection = created
    }
    if (connection.waiting.length >= WAITING) {
      socket.destroy()
      return
    }
    // Through the queue even when it is empty: in order, and a full socket buffer waits for 'drain' with nothing
    // running (no answer's 'finish' would start it then).
    connection.waiting.push([request, response])
    startWaiting(socket, connection)
  }
}

export default fp(async function pipelining (fastify) {
  // Registered first, so the server's only request listener is Fastify's own (drain.ts adds one after).
  const listeners = fastify.server.listeners('request') as RequestListener[]
  const [fastifyListener] = listeners
  if (listeners.length !== 1 || fastifyListener === undefined) {
    throw new Error(`pipelining must be registered first: the server has ${listeners.length} request listeners`)
  }
  fastify.server.removeListener('request', fastifyListener)
  fastify.server.on('request', boundedPerConnection(fastifyListener))
}, { name: 'pipelining' })
