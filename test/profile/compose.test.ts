// The pure composition: breadcrumb decoding, the dealer sections, and the Profile it builds, checked
// against the Profile schema the route serializes with.
import t from 'tap'
import { Compile } from 'typebox/compile'
import * as fx from '../../schemas/fixtures.ts'
import { Profile } from '../../schemas/profile.ts'
import { contractorSection, createProfileComposer, discountSection } from '../../src/profile/compose.ts'

const { compose, decodeBreadcrumbData, decodeBreadcrumbs } = createProfileComposer()
const isProfile = Compile(Profile)

t.test('breadcrumb data: decoded when it is a BreadcrumbData, null otherwise', async t => {
  t.strictSame(decodeBreadcrumbData(fx.breadcrumb.data), fx.breadcrumbData)
  const bad: Array<[string, string]> = [
    ['truncated JSON', fx.breadcrumb.data.slice(0, 20)],
    ['empty text', ''],
    ['JSON null', 'null'],
    ['an array', '[1,2]'],
    ['a number', '42'],
    ['a quoted object', JSON.stringify(fx.breadcrumb.data)],
    ['car_guid missing', JSON.stringify({ date: fx.breadcrumbData.date, type: 1 })],
    ['type not an integer', JSON.stringify({ ...fx.breadcrumbData, type: 1.5 })],
    ['type as text', JSON.stringify({ ...fx.breadcrumbData, type: '1' })],
    ['date without an offset', JSON.stringify({ ...fx.breadcrumbData, date: '2024-05-16T19:42:10' })]
  ]
  for (const [name, text] of bad) t.equal(decodeBreadcrumbData(text), null, name)
})

t.test('breadcrumb lists keep every item in order and leave the upstream value alone', async t => {
  const list = [{ ...fx.breadcrumb, data: 'not json' }, ...fx.catalogCarsView.slice(1)]
  const before = structuredClone(list)
  const out = decodeBreadcrumbs(list)
  t.equal(out.length, list.length)
  t.strictSame(out.map(c => c.id_user_breadcrumbs), list.map(c => c.id_user_breadcrumbs))
  t.equal(out[0]?.data, null)
  t.strictSame(out[1]?.data, JSON.parse(list[1]!.data))
  t.strictSame(list, before, 'input not mutated')
  t.strictSame(decodeBreadcrumbs([]), [])
})

t.test('dealer sections', async t => {
  t.strictSame(discountSection(fx.discountWithBonuses), fx.discountWithBonuses.data)
  t.equal(discountSection(fx.discountNone), null, 'no bonuses')
  t.equal(discountSection({ success: false, message: null, data: { balance: 1 } }), null,
    'success false wins over stray data')
  t.equal(discountSection({ success: true, message: null, data: null }), null)
  t.strictSame(contractorSection(fx.contractorResult), fx.contractor)
  t.equal(contractorSection({ ...fx.contractorResult, data: null }), null)
  t.equal(contractorSection({ ...fx.contractorResult, success: false }), null)
})

t.test('the composed profile satisfies the Profile schema', async t => {
  const full = compose(fx.passportFound, {
    discount: fx.discountWithBonuses.data, contractor: fx.contractor, degraded: []
  })
  t.ok(isProfile.Check(full), JSON.stringify([...isProfile.Errors(full)].slice(0, 3)))
  t.equal(full.uid_client, fx.IVANOV.uid_client)
  t.equal(full.client, fx.passportFound.client)
  t.equal(full.catalog_cars_favourites.length, fx.catalogCarsFavourites.length)
  const degraded = compose(fx.passportFound, { discount: null, contractor: null, degraded: ['discount', 'contractor'] })
  t.ok(isProfile.Check(degraded))
  t.strictSame(degraded.degraded, ['discount', 'contractor'])
})

t.test('the Profile examples are valid profiles', async t => {
  const examples = (Profile as { examples?: unknown[] }).examples ?? []
  t.ok(examples.length > 0)
  for (const example of examples) {
    t.ok(isProfile.Check(example), JSON.stringify([...isProfile.Errors(example)].slice(0, 3)))
  }
  t.notOk(isProfile.Check({ ...examples[0] as object, degraded: ['client'] }), 'only dealer sections can be degraded')
  t.notOk(isProfile.Check({ ...examples[0] as object, extra: 1 }), 'nothing outside the contract')
})
