// `npm run sandbox`: the stand-in upstream alone, for an operator who wants to try `npm start` (the production
// path, with its own .env) before touching the real upstream, the test identities of each state included. It
// prints the variables that point the service at it and how to mint a token for a seeded client; Ctrl-C stops it.
// Keys and secret are generated for this run only.
import { randomBytes } from 'node:crypto'
import closeWithGrace from 'close-with-grace'
import { startSandboxUpstream, type SandboxUpstream } from './upstream.ts'
import { seededClients, unknownClient } from './seed.ts'
import { OUTCOME_CLIENTS } from './outcomes.ts'

const secret = (bytes: number) => randomBytes(bytes).toString('base64url')

/** SANDBOX_PORT as a port, 0 (a free one) when unset; undefined when it is not a port. */
function sandboxPort (value: string | undefined): number | undefined {
  if (value === undefined || value === '') return 0
  const port = Number(value)
  return /^\d+$/.test(value) && port <= 65_535 ? port : undefined
}

function banner (sandbox: SandboxUpstream, env: Record<string, string>): string {
  const [first] = seededClients
  const { uid_client: uid, login, vendor } = first!.identity
  const clients = [
    ...seededClients.map(c => ({ label: c.label, ...c.identity })),
    { label: 'UNKNOWN', ...unknownClient }
  ]
  return [
    '',
    `Sandbox upstream (stand-in passport and dealer upstreams) on ${sandbox.url}.`,
    'Keys and secret are generated for this run only.',
    '',
    'To try npm start against it, put these lines in .env (or export them):',
    '',
    ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
    '',
    'Then, in another terminal, npm start, and a token for a seeded client (npm run token reads the secret from .env):',
    '',
    `  TOKEN=$(npm run -s token -- --sub ${uid} --login ${login} --vendor ${vendor})`,
    '  curl -sS -H "Authorization: Bearer $TOKEN" http://127.0.0.1:3000/api/users/profile',
    '',
    'Seeded clients (--sub, --login, --vendor):',
    ...clients.map(c => `  ${c.label.padEnd(8)} ${c.uid_client} ${c.login} ${c.vendor}`),
    '',
    'Test identities, one for each state of the profile an app must handle (docs/mobile.md, Every state on the ' +
      'sandbox):',
    ...OUTCOME_CLIENTS.flatMap(c => [
      `  ${c.name.padEnd(18)} ${c.uid_client} ${c.login} ${c.vendor}`, `  ${' '.repeat(18)} ${c.about}`
    ]),
    '',
    'Ctrl-C stops the sandbox.',
    ''
  ].join('\n')
}

async function main (): Promise<void> {
  const port = sandboxPort(process.env.SANDBOX_PORT)
  if (port === undefined) {
    process.stderr.write('npm run sandbox: SANDBOX_PORT must be a port number (0 to 65535), or unset for a free one\n')
    process.exit(1)
  }
  const keys = { passport: secret(24), dealer: secret(24) }
  let sandbox: SandboxUpstream
  try {
    sandbox = await startSandboxUpstream({ keys, port, outcomes: true })
  } catch (error) {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error
    process.stderr.write(`npm run sandbox: port ${port} is in use; choose another SANDBOX_PORT, or unset it\n`)
    process.exit(1)
  }
  closeWithGrace({ delay: 5_000 }, async () => {
    await sandbox.close()
    process.stdout.write('Sandbox upstream stopped.\n')
  })
  process.stdout.write(banner(sandbox, {
    UPSTREAM_URL: sandbox.url,
    PASSPORT_API_KEY: keys.passport,
    DEALER_API_KEY: keys.dealer,
    AUTH_JWT_SECRET: secret(32)
  }))
}

if (import.meta.main) await main()
