// A node:http server on 127.0.0.1 port 0 for tests where real sockets matter; closed, connections
// included, when the test ends.
import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

interface Teardown { teardown (fn: () => unknown): void }

/** Listens on a free local port and answers the server's origin, e.g. `http://127.0.0.1:39123`. */
export async function listenLocally (t: Teardown, server: Server): Promise<string> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    server.closeAllConnections()
    server.close()
    await once(server, 'close')
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
