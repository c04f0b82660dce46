// The benchmark's control channel to its child processes (the service and the sandbox): fork's IPC, so
// every measurement is read inside the process it describes and never travels over the HTTP paths
// being measured.
import { fork, type ChildProcess } from 'node:child_process'

interface Ask { id: number, op: string, arg?: unknown }
type Reply = { id: number, value: unknown } | { id: number, error: string }
interface Ready { ready: string }

export type Handlers = Record<string, (arg: unknown) => unknown>

/**
 * Child side: answers the parent's questions with `handlers` and announces `url`. `close` is answered
 * before the channel is let go, so the process can end by itself (and write its --cpu-prof). A parent
 * that dies takes its children with it.
 */
export function serveParent (url: string, handlers: Handlers & { close (): Promise<void> }): void {
  const send = process.send?.bind(process)
  if (send === undefined) throw new Error('this entry is started by bench/bench.ts (child_process.fork), not directly')
  process.on('message', async (message: Ask) => {
    let reply: Reply
    try {
      const handler = handlers[message.op]
      if (handler === undefined) throw new Error(`unknown op ${message.op}`)
      reply = { id: message.id, value: await handler(message.arg) }
    } catch (error) {
      reply = { id: message.id, error: error instanceof Error ? error.message : String(error) }
    }
    send(reply, () => { if (message.op === 'close') process.disconnect() })
  })
  process.once('disconnect', () => {
    // Normal end after `close`; otherwise the parent went away: do not linger.
    setTimeout(() => process.exit(0), 2000).unref()
  })
  send({ ready: url } satisfies Ready)
}

export interface Child {
  /** The URL the child announced when it was ready. */
  url: string
  ask<T> (op: string, arg?: unknown): Promise<T>
  /** Asks the child to close and waits for it to exit; kills it if it does not within `graceMs`. */
  stop (graceMs?: number): Promise<void>
  process: ChildProcess
}

export interface StartOptions {
  env: Record<string, string>
  execArgv?: string[]
  /** Each line the child writes to stdout (the service's pino lines). */
  onLine?: (line: string) => void
  readyTimeoutMs?: number
}

export async function startChild (
  entry: string,
  { env, execArgv = [], onLine, readyTimeoutMs = 30_000 }: StartOptions
): Promise<Child> {
  const child = fork(entry, [], { env, execArgv, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  let rest = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n')
    rest = lines.pop() ?? ''
    if (onLine !== undefined) for (const line of lines) onLine(line)
  })

  const pending = new Map<number, { resolve (value: unknown): void, reject (error: Error): void }>()
  let nextId = 1
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  exited.then(code => {
    for (const { reject } of pending.values()) reject(new Error(`${entry} exited (code ${code}) before answering`))
    pending.clear()
  })

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${entry} did not report ready within ${readyTimeoutMs} ms`)),
      readyTimeoutMs
    )
    child.on('message', (message: Reply | Ready) => {
      if ('ready' in message) {
        clearTimeout(timer)
        resolve(message.ready)
        return
      }
      const waiter = pending.get(message.id)
      if (waiter === undefined) return
      pending.delete(message.id)
      if ('error' in message) waiter.reject(new Error(`${entry}: ${message.error}`))
      else waiter.resolve(message.value)
    })
    exited.then(code => {
      clearTimeout(timer)
      reject(new Error(`${entry} exited (code ${code}) before it was ready`))
    })
  })

  function ask<T> (op: string, arg?: unknown): Promise<T> {
    const id = nextId++
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      child.send({ id, op, arg } satisfies Ask)
    })
  }

  async function stop (graceMs = 10_000): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    try {
      await ask('close')
    } catch {}
    await exited
    clearTimeout(timer)
  }

  return { url, ask, stop, process: child }
}
