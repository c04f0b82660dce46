// The depth bound of upstream answers: which parts of each answer are passed on undescribed (derived
// from the schemas, not restated), and the scans that bound them without recursing past the limit.
import t from 'tap'
import { Type } from 'typebox'
import { MAX_DEPTH, passThroughPaths, passThroughWithinDepth, withinDepth } from '../../src/upstream/contract/depth.ts'
import { operations } from '../../schemas/operations.ts'

const nest = (levels: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

t.test('the pass-through parts of each answer come from its schema', async t => {
  t.strictSame(passThroughPaths(operations['passport.get_client'].response), [['cookies', '*']])
  t.strictSame(passThroughPaths(operations['dealer.discount'].response), [['data']])
  t.strictSame(passThroughPaths(operations['dealer.client'].response),
    [['data', 'last_dealer'], ['data', 'contact_persons', '*']])
  t.strictSame(passThroughPaths(Type.Object({ a: Type.String(), b: Type.Array(Type.Object({ c: Type.Number() })) })),
    [], 'a closed schema has none')
})

t.test('withinDepth counts objects and arrays, not scalars, and stops at the limit', async t => {
  t.ok(withinDepth(1, 0))
  t.ok(withinDepth(nest(MAX_DEPTH)))
  t.notOk(withinDepth(nest(MAX_DEPTH + 1)))
  t.notOk(withinDepth({ a: { b: nest(10) } }, 11))
  t.ok(withinDepth({ a: { b: nest(10) } }, 12))
  // Far deeper than any stack: the scan gives up at the limit instead of overflowing.
  t.notOk(withinDepth(JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)))
})

t.test('passThroughWithinDepth counts the levels above each pass-through part', async t => {
  const paths = passThroughPaths(operations['dealer.client'].response)
  const answer = (lastDealer: unknown, persons: unknown[] = []) =>
    ({ data: { last_dealer: lastDealer, contact_persons: persons } })
  t.ok(passThroughWithinDepth(answer(null), paths))
  t.ok(passThroughWithinDepth(answer(nest(MAX_DEPTH - 2)), paths), 'answer and data are two levels')
  t.notOk(passThroughWithinDepth(answer(nest(MAX_DEPTH - 1)), paths))
  t.notOk(passThroughWithinDepth(answer(null, [1, nest(MAX_DEPTH)]), paths), 'any item of an array')
  t.ok(passThroughWithinDepth({ data: null }, paths), 'an absent part is not a problem')
})
