// The sandbox upstream in a third process, so its work is not billed to the service: it reports its URL,
// its request counts and its own CPU time to the bench over IPC, and takes the answer delay from it. With
// SANDBOX_TLS_KEY_FILE and SANDBOX_TLS_CERT_FILE (PEM) it serves the same clients over https as well, on
// a second port (ask `tlsUrl`), counting the TLS handshakes: connection reuse shows in them.
import { readFileSync } from 'node:fs'
import { startSandboxUpstream, type SandboxCounts, type SandboxUpstream } from '../sandbox/upstream.ts'
import { sandboxClients } from './clients.ts'
import { serveParent } from './ipc.ts'

export interface SandboxStats {
  /** Both servers' counts, summed: one scenario runs at a time. */
  counts: SandboxCounts
  /** TLS handshakes the https server completed since start. */
  tlsConnections: number
  cpu: NodeJS.CpuUsage
}

function sum (a: SandboxCounts, b: SandboxCounts): SandboxCounts {
  const byOperation = { ...a.byOperation }
  for (const [name, n] of Object.entries(b.byOperation)) byOperation[name as keyof typeof byOperation] += n
  return { total: a.total + b.total, byOperation, redirects: a.redirects + b.redirects }
}

async function main (): Promise<void> {
  const passport = process.env.SANDBOX_PASSPORT_KEY
  const dealer = process.env.SANDBOX_DEALER_KEY
  if (passport === undefined || dealer === undefined) {
    throw new Error('SANDBOX_PASSPORT_KEY and SANDBOX_DEALER_KEY are required')
  }
  const keyFile = process.env.SANDBOX_TLS_KEY_FILE
  const certFile = process.env.SANDBOX_TLS_CERT_FILE
  const clients = sandboxClients()
  const plain = await startSandboxUpstream({ keys: { passport, dealer }, clients })
  const servers: SandboxUpstream[] = [plain]
  const secure = keyFile === undefined || certFile === undefined
    ? undefined
    : await startSandboxUpstream({
      keys: { passport, dealer }, clients, tls: { key: readFileSync(keyFile), cert: readFileSync(certFile) }
    })
  if (secure !== undefined) servers.push(secure)
  serveParent(plain.url, {
    stats: (): SandboxStats => ({
      counts: servers.map(s => s.counts()).reduce(sum),
      tlsConnections: secure?.secureConnections() ?? 0,
      cpu: process.cpuUsage()
    }),
    tlsUrl: () => secure?.url,
    delay: ms => { for (const s of servers) s.setDelay(ms as number) },
    close: async () => { await Promise.all(servers.map(s => s.close())) }
  })
}

if (import.meta.main) await main()
