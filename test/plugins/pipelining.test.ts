// Pipelined requests of one connection: at most 8 run at once, the next wait for an earlier answer to be written and
// are then answered whole and in order; a connection with more than 56 waiting is closed, the others are served; and
// none starts while the socket buffers 1 MiB for the client, until its 'drain'.
import { EventEmitter } from 'node:events'
import { IncomingMessage, ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import pipelining, { IN_FLIGHT, WAITING } from '../../src/plugins/app/pipelining.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import { get } from '../helpers/real-servers.ts'

const request = (path: string, id: string) => `GET ${path} HTTP/1.1\r\nhost: bff.test\r\nx-request-id: ${id}\r\n\r\n`
const ids = (count: number) =>
  Array.from({ length: count }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)

/** Reads a connection until `count` answers have come (or it closes); the x-request-id of each, in order. */
function answers (socket: Socket, count: number): Promise<{ ids: string[], closed: boolean }> {
  return new Promise(resolve => {
    let text = ''
    const seen = () => [...text.matchAll(/^x-request-id: (.*)\r$/gim)].map(match => match[1]!)
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk
      if (seen().length >= count) resolve({ ids: seen(), closed: false })
    })
    socket.on('close', () => resolve({ ids: seen(), closed: true }))
    socket.on('error', () => {})
  })
}

t.test('the bounds are the documented ones: 8 running, 56 waiting a connection', async t => {
  // The tests below scale with the constants: this one fails when they move without docs/security.md.
  t.equal(IN_FLIGHT, 8)
  t.equal(WAITING, 56)
})

t.test('8 of a connection run at once; the rest wait, then are answered whole and in order', async t => {
  const { app } = await buildTestApp(t)
  let running = 0
  let most = 0
  let started = 0
  const release: Array<() => void> = []
  app.get('/held', async () => {
    running++
    started++
    most = Math.max(most, running)
    await new Promise<void>(resolve => release.push(resolve))
    running--
    return { held: 'x'.repeat(2000) }
  })
  const origin = await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = connect(Number(new URL(origin).port), '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  const sent = ids(40)
  const read = answers(socket, sent.length)
  socket.write(sent.map(id => request('/held', id)).join(''))
  // Another connection's answer: by then the service has read the 40 requests.
  const runningAll = () => started >= IN_FLIGHT
  while (!runningAll()) await get(`${origin}/health/live`)
  t.equal((await get(`${origin}/health/live`)).status, 200, 'another connection is served meanwhile')
  t.equal(started, IN_FLIGHT, `only ${IN_FLIGHT} of the 40 run while their answers are held`)
  while (started < sent.length || release.length > 0) {
    const held = release.splice(0)
    for (const resolve of held) resolve()
    await new Promise(resolve => setImmediate(resolve))
  }
  const { ids: got, closed } = await read
  t.notOk(closed)
  t.same(got, sent, 'every answer, in the order asked')
  t.equal(most, IN_FLIGHT, `never more than ${IN_FLIGHT} at once`)
})

t.test(`more than ${WAITING} waiting: that connection is closed, the others are served`, async t => {
  const { app } = await buildTestApp(t)
  const origin = await app.listen({ host: '127.0.0.1', port: 0 })
  const port = Number(new URL(origin).port)
  const flood = connect(port, '127.0.0.1')
  t.teardown(() => { flood.destroy() })
  const read = answers(flood, Infinity)
  flood.write(ids(IN_FLIGHT + WAITING + 100).map(id => request('/health/live', id)).join(''))
  const { ids: got, closed } = await read
  t.ok(closed, 'closed by the service')
  t.ok(got.length <= IN_FLIGHT + WAITING + 1, `${got.length} answered before the close`)
  const honest = connect(port, '127.0.0.1')
  t.teardown(() => { honest.destroy() })
  const honestRead = answers(honest, IN_FLIGHT + WAITING)
  const asked = ids(IN_FLIGHT + WAITING)
  honest.write(asked.map(id => request('/health/live', id)).join(''))
  t.same((await honestRead).ids, asked, `${IN_FLIGHT + WAITING} pipelined requests are all answered`)
})

// The 1 MiB bound cannot be reached deterministically over loopback (the kernel's buffers take several MB before
// Node's own holds anything), so this drives the plugin on a real Fastify instance with the requests node:http would
// hand it: real IncomingMessage and ServerResponse on a socket whose buffered bytes the test sets.
/** A connection's socket as the plugin sees it: its bytes buffered for the client, 'drain' and 'close'. */
class FakeSocket extends EventEmitter {
  writableLength = 0
  destroyed = false
}

const MIB = 1024 * 1024
const turn = () => new Promise(resolve => setImmediate(resolve))

/** A Fastify app behind the plugin whose GET /work records each request it starts (by its `n` query). */
async function withPlugin (t: Test) {
  const app = Fastify({ logger: false })
  await app.register(pipelining)
  const started: string[] = []
  app.get<{ Querystring: { n: string } }>('/work', async request => {
    started.push(request.query.n)
    return { n: request.query.n }
  })
  await app.ready()
  t.teardown(() => app.close())
  /** node:http handing the app a request of `socket`'s connection; its response, to see whether it was started. */
  const send = (socket: FakeSocket, n: string): ServerResponse => {
    const request = new IncomingMessage(socket as unknown as Socket)
    request.method = 'GET'
    request.url = `/work?n=${n}`
    request.headers = { host: 'bff.test' }
    request.httpVersion = '1.1'
    request.httpVersionMajor = 1
    request.httpVersionMinor = 1
    const response = new ServerResponse(request)
    app.server.emit('request', request, response)
    return response
  }
  return { started, send }
}

t.test('no request starts while the socket buffers 1 MiB for the client; after its drain they start, in order',
  async t => {
    const { started, send } = await withPlugin(t)
    const socket = new FakeSocket()
    socket.writableLength = MIB
    const responses = ['1', '2', '3'].map(n => send(socket, n))
    await turn()
    t.same(started, [], 'no handler is called while 1 MiB waits for the client')
    t.ok(responses.every(response => !response.headersSent), 'no answer is started')
    // Another connection, its socket not full, is served meanwhile.
    const other = new FakeSocket()
    const otherResponse = send(other, 'other')
    await turn()
    t.same(started, ['other'], 'another connection is served meanwhile')
    t.ok(otherResponse.headersSent)
    // Node emits 'drain' once the client has read the buffer; just under the mark is enough to start them.
    socket.writableLength = MIB - 1
    socket.emit('drain')
    await turn()
    t.same(started, ['other', '1', '2', '3'], 'after the drain the waiting requests start, in the order asked')
    t.ok(responses.every(response => response.headersSent && response.statusCode === 200), 'each is answered')
  })

t.test('a connection closed while its socket buffers 1 MiB never starts its waiting requests', async t => {
  const { started, send } = await withPlugin(t)
  const socket = new FakeSocket()
  socket.writableLength = 2 * MIB
  const responses = ['1', '2'].map(n => send(socket, n))
  await turn()
  t.same(started, [], 'waiting while the socket is full')
  // The client goes away: node:http destroys the socket, which closes (and a pending 'drain' may still come).
  socket.destroyed = true
  socket.writableLength = 0
  socket.emit('close')
  socket.emit('drain')
  await turn()
  t.same(started, [], 'no handler is called for a closed connection')
  t.ok(responses.every(response => !response.headersSent), 'no answer is started')
})
