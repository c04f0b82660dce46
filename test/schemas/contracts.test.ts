// What the contracts accept and refuse: formats, nullability exactly as docs/upstream.md states
// it ("string or null" is nullable, plain "string" is not), and tolerance of fields we do not know yet.
import t from 'tap'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import * as fx from '../../schemas/fixtures.ts'
import { IsoDateTime, Login, Uuid } from '../../schemas/common.ts'
import {
  Breadcrumb, BreadcrumbData, Client, ClientDataDms, ClientDataReg, PassportClientFound, PassportClientNotFound,
  PassportParams
} from '../../schemas/passport.ts'
import {
  Contact, Contractor, ContractorResult, DealerParams, DiscountResult,
  TypeContactInfo
} from '../../schemas/dealer.ts'

const accepts = (schema: TSchema, value: unknown) => Compile(schema).Check(value)

t.test('UUIDs in any case are accepted, anything else is not', async t => {
  const upper = fx.IVANOV.uid_client
  t.ok(accepts(Uuid, upper))
  t.ok(accepts(Uuid, upper.toLowerCase()))
  for (const bad of ['not-a-uuid', upper.replaceAll('-', ''), `${upper}0`, `{${upper}}`, '771045', '']) {
    t.notOk(accepts(Uuid, bad), JSON.stringify(bad))
  }
  t.ok(accepts(Client, { ...fx.client, uid_client: upper.toLowerCase() }), 'in a record too')
  t.notOk(accepts(Client, { ...fx.client, uid_client: 'not-a-uuid' }))
  t.notOk(accepts(DealerParams, { uid_client: 'not-a-uuid' }))
})

t.test('a date-time needs its UTC offset', async t => {
  for (const good of ['2024-05-17T14:03:27.512345+03:00', '2024-05-17T11:03:27Z', '2024-05-17T14:03:27-04:30']) {
    t.ok(accepts(IsoDateTime, good), good)
  }
  for (const bad of ['2024-05-17T14:03:27.512345', '2024-05-17T14:03:27', '2024-05-17', '17.05.2024 14:03',
    '2024-13-17T14:03:27+03:00']) {
    t.notOk(accepts(IsoDateTime, bad), bad)
  }
  t.notOk(accepts(Client, { ...fx.client, date_create: '2021-09-03T10:15:42.118734' }), 'in a record too')
  t.notOk(accepts(BreadcrumbData, { ...fx.breadcrumbData, date: '2024-05-16T19:42:10' }))
})

t.test('a date without an offset, or a plain date, passes as the upstream writes it', async t => {
  // Only the offset dates are checked: an odd birth or consent date reaches the app, rather than a 502.
  for (const value of ['1985-04-12', '12.04.1985', '', '1985-04-12T00:00:00+03:00']) {
    t.ok(accepts(ClientDataReg, { ...fx.clientDataReg, birth_date: value }), `birth_date ${JSON.stringify(value)}`)
  }
  for (const value of ['2021-09-03T10:20:00', '03.09.2021 10:20', '2021-09-03T10:20:00.123+03:00', '']) {
    for (const field of ['date_birth', 'consent_personal_data_date', 'consent_sms_date', 'consent_email_date']) {
      t.ok(accepts(Contractor, { ...fx.contractor, [field]: value }), `${field} ${JSON.stringify(value)}`)
    }
  }
})

t.test('a login is digits only', async t => {
  t.ok(accepts(Login, '79161234567'))
  for (const bad of ['+79161234567', '7 916 123-45-67', '7916123456a', '']) {
    t.notOk(accepts(Login, bad),
      JSON.stringify(bad))
  }
  t.notOk(accepts(Client, { ...fx.client, login: '+79161234567' }), 'in a record too')
  t.notOk(accepts(PassportParams, { ...fx.passportParams, login: '+79161234567' }))
})

t.test('fields the upstream adds later are tolerated', async t => {
  const extra = { added_later: { any: ['thing'] } }
  t.ok(accepts(PassportClientFound, {
    ...fx.passportFound, ...extra, client: { ...fx.client, ...extra, client_data: { ...fx.clientDataReg, ...extra } }
  }))
  t.ok(accepts(PassportClientNotFound, { ...fx.passportNotFound, ...extra }))
  t.ok(accepts(Breadcrumb, { ...fx.breadcrumb, ...extra }))
  t.ok(accepts(BreadcrumbData, { ...fx.breadcrumbData, ...extra }))
  t.ok(accepts(ClientDataDms, { ...fx.clientDataDms, ...extra }))
  t.ok(accepts(ContractorResult, {
    ...fx.contractorResult, ...extra, data: { ...fx.contractor, ...extra, contacts: [{ ...fx.contact, ...extra }] }
  }))
  t.ok(accepts(DiscountResult, { ...fx.discountNone, ...extra, http_code: 200 }))
  t.ok(accepts(PassportClientFound, { ...fx.passportFound, cookies: [{ name: 'sid', value: 'x' }] }),
    'cookies of any shape')
})

