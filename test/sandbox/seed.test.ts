// The seed is what frontend developers see first: it must satisfy the schemas and cover the cases
// the issue promises (every breadcrumb data.type, a client with bonuses, an unknown client).
import t from 'tap'
import { BreadcrumbData } from '../../schemas/passport.ts'
import { compileContract } from '../../src/upstream/contract/check.ts'
import { operations } from '../../schemas/operations.ts'
import { ivanov, petrova, seededClients, unknownResponses, unknownClient } from '../../sandbox/seed.ts'

const passport = compileContract(operations['passport.get_client'].response)
const passportNotFound = compileContract(operations['passport.get_client'].notFound.schema)
const discount = compileContract(operations['dealer.discount'].response)
const contractor = compileContract(operations['dealer.client'].response)
const passportParams = compileContract(operations['passport.get_client'].params)
const breadcrumbData = compileContract(BreadcrumbData)

const typesOf = (crumbs: readonly { data: string }[]) => crumbs.map(c => (JSON.parse(c.data) as { type: number }).type)

t.test('every seeded answer satisfies its schema', async t => {
  for (const client of seededClients) {
    t.ok(passportParams.check(client.identity), `${client.label} identity is valid passport params`)
    t.strictSame(passport.errors(client.passport), [], `${client.label} passport`)
    t.strictSame(discount.errors(client.discount), [], `${client.label} discount`)
    t.strictSame(contractor.errors(client.contractor), [], `${client.label} contractor`)
    for (const crumb of [...client.passport.catalog_cars_view, ...client.passport.catalog_cars_favourites]) {
      t.strictSame(breadcrumbData.errors(JSON.parse(crumb.data)), [],
        `${client.label} breadcrumb ${crumb.id_user_breadcrumbs} data`)
    }
    const ids = (list: readonly { id_user_breadcrumbs: number }[]) => list.map(c => c.id_user_breadcrumbs)
    for (const list of [client.passport.catalog_cars_view, client.passport.catalog_cars_favourites]) {
      t.strictSame(ids(list), ids(list).toSorted((a, b) => b - a), `${client.label} lists are ordered by id descending`)
    }
  }
  t.strictSame(passportNotFound.errors(unknownResponses.passport), [], 'unknown passport answer')
  t.strictSame(discount.errors(unknownResponses.discount), [], 'unknown discount answer')
  t.strictSame(contractor.errors(unknownResponses.contractor), [], 'unknown contractor answer')
})

t.test('IVANOV has a full profile and no bonuses', async t => {
  const { passport } = ivanov
  t.ok(passport.catalog_cars_view.length > 0 && passport.catalog_cars_favourites.length > 0,
    'viewed and favourite cars')
  t.ok(passport.catalog_cars_view.every(c => c.id_breadcrumbs === 6), 'viewed cars are breadcrumbs 6')
  t.ok(passport.catalog_cars_favourites.every(c => c.id_breadcrumbs === 7), 'favourites are breadcrumbs 7')
  const types = new Set(typesOf([...passport.catalog_cars_view, ...passport.catalog_cars_favourites]))
  t.strictSame([...types].sort(), [1, 2, 3, 4], 'data.type covers 1 to 4')
  t.equal(ivanov.discount.success, false)
  t.equal(ivanov.discount.data, null)
  t.equal(ivanov.contractor.success, true)
})

t.test('PETROVA is her own client, with bonuses and a contractor', async t => {
  t.not(petrova.identity.uid_client, ivanov.identity.uid_client)
  t.not(petrova.identity.login, ivanov.identity.login)
  const { client } = petrova.passport
  t.equal(petrova.passport.uid_client, petrova.identity.uid_client)
  t.equal(client.uid_client, petrova.identity.uid_client)
  t.equal(client.login, petrova.identity.login)
  t.equal(client.client_data.username, petrova.identity.login)
  t.equal(client.client_data.last_name, 'Петрова')
  t.equal(client.client_data_dms.fullname, 'Петрова Анна Сергеевна')
  t.equal(petrova.discount.success, true)
  t.ok(petrova.discount.data !== null && Object.keys(petrova.discount.data).length > 0, 'bonus data')
  t.equal(petrova.contractor.data?.name, 'Петрова Анна Сергеевна')
  t.not(petrova.contractor.data?.id, ivanov.contractor.data?.id)
  t.match(petrova.contractor.data?.contacts[0]?.value, /Номер="5550142"/, 'her own phone in the contact XML')
})

t.test('UNKNOWN is known nowhere', async t => {
  for (const client of seededClients) {
    t.not(client.identity.uid_client.toUpperCase(), unknownClient.uid_client.toUpperCase(), client.label)
  }
})
