// The sandbox upstream's clients, built from schemas/fixtures.ts. Every answer is typed with the
// schemas' Static types (`satisfies`), so a fixture that drifts from its schema fails the typecheck here.
import * as fixture from '../schemas/fixtures.ts'
import type { PassportClientFound, PassportClientNotFound, PassportParams } from '../schemas/passport.ts'
import type { ContractorResult, DiscountResult } from '../schemas/dealer.ts'

/** A client the sandbox knows: who it is and what each operation answers for it. */
export interface SeededClient {
  /** A label for people reading `npm run dev` output and test names. */
  label: string
  identity: PassportParams
  passport: PassportClientFound
  discount: DiscountResult
  contractor: ContractorResult
}

/** Full profile: viewed and favourite cars covering every data.type, a contractor, no bonuses. */
export const ivanov = {
  label: 'IVANOV',
  identity: { ...fixture.IVANOV },
  passport: fixture.passportFound,
  discount: fixture.discountNone,
  contractor: fixture.contractorResult
} satisfies SeededClient

// PETROVA is Ivanov's record with her own identity and names: one viewed car, no favourites, bonuses.
const petrovaPhone = { view: '+7 (903) 555-01-42', city: '903', number: '5550142' }

const petrovaPassport = {
  ...fixture.passportFound,
  uid_client: fixture.PETROVA.uid_client,
  client: {
    ...fixture.client,
    uid_client: fixture.PETROVA.uid_client,
    login: fixture.PETROVA.login,
    date_create: '2022-02-14T09:41:18.402211+03:00',
    date_update: '2024-06-01T18:22:45.771002+03:00',
    date_validate: '2022-02-14T09:42:01.118730+03:00',
    client_data: {
      ...fixture.clientDataReg,
      username: fixture.PETROVA.login,
      first_name: 'Анна',
      last_name: 'Петрова',
      middle_name: 'Сергеевна',
      gender: 'female',
      email: 'petrova@example.ru',
      birth_date: '1990-11-23',
      city: 'Санкт-Петербург',
      agent: 'ios',
      agent_version: '3.15.0'
    },
    client_data_dms: {
      ...fixture.clientDataDms,
      fullname: 'Петрова Анна Сергеевна',
      gender: 'Женский',
      first_name: 'Анна',
      last_name: 'Петрова',
      middle_name: 'Сергеевна'
    }
  },
  catalog_cars_view: [{ ...fixture.catalogCarsView[2]!, id_user_breadcrumbs: 51377, is_my: true }],
  catalog_cars_favourites: []
} satisfies PassportClientFound

const petrovaContractor = {
  ...fixture.contractor,
  id: '6C0B9E14-2F7A-4D83-A5B1-93E8C7D60F24',
  code: 'ЦБ-00213907',
  name: 'Петрова Анна Сергеевна',
  name_full: 'Петрова Анна Сергеевна',
  last_name: 'Петрова',
  first_name: 'Анна',
  middle_name: 'Сергеевна',
  gender: 'Женский',
  date_birth: '1990-11-23T00:00:00',
  consent_email: 'Согласие получено',
  consent_email_date: '2022-02-14T09:50:00',
  contacts: [{
    ...fixture.contact,
    view: petrovaPhone.view,
    value: fixture.contact.value
      .replace(fixture.contact.view, petrovaPhone.view)
      .replace('КодГорода="916" Номер="1234567"', `КодГорода="${petrovaPhone.city}" Номер="${petrovaPhone.number}"`)
  }]
}

export const petrova = {
  label: 'PETROVA',
  identity: { ...fixture.PETROVA },
  passport: petrovaPassport,
  discount: fixture.discountWithBonuses,
  contractor: { ...fixture.contractorResult, data: petrovaContractor }
} satisfies SeededClient

export const seededClients: readonly SeededClient[] = [ivanov, petrova]

/** Known to no operation: passport answers CLIENT_NOT_FOUND, the dealer operations `success: false`. */
export const unknownClient = { ...fixture.UNKNOWN } satisfies PassportParams

/** What the sandbox answers for a client it does not know. */
export const unknownResponses = {
  passport: fixture.passportNotFound,
  discount: fixture.discountNone,
  // Not documented upstream. The dealer envelope carries its own http_code and the dealer answers HTTP 200
  // even for `success: false` (docs/upstream.md, Dealer answers), so an unknown contractor is HTTP 200 with
  // http_code 404 in the envelope: it validates against ContractorResult and the caller decides what a missing
  // record means.
  contractor: { success: false, message: 'Контрагент не найден', data: null, http_code: 404 }
} satisfies { passport: PassportClientNotFound, discount: DiscountResult, contractor: ContractorResult }