t.test('a missing field is refused', async t => {
  const { client: _client, ...withoutClient } = fx.passportFound
  t.notOk(accepts(PassportClientFound, withoutClient))
  const { data: _data, ...withoutData } = fx.discountNone
  t.notOk(accepts(DiscountResult, withoutData))
  const { http_code: _code, ...withoutCode } = fx.contractorResult
  t.notOk(accepts(ContractorResult, withoutCode))
})

// [schema, a valid record, its fields the upstream documents as "... or null", its fields it does not].
const nullability: Array<[string, TSchema, Record<string, unknown>, string[], string[]]> = [
  ['ClientDataReg', ClientDataReg, fx.clientDataReg,
    ['gender', 'email', 'birth_date', 'country', 'city', 'language_code', 'reason', 'agent', 'agent_version'],
    ['success', 'message', 'msg_code', 'username', 'first_name', 'last_name', 'middle_name']],
  ['ClientDataDms', ClientDataDms, fx.clientDataDms,
    [],
    ['success', 'message', 'msg_code', 'fullname', 'type', 'gender', 'first_name', 'last_name', 'middle_name']],
  ['Client', Client, fx.client,
    ['suspended_date'],
    ['uid_client', 'login', 'date_create', 'date_update', 'date_validate', 'is_active', 'is_suspended', 'client_data',
      'client_data_dms']],
  ['Breadcrumb', Breadcrumb, fx.breadcrumb,
    [],
    ['id_user_breadcrumbs', 'id_breadcrumbs', 'key_breadcrumbs', 'date_add', 'date_update', 'data', 'vendor',
      'id_vendor', 'is_my']],
  ['TypeContactInfo', TypeContactInfo, fx.contact.type_contact_info,
    ['code', 'article', 'name_full'],
    ['id', 'deletion', 'name']],
  ['Contact', Contact, fx.contact,
    ['social_media', 'confirmed'],
    ['num', 'is_main', 'type_contact', 'type_contact_info', 'view', 'value']],
  ['Contractor', Contractor, fx.contractor,
    ['article', 'date_birth', 'consent_personal_data_date', 'consent_sms_date', 'consent_email_date', 'last_dealer'],
    ['id', 'code', 'deletion', 'name', 'name_full', 'last_name', 'first_name', 'middle_name', 'gender',
      'form_ownership', 'view_contractor', 'not_active', 'consent_personal_data', 'consent_sms', 'consent_email',
      'contacts', 'contact_persons']],
  ['DiscountResult', DiscountResult, fx.discountWithBonuses,
    ['message', 'data'],
    ['success']],
  ['ContractorResult', ContractorResult, fx.contractorResult,
    ['message'],
    ['success', 'http_code']]
]

t.test('nullable fields accept null, the others refuse it', async t => {
  for (const [name, schema, record, nullable, required] of nullability) {
    const check = Compile(schema)
    for (const field of nullable) t.ok(check.Check({ ...record, [field]: null }), `${name}.${field} may be null`)
    for (const field of required) t.notOk(check.Check({ ...record, [field]: null }), `${name}.${field} may not be null`)
  }
})

t.test('the passport envelopes tell found from not found', async t => {
  t.notOk(accepts(PassportClientFound, fx.passportNotFound))
  t.notOk(accepts(PassportClientNotFound, { ...fx.passportNotFound, msg_code: 'CLIENT_INFO' }))
  t.notOk(accepts(PassportClientNotFound, { ...fx.passportNotFound, success: true }))
})

t.test('operation params are exactly the documented fields', async t => {
  t.notOk(accepts(PassportParams, { ...fx.passportParams, extra: '1' }))
  t.notOk(accepts(DealerParams, { ...fx.dealerParams, extra: '1' }))
  t.ok(accepts(DealerParams, { uid_client: fx.IVANOV.uid_client.toLowerCase() }))
})
