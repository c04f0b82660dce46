// What a measured process (the service, the floor) reports about itself over IPC: CPU time, requests
// served, its peak RSS, the garbage collector's pauses and the bytes it allocated; and, on
// request, V8's CPU profile or heap sampling profile of the measured rounds. Read inside the process it
// describes, never over the HTTP paths being measured.
import { readdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import v8 from 'node:v8'
import type { Handlers } from './ipc.ts'

export interface ProcessStats {
  /** process.cpuUsage(): user and system microseconds since the process started. */
  cpu: NodeJS.CpuUsage
  /** HTTP requests that reached the server since it started. */
  served: number
  /** The kernel's lifetime peak RSS (getrusage maxrss), in bytes. */
  maxRss: number
  /** Collections since the meters started, and the main thread's pause time they cost (µs). */
  gc: { count: number, pauseUs: number }
  /**
   * Bytes allocated on the V8 heap since the meters started: the heap used now plus everything the
   * collector freed. Node 24 has no `total_allocated_bytes`; v8.GCProfiler gives the heap used before
   * and after every collection, so this is exact, and independent of load and of other processes.
   */
  allocatedBytes: number
  /** CPU microseconds by thread since the process started (/proc/self/task; null off Linux). */
  threads: ThreadCpu | null
}

/**
 * Where a process's CPU goes: the main thread (JavaScript, and the system calls it makes), V8's worker threads
 * (concurrent and parallel garbage collection, background compilation) and libuv's pool (zlib, crypto, fs).
 */
interface ThreadCpu { mainUser: number, mainSystem: number, v8: number, libuv: number, other: number }

// Linux's USER_HZ: /proc reports thread times in these ticks.
const TICK_US = 10_000

/** Each thread's user and system time from /proc/self/task/<tid>/stat, summed by what the thread is. */
function threadCpu (): ThreadCpu | null {
  let tids: string[]
  try { tids = readdirSync('/proc/self/task') } catch { return null }
  const sum: ThreadCpu = { mainUser: 0, mainSystem: 0, v8: 0, libuv: 0, other: 0 }
  for (const tid of tids) {
    let stat: string
    try { stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8') } catch { continue }
    // The name is in parentheses and may hold spaces: the fields after it are space-separated.
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const user = Number(fields[11]) * TICK_US
    const system = Number(fields[12]) * TICK_US
    if (Number(tid) === process.pid) {
      sum.mainUser += user
      sum.mainSystem += system
    } else if (name.startsWith('V8')) sum.v8 += user + system
    else if (name.startsWith('libuv')) sum.libuv += user + system
    else sum.other += user + system
  }
  return sum
}

export interface Meters {
  handlers: Handlers
  stop (): void
}

/**
 * Starts metering this process. `server` is the measured HTTP server: a listener on it counts every
 * request without adding anything to the path being measured. BENCH_PROFILE_DIR and BENCH_PROFILE
 * (`cpu` or `heap`) ask for a V8 profile between `profileStart` and `profileStop`.
 */
export function startMeters (server: Server): Meters {
  let served = 0
  server.on('request', () => { served++ })

  // A running GCProfiler gives its entries only when stopped: each read stops it, folds them in, restarts.
  let gcProfiler = new v8.GCProfiler()
  gcProfiler.start()
  const gc = { count: 0, pauseUs: 0 }
  let freed = 0
  const startedUsed = v8.getHeapStatistics().used_heap_size
  function readGc (): void {
    const { statistics } = gcProfiler.stop()
    gcProfiler = new v8.GCProfiler()
    gcProfiler.start()
    for (const entry of statistics) {
      gc.count++
      gc.pauseUs += entry.cost
      freed += entry.beforeGC.heapStatistics.usedHeapSize - entry.afterGC.heapStatistics.usedHeapSize
    }
  }

  const profileDir = process.env.BENCH_PROFILE_DIR
  const asked = process.env.BENCH_PROFILE
  const kind = asked === 'heap' || asked === 'survivors' ? asked : 'cpu'
  const session = new Session()

  const handlers: Handlers = {
    stats: (): ProcessStats => {
      readGc()
      return {
        cpu: process.cpuUsage(),
        served,
        maxRss: process.resourceUsage().maxRSS * 1024,
        gc: { ...gc },
        allocatedBytes: v8.getHeapStatistics().used_heap_size + freed - startedUsed,
        threads: threadCpu()
      }
    },
    async profileStart () {
      if (profileDir === undefined) return
      session.connect()
      if (kind === 'cpu') {
        await session.post('Profiler.enable')
        await session.post('Profiler.setSamplingInterval', { interval: 100 })
        await session.post('Profiler.start')
      } else {
        // heap: every allocation the sampler sees, where the bytes per profile come from. survivors: only
        // what outlived a scavenge (promoted, or in flight at the end), what the collector's threads pay for.
        await session.post('HeapProfiler.startSampling', {
          samplingInterval: 4096,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: kind === 'heap'
        } as never)
      }
    },
    async profileStop (): Promise<string | undefined> {
      if (profileDir === undefined) return undefined
      const profile = kind === 'cpu'
        ? (await session.post('Profiler.stop')).profile
        : (await session.post('HeapProfiler.stopSampling')).profile
      session.disconnect()
      const name = process.env.BENCH_PROCESS_NAME ?? 'process'
      const path = join(profileDir, `${name}-${Date.now()}.${kind === 'cpu' ? 'cpuprofile' : 'heapprofile'}`)
      await writeFile(path, JSON.stringify(profile))
      return path
    }
  }
  return {
    handlers,
    stop () {
      gcProfiler.stop()
    }
  }
}
