// Single-flight on its own: who shares a run, what leaving does, and that nothing outlives a run.
import t from 'tap'
import { createSingleFlight } from '../../src/profile/single-flight.ts'

/** A run the test settles by hand; `signal` is the one the run was given. */
function manualWork () {
  const runs: Array<{ signal: AbortSignal, resolve: (v: string) => void, reject: (e: Error) => void }> = []
  const work = ({ signal }: AbortController) => new Promise<string>((resolve, reject) => {
    runs.push({ signal, resolve, reject })
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })
  })
  return { runs, work }
}

t.test('joiners of a key share the run and its value; the starter is named to them', async t => {
  const flights = createSingleFlight<string>()
  const { runs, work } = manualWork()
  const a = flights.join('k', 'req-a', work)
  const b = flights.join('k', 'req-b', work)
  const other = flights.join('other', 'req-c', work)
  t.equal(runs.length, 2, 'one run per key')
  t.equal(a.sharedWith, undefined)
  t.equal(b.sharedWith, 'req-a')
  t.equal(other.sharedWith, undefined)
  runs[0]!.resolve('value')
  runs[1]!.resolve('other value')
  t.strictSame(await Promise.all([a.result, b.result, other.result]), ['value', 'value', 'other value'])
  t.equal(flights.size, 0, 'nothing kept once settled')
})

t.test('a failure reaches every waiter and the next join starts a new run', async t => {
  const flights = createSingleFlight<string>()
  const { runs, work } = manualWork()
  const a = flights.join('k', 'req-a', work)
  const b = flights.join('k', 'req-b', work)
  runs[0]!.reject(new Error('upstream down'))
  await t.rejects(a.result, { message: 'upstream down' })
  await t.rejects(b.result, { message: 'upstream down' })
  const c = flights.join('k', 'req-c', work)
  t.equal(runs.length, 2)
  t.equal(c.sharedWith, undefined)
  runs[1]!.resolve('recovered')
  t.equal(await c.result, 'recovered')
})

t.test('the run is aborted only when its last waiter leaves, and is then forgotten', async t => {
  const flights = createSingleFlight<string>()
  const { runs, work } = manualWork()
  const a = flights.join('k', 'req-a', work)
  const b = flights.join('k', 'req-b', work)
  a.leave()
  a.leave()
  t.notOk(runs[0]!.signal.aborted, 'one waiter left, twice: the other still waits')
  b.leave()
  t.ok(runs[0]!.signal.aborted, 'nobody waits: the work is stopped')
  await t.rejects(a.result)
  const c = flights.join('k', 'req-c', work)
  t.equal(runs.length, 2, 'a request after that does not join the run being torn down')
  runs[1]!.resolve('fresh')
  t.equal(await c.result, 'fresh')
})

t.test('leaving after the run settled changes nothing', async t => {
  const flights = createSingleFlight<string>()
  const { runs, work } = manualWork()
  const a = flights.join('k', 'req-a', work)
  runs[0]!.resolve('done')
  await a.result
  const b = flights.join('k', 'req-b', work)
  a.leave()
  t.notOk(runs[1]!.signal.aborted, "a settled run's waiter cannot abort the next run")
  runs[1]!.resolve('next')
  t.equal(await b.result, 'next')
})
