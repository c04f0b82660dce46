// The sandbox upstream in a third process, so its work is not billed to the service: it reports its URL,
// its request counts and its own CPU time to the bench over IPC, and takes the answer delay from it.
import { startSandboxUpstream, type SandboxCounts } from '../sandbox/upstream.ts'
import { benchClients } from './clients.ts'
import { serveParent } from './ipc.ts'

export interface SandboxStats {
  counts: SandboxCounts
  cpu: NodeJS.CpuUsage
}

async function main (): Promise<void> {
  const passport = process.env.SANDBOX_PASSPORT_KEY
  const dealer = process.env.SANDBOX_DEALER_KEY
  if (passport === undefined || dealer === undefined) {
    throw new Error('SANDBOX_PASSPORT_KEY and SANDBOX_DEALER_KEY are required')
  }
  const sandbox = await startSandboxUpstream({ keys: { passport, dealer }, clients: benchClients() })
  serveParent(sandbox.url, {
    stats: (): SandboxStats => ({ counts: sandbox.counts(), cpu: process.cpuUsage() }),
    delay: ms => { sandbox.setDelay(ms as number) },
    close: () => sandbox.close()
  })
}

if (import.meta.main) await main()
