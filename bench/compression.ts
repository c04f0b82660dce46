// What compressing a profile costs and saves, per brotli quality and gzip level: the sandbox's profiles
// as the service answers them (plain), each compressed in a loop, CPU µs per profile against the bytes
// left. Run: node bench/compression.ts [--rounds 2000]. Picks BROTLI_QUALITY and GZIP_LEVEL (compress.ts).
import { parseArgs } from 'node:util'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { ivanov, petrova, type SeededClient } from '../sandbox/seed.ts'
import { signToken } from '../sandbox/sign.ts'
import { startSandboxUpstream } from '../sandbox/upstream.ts'
import { benchLargeClient } from './clients.ts'

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '2000' } } })
const ROUNDS = Number(args.rounds)
const KEYS = { passport: 'bench-passport-key', dealer: 'bench-dealer-key' }
const SECRET = 'bench-compression-secret-of-32-characters'
/** A heavy user: the bench's large-profile client (LARGE_VIEWED_CARS viewed cars). */
const heavy: SeededClient = { ...benchLargeClient(0), label: 'HEAVY' }

/** The profiles as the service answers them, uncompressed. */
async function profiles (): Promise<Array<{ label: string, json: Buffer }>> {
  const sandbox = await startSandboxUpstream({ keys: KEYS, clients: [ivanov, petrova, heavy] })
  const app = await buildApp(loadConfig({
    UPSTREAM_URL: sandbox.url,
    PASSPORT_API_KEY: KEYS.passport,
    DEALER_API_KEY: KEYS.dealer,
    AUTH_JWT_SECRET: SECRET,
    COMPRESSION: 'off',
    LOG_LEVEL: 'silent'
  }))
  try {
    const out = []
    for (const client of [ivanov, petrova, heavy]) {
      const { login, uid_client: sub, vendor } = client.identity
      const authorization = `Bearer ${signToken({ sub, login, vendor }, SECRET)}`
      const res = await app.inject({ url: '/api/users/profile', headers: { authorization } })
      if (res.statusCode !== 200) throw new Error(`${client.label}: ${res.statusCode} ${res.body}`)
      out.push({ label: client.label, json: res.rawPayload })
    }
    return out
  } finally {
    await app.close()
    await sandbox.close()
  }
}

type Compress = (input: Buffer) => Buffer
const brotli = (quality: number, lgwin?: number): Compress => input => brotliCompressSync(input, {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: quality,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    ...(lgwin === undefined ? {} : { [constants.BROTLI_PARAM_LGWIN]: lgwin })
  }
})
// As compress.ts configures them: one set of options for every answer (no per-answer size hint).
const settings: Array<[string, Compress]> = [
  ...[1, 2, 3, 4, 5, 6].map(q => [`br q${q}`, brotli(q)] as [string, Compress]),
  ...[4, 5].map(q => [`br q${q} lgwin 18`, brotli(q, 18)] as [string, Compress]),
  ...[1, 4, 6, 9].map(level => [`gzip ${level}`, (input: Buffer) => gzipSync(input, { level })] as [string, Compress])
]

const cpuMicros = (cpu: NodeJS.CpuUsage) => cpu.user + cpu.system

/** CPU µs of `rounds` calls of `compress`, per call. */
function sample (json: Buffer, compress: Compress, rounds: number): number {
  const start = process.cpuUsage()
  for (let i = 0; i < rounds; i++) compress(json)
  return cpuMicros(process.cpuUsage(start)) / rounds
}

// The machine may be shared: samples of every setting in turn, and the least of each (the one a busy
// moment disturbed least), so that a busy moment lands on one sample of every setting, not all of one.
const SAMPLES = 9

const found = await profiles()
const results = found.map(({ json }) => {
  const samples = settings.map(([, compress]) => { compress(json); return [] as number[] })
  for (let round = 0; round < SAMPLES; round++) {
    settings.forEach(([, compress], i) => { samples[i]!.push(sample(json, compress, Math.ceil(ROUNDS / SAMPLES))) })
  }
  return settings.map(([, compress], i) => ({ us: Math.min(...samples[i]!), bytes: compress(json).length }))
})
const header = ['setting', ...found.map(p => `${p.label} (${p.json.length} B): µs, bytes (%)`)]
console.log(`| ${header.join(' | ')} |\n|${header.map(() => ' --- ').join('|')}|`)
settings.forEach(([name], i) => {
  const cells = found.map(({ json }, p) => {
    const { us, bytes } = results[p]![i]!
    return `${us.toFixed(1)} µs, ${bytes} (${Math.round(bytes / json.length * 100)} %)`
  })
  console.log(`| ${[name, ...cells].join(' | ')} |`)
})
