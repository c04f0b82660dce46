// A `node src/server.ts` child as tests read it: its JSON log lines, and the URL it listens on.
import type { ChildProcess } from 'node:child_process'

export interface LogLine { level: number, msg: string, [key: string]: unknown }

/**
 * Collects the child's JSON log lines into `logs` for its whole life, and resolves with the URL of its
 * "Server listening" line; rejects, with what it wrote to stderr, when it exits before listening.
 */
export function untilListening (child: ChildProcess, logs: LogLine[], stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = ''
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      buffered += text
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      for (const line of lines) {
        const entry = JSON.parse(line) as LogLine
        logs.push(entry)
        const listening = /^Server listening at (http:\/\/\S+)$/.exec(entry.msg)
        if (listening !== null) resolve(listening[1]!)
      }
    })
    child.once('exit', code => { reject(new Error(`the server exited (${code}) before listening:\n${stderr()}`)) })
  })
}
