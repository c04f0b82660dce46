// The breaker's failure window against a reference model of a time-bucketed sliding window, over
// generated call sequences and clock jumps from milliseconds to days: every call must get the model's
// answer (does the window now say the operation is down?).
import fc from 'fast-check'
import t from 'tap'
import { FailureWindow, type BreakerOptions } from '../../src/upstream/breaker.ts'

/**
 * The model, written for clarity over speed: every call kept with its time; a call counts while its
 * bucket (time / bucket size, rounded down) is one of the `count` newest up to now. The clock is the
 * latest time seen (a clock set back does not reopen old buckets).
 */
function model ({ failureRatePercent, minCalls, windowMs }: BreakerOptions) {
  const count = Math.max(5, Math.ceil(windowMs / 1000))
  const bucketMs = Math.max(1, Math.round(windowMs / count))
  const calls: Array<{ bucket: number, failed: boolean }> = []
  let latest = -Infinity
  return (time: number, failed: boolean): boolean => {
    latest = Math.max(latest, time)
    const now = Math.floor(latest / bucketMs)
    calls.push({ bucket: now, failed })
    const inWindow = calls.filter(call => call.bucket > now - count)
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
const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 300 }), failed: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 30 * SECOND }), failed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 3 * DAY }), failed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ advance: fc.integer({ min: -5 * SECOND, max: 0 }), failed: fc.boolean() }) }
)
// Runs of failures, so the minimum volume is reached before and after the quiet spells.
const steps = fc.array(fc.tuple(step, fc.integer({ min: 1, max: 25 })), { minLength: 1, maxLength: 40 })
  .map(runs => runs.flatMap(([first, times]) => [
    first, ...Array.from({ length: times - 1 }, () => ({ advance: 0, failed: first.failed }))
  ]))

t.test('the window answers as a time-bucketed sliding window, whatever the gaps between calls', async t => {
  let opened = 0
  fc.assert(fc.property(options, fc.integer({ min: 0, max: 2 * DAY }), steps, (opts, start, calls) => {
    let now = 1_700_000_000_000 + start
    const window = new FailureWindow(opts, () => now)
    const expected = model(opts)
    for (const { advance, failed } of calls) {
      now += advance
      const down = window.record(failed)
      if (down !== expected(now, failed)) return false
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
