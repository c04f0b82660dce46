// What reading and writing a profile's JSON costs at 3 to 300 viewed cars, the way the service does it against the
// plain way: a passport answer's bytes to a value (response-body.ts against JSON.parse of the UTF-8 text) and a
// profile to bytes (serializer.ts's routeSerializer against Buffer.from() of fast-json-stringify's text). The
// fixtures' Cyrillic name makes the plain way's text two bytes a character, and from about 64 Ki characters V8
// puts it in the large-object space.
// Run: node bench/json-text.ts [--ms 400] with npm start's node flags to see what the service pays.
import { parseArgs } from 'node:util'
import fastJsonStringify from 'fast-json-stringify'
import { Profile } from '../schemas/profile.ts'
import { collectShared, toRefs } from '../src/plugins/app/shared-schemas/refs.ts'
import { routeSerializer } from '../src/serializer.ts'
import { contractorSection, createProfileComposer, discountSection } from '../src/profile/compose.ts'
import { responseText, parseResponseJson } from '../src/upstream/transport/response-body.ts'
import { benchLargeClient } from './clients.ts'

const { values: args } = parseArgs({ options: { ms: { type: 'string', default: '400' } } })
const MS = Number(args.ms)

/** Microseconds per call of `work`, over about MS milliseconds after a quarter as long of warm-up. */
function timed (work: () => unknown): number {
  const run = (ms: number) => {
    let calls = 0
    const started = performance.now()
    while (performance.now() - started < ms) { work(); calls++ }
    return (performance.now() - started) * 1000 / calls
  }
  run(MS / 4)
  return run(MS)
}

const shared = Object.fromEntries(
  collectShared([Profile]).map(schema => [(schema as { $id: string }).$id, toRefs(schema)]))
const plainWrite = fastJsonStringify({ $ref: 'Profile' }, {
  schema: shared as Record<string, fastJsonStringify.Schema>
})
const ourWrite = routeSerializer<unknown>({ $ref: 'Profile' }, shared)

const rows: string[][] = [['viewed cars', 'answer KB', 'parse: plain µs', 'parse: ours µs', 'profile KB',
  'write: plain µs', 'write: ours µs']]
const composer = createProfileComposer()
for (const cars of [3, 30, 100, 200, 300]) {
  const client = benchLargeClient(0, cars)
  const passport = Buffer.from(JSON.stringify(client.passport))
  // The profile as the service composes it from the client's three answers.
  const profile = composer.compose(client.passport,
    { discount: discountSection(client.discount), contractor: contractorSection(client.contractor), degraded: [] })
  if (!ourWrite(profile).equals(Buffer.from(plainWrite(profile)))) throw new Error('routeSerializer wrote other bytes')
  rows.push([String(cars), (passport.length / 1000).toFixed(1),
    timed(() => JSON.parse(responseText(passport))).toFixed(1), timed(() => parseResponseJson(passport)).toFixed(1),
    (ourWrite(profile).length / 1000).toFixed(1),
    timed(() => Buffer.from(plainWrite(profile))).toFixed(1), timed(() => ourWrite(profile)).toFixed(1)])
}
process.stdout.write(rows.map(row => `| ${row.join(' | ')} |`).join('\n') + '\n')
