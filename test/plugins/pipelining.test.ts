// Pipelined requests of one connection: at most 8 run at once, the next wait for an earlier answer to be written and
// are then answered whole and in order; a connection with more than 56 waiting is closed, the others are served.
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { IN_FLIGHT, WAITING } from '../../src/plugins/app/pipelining.ts'
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
