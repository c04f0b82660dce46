// The breaker's failure window against a reference model of a time-bucketed sliding window, over
// generated call sequences of several callers and clock jumps from milliseconds to days: every call must
// get the model's answer (does the window now say the operation is down?).
import fc from 'fast-check'
import t from 'tap'
import { FailureWindow, type BreakerOptions } from '../../src/upstream/breaker.ts'

/**
 * The model, written for clarity over speed: every counted call kept with its time; a call counts while its
 * bucket (time / bucket size, rounded down) is one of the `count` newest up to now. The clock is the
 * latest time seen (a clock set back does not reopen old buckets). A named caller's failure is not counted
 * when the window already holds its share of that caller's failures: callerShare if the operation served it,
 * else one.
 */
function model (options: BreakerOptions) {
  const { failureRatePercent, minCalls, windowMs } = options
  const count = Math.max(5, Math.ceil(windowMs / 1000))
  const bucketMs = Math.max(1, Math.round(windowMs / count))
  const share = Math.max(1, Math.floor(failureRatePercent * minCalls / 200))
  const calls: Array<{ bucket: number, failed: boolean, caller: string | undefined }> = []
  let latest = -Infinity
  return (time: number, failed: boolean, caller?: string, served = false): boolean => {
    latest = Math.max(latest, time)
    const now = Math.floor(latest / bucketMs)
    const counted = (call: { bucket: number }) => call.bucket > now - count
    if (failed && caller !== undefined &&
      calls.filter(call => counted(call) && call.failed && call.caller === caller).length >=
      (served ? share : 1)) return false
    calls.push({ bucket: now, failed, caller })
    const inWindow = calls.filter(counted)
    const failures = inWindow.filter(call => call.failed).length
    return failed && inWindow.length >= minCalls && failures > (failureRatePercent / 100) * inWindow.length
  }
}

const options = fc.record({
  failureRatePercent: fc.integer({ min: 1, max: 99 }),
  minCalls: fc.integer({ min: 1, max: 30 }),
  windowMs: fc.oneof(fc.constantFrom(1000, 1234, 2000, 10_000, 60_500), fc.integer({ min: 1, max: 120_000 })),
  halfOpenAfterMs: fc.constant(10_000)
})

const SECOND = 1000
const DAY = 86_400 * SECOND
// Mostly calls close together, with quiet spells of seconds, minutes, hours and days, and a clock set back.
// A few named callers, served or not by then, and calls that name none.
const caller = fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined })
const call = (min: number, max: number) =>
  fc.record({ advance: fc.integer({ min, max }), failed: fc.boolean(), caller, served: fc.boolean() })
const step = fc.oneof(
  { weight: 6, arbitrary: call(0, 300) },
  { weight: 2, arbitrary: call(0, 30 * SECOND) },
  { weight: 1, arbitrary: call(0, 3 * DAY) },
  { weight: 1, arbitrary: call(-5 * SECOND, 0) }
)
// Runs of failures, so the minimum volume is reached before and after the quiet spells.
const steps = fc.array(fc.tuple(step, fc.integer({ min: 1, max: 25 })), { minLength: 1, maxLength: 40 })
  .map(runs => runs.flatMap(([first, times]) => [
    first, ...Array.from({ length: times - 1 }, () => ({ ...first, advance: 0 }))
  ]))

t.test('the window answers as a time-bucketed sliding window, whatever the gaps between calls', async t => {
  let opened = 0
  fc.assert(fc.property(options, fc.integer({ min: 0, max: 2 * DAY }), steps, (opts, start, calls) => {
    let now = 1_700_000_000_000 + start
    const window = new FailureWindow(opts, () => now)
    const expected = model(opts)
    for (const { advance, failed, caller, served } of calls) {
      now += advance
      const down = window.record(failed, caller, served)
      if (down !== expected(now, failed, caller, served)) return false
      if (down) opened++
    }
    return true
  }), { seed: 21, numRuns: 300 })
  t.ok(opened > 0, `the window said down ${opened} times, as the model did`)
})

t.test('the issue 21 reproduction, as the model sees it: 19 failures, six hours, one failure', async t => {
  let now = 1_700_000_000_000
  const opts = { failureRatePercent: 50, minCalls: 20, windowMs: 10_000, halfOpenAfterMs: 10_000 }
  const window = new FailureWindow(opts, () => now)
  const expected = model(opts)
  for (let i = 0; i < 19; i++) t.equal(window.record(true), expected(now, true))
  now += 6 * 3600 * SECOND
  t.equal(expected(now, true), false, 'the model: one call in the window')
  t.equal(window.record(true), false, 'the window agrees')
})
