// The fixtures are the schemas' examples, the sandbox's seed and the tests' upstream answers: each must
// satisfy its schema at run time and at type level, and look like what the upstream really sends.
import t from 'tap'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import * as fx from '../../schemas/fixtures.ts'
import * as common from '../../schemas/common.ts'
import * as dealer from '../../schemas/dealer.ts'
import * as passport from '../../schemas/passport.ts'
import {
  Breadcrumb, BreadcrumbData, Client, ClientDataDms, ClientDataReg, PassportClientFound, PassportClientNotFound,
  PassportParams
} from '../../schemas/passport.ts'
import {
  Contact, Contractor, ContractorResult, DealerParams, DiscountData, DiscountResult,
  TypeContactInfo
} from '../../schemas/dealer.ts'

// Type level: tsc fails this file when a fixture drifts from its schema's Static type.
const typed = {
  clientDataReg: fx.clientDataReg satisfies ClientDataReg,
  clientDataDms: fx.clientDataDms satisfies ClientDataDms,
  client: fx.client satisfies Client,
  breadcrumbData: fx.breadcrumbData satisfies BreadcrumbData,
  catalogCarsView: fx.catalogCarsView satisfies Breadcrumb[],
  catalogCarsFavourites: fx.catalogCarsFavourites satisfies Breadcrumb[],
  passportParams: fx.passportParams satisfies PassportParams,
  clients: [fx.IVANOV, fx.PETROVA, fx.UNKNOWN] satisfies PassportParams[],
  passportFound: fx.passportFound satisfies PassportClientFound,
  passportNotFound: fx.passportNotFound satisfies PassportClientNotFound,
  typeContactInfo: fx.contact.type_contact_info satisfies TypeContactInfo,
  contact: fx.contact satisfies Contact,
  contractor: fx.contractor satisfies Contractor,
  contractorResult: fx.contractorResult satisfies ContractorResult,
  dealerParams: fx.dealerParams satisfies DealerParams,
  discountData: fx.discountWithBonuses.data satisfies DiscountData,
  discountNone: fx.discountNone satisfies DiscountResult,
  discountWithBonuses: fx.discountWithBonuses satisfies DiscountResult
}

const cases: Array<[string, TSchema, unknown]> = [
  ['clientDataReg', ClientDataReg, typed.clientDataReg],
  ['clientDataDms', ClientDataDms, typed.clientDataDms],
  ['client', Client, typed.client],
  ['breadcrumbData', BreadcrumbData, typed.breadcrumbData],
  ...typed.catalogCarsView.map((crumb, i): [string, TSchema, unknown] => [`catalogCarsView[${i}]`, Breadcrumb, crumb]),
  ...typed.catalogCarsFavourites.map((crumb, i): [string, TSchema, unknown] =>
    [`catalogCarsFavourites[${i}]`, Breadcrumb, crumb]),
  ['passportParams', PassportParams, typed.passportParams],
  ...typed.clients.map((c, i): [string, TSchema, unknown] => [`clients[${i}]`, PassportParams, c]),
  ['passportFound', PassportClientFound, typed.passportFound],
  ['passportNotFound', PassportClientNotFound, typed.passportNotFound],
  ['typeContactInfo', TypeContactInfo, typed.typeContactInfo],
  ['contact', Contact, typed.contact],
  ['contractor', Contractor, typed.contractor],
  ['contractorResult', ContractorResult, typed.contractorResult],
  ['dealerParams', DealerParams, typed.dealerParams],
  ['discountData', DiscountData, typed.discountData],
  ['discountNone', DiscountResult, typed.discountNone],
  ['discountWithBonuses', DiscountResult, typed.discountWithBonuses]
]

t.test('every fixture satisfies its schema', async t => {
  for (const [name, schema, value] of cases) {
    const check = Compile(schema)
    t.ok(check.Check(value), name, { errors: check.Check(value) ? [] : [...check.Errors(value)] })
  }
})

t.test("every schema's examples satisfy the schema", async t => {
  let examples = 0
  for (const [name, schema] of Object.entries({ ...common, ...passport, ...dealer })) {
    if (typeof schema !== 'object' || schema === null || !('examples' in schema)) continue
    if (!Array.isArray(schema.examples)) continue
    const check = Compile(schema as TSchema)
    for (const example of schema.examples) {
      examples++
      t.ok(check.Check(example), `${name} example`, { errors: check.Check(example) ? [] : [...check.Errors(example)] })
    }
  }
  t.ok(examples >= 20, 'the examples were found')
})

