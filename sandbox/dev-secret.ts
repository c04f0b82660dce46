// The signing key of a live `npm run dev`, shared with `npm run token` through a file only the user can read: the
// run writes it (mode 0600, in a 0700 directory of the user's runtime or temp directory) and removes it at exit, so
// an app team can mint a token for any test client while the sandbox runs. A file left by a run that died names a
// process that is gone, and is ignored.
import { lstatSync, readFileSync } from 'node:fs'
import { lstat, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PrivateJwk } from './sign.ts'

/** What `npm run token` needs to sign as the dev run does. */
export interface DevSigning {
  /** The dev run's process, to tell a live run from a file left by one that died. */
  pid: number
  /** The service's base URL, for the messages. */
  url: string
  /** The HS256 secret, or with `--jwks` a private key of the sandbox's key set. */
  secret?: string
  jwk?: PrivateJwk
  issuer?: string
  audience?: string
  maxAgeS: number
}

/**
 * Where the file lives: $XDG_RUNTIME_DIR (per user, mode 0700, emptied at logout) when set, else a directory of
 * the user's own under the temp directory.
 */
export function devSigningFile (env: Record<string, string | undefined> = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR
  const dir = runtime !== undefined && runtime !== ''
    ? join(runtime, 'dealer-profile-bff')
    : join(tmpdir(), `dealer-profile-bff-${process.getuid!()}`)
  return join(dir, 'dev-signing.json')
}

/** Whether `dir` is a real directory of this user that nobody else can enter (not a planted symlink). */
function privateDirectory (dir: string, stats = lstatSync(dir)): boolean {
  return stats.isDirectory() && stats.uid === process.getuid!() && (stats.mode & 0o077) === 0
}

/** Writes the file afresh with mode 0600; refuses (throws) a directory another user could read or replace. */
export async function writeDevSigning (file: string, signing: DevSigning): Promise<void> {
  const dir = join(file, '..')
  await mkdir(dir, { recursive: true, mode: 0o700 })
  if (!privateDirectory(dir, await lstat(dir))) throw new Error(`${dir} is not a directory only this user can open`)
  await rm(file, { force: true })
  // `wx`: created here, never written through a file or link that appeared in between.
  await writeFile(file, `${JSON.stringify(signing)}\n`, { mode: 0o600, flag: 'wx' })
}

/** Removes the file if it is still this run's. */
export async function removeDevSigning (file: string, pid = process.pid): Promise<void> {
  const current = readDevSigningFile(file)
  if (current?.pid === pid) await rm(file, { force: true })
}

function readDevSigningFile (file: string): DevSigning | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DevSigning
  } catch {
    return null
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The live dev run's signing key, or null when no `npm run dev` is running (or its file is not private). */
export function readDevSigning (file: string): DevSigning | null {
  try {
    if (!privateDirectory(join(file, '..'))) return null
    const stats = lstatSync(file)
    if (!stats.isFile() || stats.uid !== process.getuid!() || (stats.mode & 0o077) !== 0) return null
  } catch {
    return null
  }
  const signing = readDevSigningFile(file)
  return signing !== null && Number.isSafeInteger(signing.pid) && alive(signing.pid) ? signing : null
}