/** Every string of a value, with the key it sits under. */
function * strings (value: unknown, key = ''): Generator<[string, string]> {
  if (typeof value === 'string') yield [key, value]
  else if (Array.isArray(value)) for (const item of value) yield * strings(item, key)
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) yield * strings(v, k)
  }
}

const everything = Object.values(typed)
const crumbs = [...fx.passportFound.catalog_cars_view, ...fx.passportFound.catalog_cars_favourites]

t.test('messages are Russian', async t => {
  const messages = [...strings(everything)].filter(([key]) => key === 'message').map(([, text]) => text)
  t.ok(messages.length >= 6)
  // Russian words, though a term like DMS may stay in Latin letters.
  for (const text of messages) t.match(text, /^\p{Script=Cyrillic}+(?:\s\p{Script=Cyrillic}+)*(?:\s[A-Z]+)?$/u, text)
})

t.test('UUIDs are upper-case, the ones inside breadcrumb data too', async t => {
  const decoded = crumbs.map(crumb => JSON.parse(crumb.data) as unknown)
  const uuids = [...strings([everything, decoded])]
    .map(([, text]) => text)
    .filter(text => /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(text))
  t.ok(uuids.length >= 10)
  for (const uuid of uuids) t.equal(uuid, uuid.toUpperCase())
})

t.test('breadcrumb data is escaped JSON text of a BreadcrumbData', async t => {
  const check = Compile(BreadcrumbData)
  for (const crumb of crumbs) {
    t.type(crumb.data, 'string')
    t.ok(check.Check(JSON.parse(crumb.data)), crumb.data)
  }
  // On the wire the data is a string inside the JSON answer, its quotes escaped.
  t.match(JSON.stringify(fx.passportFound), /"data":"\{\\"car_guid\\":\\"[0-9A-F-]+\\",\\"date\\":/)
})

t.test('breadcrumbs cover every observed type, 6 for viewed and 7 for favourites', async t => {
  const types = new Set(crumbs.map(crumb => (JSON.parse(crumb.data) as BreadcrumbData).type))
  t.strictSame([...types].sort(), [1, 2, 3, 4])
  t.ok(fx.passportFound.catalog_cars_view.every(crumb => crumb.id_breadcrumbs === 6))
  t.ok(fx.passportFound.catalog_cars_favourites.every(crumb => crumb.id_breadcrumbs === 7))
  t.ok(crumbs.some(crumb => /^\d+$/.test(crumb.key_breadcrumbs)), 'one car is keyed by a short numeric-like string')
})

t.test('breadcrumb lists are ordered by id_user_breadcrumbs descending', async t => {
  for (const list of [fx.passportFound.catalog_cars_view, fx.passportFound.catalog_cars_favourites]) {
    const ids = list.map(crumb => crumb.id_user_breadcrumbs)
    t.ok(ids.length >= 2)
    t.strictSame(ids, [...ids].sort((a, b) => b - a))
  }
})

/** Well-formed enough: one root element, every tag closed in order, no text outside the root. */
function isXmlElement (text: string): boolean {
  const stack: string[] = []
  let roots = 0
  let last = 0
  for (const match of text.matchAll(/<(\/?)([^\s/>]+)(?:\s+[^\s=/>]+="[^"]*")*\s*(\/?)>/gu)) {
    if (stack.length === 0 && text.slice(last, match.index).trim() !== '') return false
    const [, closing, name, selfClosing] = match
    if (stack.length === 0 && closing === '') roots++
    if (closing === '/') {
      if (stack.pop() !== name) return false
    } else if (selfClosing !== '/') stack.push(name!)
    last = match.index + match[0].length
  }
  return roots === 1 && stack.length === 0 && text.slice(last).trim() === ''
}

t.test("a contact's value is XML text", async t => {
  t.ok(isXmlElement(fx.contact.value), fx.contact.value)
  t.notOk(isXmlElement('+7 (916) 123-45-67'), 'the check tells XML from a phone number')
  t.notOk(isXmlElement('<a><b></a></b>'), 'and from tags out of order')
})

t.test('the passport fixtures belong to the clients they name', async t => {
  t.equal(fx.passportFound.uid_client, fx.IVANOV.uid_client)
  t.equal(fx.passportFound.client.login, fx.IVANOV.login)
  t.equal(fx.passportFound.client.client_data.username, fx.IVANOV.login)
  t.equal(new Set([fx.IVANOV.uid_client, fx.PETROVA.uid_client, fx.UNKNOWN.uid_client]).size, 3)
})
