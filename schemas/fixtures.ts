// Realistic upstream records, shaped as observed: Russian messages, upper-case UUIDs, breadcrumb `data`
// as escaped JSON text, lists ordered by id_user_breadcrumbs descending. They are the schemas'
// `examples`, the sandbox upstream's seed and the tests' fixtures. They carry no type annotation (the
// schemas import them for `examples`, so that would be circular): a test checks every one against its
// schema, at run time and with `satisfies` at type level.

export const IVANOV = {
  uid_client: '9F1C3B2A-6D4E-4C1B-8A7F-2E5D6C7B8A90', login: '79161234567', vendor: 'kia'
} as const
export const PETROVA = {
  uid_client: '3E7A2C55-91B0-4F6D-B2C8-0A4D5E6F7081', login: '79035550142', vendor: 'kia'
} as const
export const UNKNOWN = {
  uid_client: '00000000-0000-4000-8000-0000000000FF', login: '79990000000', vendor: 'kia'
} as const

export const passportParams = { ...IVANOV }
export const dealerParams = { uid_client: IVANOV.uid_client }

export const clientDataReg = {
  success: true as const,
  message: 'Данные регистрации клиента',
  msg_code: 'CLIENT_DATA_REG',
  username: IVANOV.login,
  first_name: 'Иван',
  last_name: 'Иванов',
  middle_name: 'Петрович',
  gender: null,
  email: 'ivanov@example.ru',
  birth_date: '1985-04-12',
  country: 'Россия',
  city: 'Москва',
  language_code: 'ru',
  reason: null,
  agent: 'android',
  agent_version: '3.14.2'
}

export const clientDataDms = {
  success: true as const,
  message: 'Данные клиента из DMS',
  msg_code: 'CLIENT_DATA_DMS',
  fullname: 'Иванов Иван Петрович',
  type: 'Физическое лицо',
  gender: 'Не указан',
  first_name: 'Иван',
  last_name: 'Иванов',
  middle_name: 'Петрович'
}

export const client = {
  success: true as const,
  message: 'Информация о пользователе',
  msg_code: 'USER_INFO',
  uid_client: IVANOV.uid_client,
  login: IVANOV.login,
  date_create: '2021-09-03T10:15:42.118734+03:00',
  date_update: '2024-05-17T14:03:27.512345+03:00',
  date_validate: '2021-09-03T10:16:05.004210+03:00',
  is_active: true,
  is_active_in_dms: true,
  is_client_link_dms: true,
  is_standing_user: false,
  is_staff: false,
  client_data: clientDataReg,
  client_data_dms: clientDataDms,
  is_suspended: false,
  suspended_date: null
}

export const breadcrumbData = {
  car_guid: 'C2D4E6F8-1A3B-4C5D-9E7F-8091A2B3C4D5',
  date: '2024-05-16T19:42:10.000000+03:00',
  type: 1
}

/** A breadcrumb as the upstream sends it: `data` is JSON text. */
function crumb (id: number, idBreadcrumbs: 6 | 7, key: string, data: typeof breadcrumbData) {
  return {
    id_user_breadcrumbs: id,
    id_breadcrumbs: idBreadcrumbs,
    key_breadcrumbs: key,
    date_add: data.date,
    date_update: data.date,
    data: JSON.stringify(data),
    vendor: 'KIA',
    id_vendor: 3,
    is_my: false
  }
}

// Viewed cars cover every observed data.type, one keyed by a short numeric-like string.
export const catalogCarsView = [
  crumb(48213, 6, 'C2D4E6F8-1A3B-4C5D-9E7F-8091A2B3C4D5', breadcrumbData),
  crumb(48190, 6, 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D', {
    car_guid: 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D', date: '2024-05-15T08:05:33.000000+03:00', type: 2
  }),
  crumb(47702, 6, '771045', { car_guid: '771045', date: '2024-05-02T12:30:00.000000+03:00', type: 3 }),
  crumb(46011, 6, 'F0E1D2C3-B4A5-4968-8776-655443322110', {
    car_guid: 'F0E1D2C3-B4A5-4968-8776-655443322110', date: '2024-04-20T21:11:09.000000+03:00', type: 4
  })
]
export const breadcrumb = catalogCarsView[0]!

export const catalogCarsFavourites = [
  {
    ...crumb(47950, 7, 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D', {
      car_guid: 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D', date: '2024-05-15T08:07:01.000000+03:00', type: 2
    }),
    is_my: true
  },
  crumb(45220, 7, '771045', { car_guid: '771045', date: '2024-04-11T16:48:55.000000+03:00', type: 1 })
]

export const passportFound = {
  success: true as const,
  message: 'Клиент найден',
  msg_code: 'CLIENT_INFO' as const,
  uid_client: IVANOV.uid_client,
  client,
  cookies: [],
  catalog_cars_view: catalogCarsView,
  catalog_cars_favourites: catalogCarsFavourites
}

export const passportNotFound = {
  success: false as const,
  message: 'Клиент не найден',
  msg_code: 'CLIENT_NOT_FOUND' as const
}

export const contact = {
  num: 1,
  is_main: true,
  type_contact: 'Телефон',
  type_contact_info: {
    id: '5B2E8C41-7D3F-4A90-B6E1-2C4F8A9D0E13',
    code: null,
    article: null,
    deletion: false,
    name: 'Мобильный телефон',
    name_full: 'Мобильный телефон контрагента'
  },
  view: '+7 (916) 123-45-67',
  value: '<КонтактнаяИнформация xmlns="http://www.v8.1c.ru/ssl/contactinfo" Представление="+7 (916) 123-45-67"><Состав xsi:type="НомерТелефона" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" КодСтраны="7" КодГорода="916" Номер="1234567"/></КонтактнаяИнформация>',
  social_media: null,
  confirmed: true
}

export const contractor = {
  id: 'D8A1F3C2-4B5E-4F6A-9C7D-1E2F3A4B5C6D',
  code: 'ЦБ-00184522',
  article: null,
  deletion: false,
  name: 'Иванов Иван Петрович',
  name_full: 'Иванов Иван Петрович',
  last_name: 'Иванов',
  first_name: 'Иван',
  middle_name: 'Петрович',
  gender: 'Мужской',
  date_birth: '1985-04-12T00:00:00',
  form_ownership: 'Физическое лицо',
  view_contractor: 'Клиент',
  not_active: false,
  consent_personal_data: '',
  consent_personal_data_date: null,
  consent_sms: 'Согласие получено',
  consent_sms_date: '2021-09-03T10:20:00',
  consent_email: 'Согласие не получено',
  consent_email_date: null,
  contacts: [contact],
  last_dealer: null,
  contact_persons: []
}

export const contractorResult = {
  success: true as const,
  message: null,
  data: contractor,
  http_code: 200
}

export const discountNone = {
  success: false as const,
  message: 'Бонусы не найдены',
  data: null
}

export const discountWithBonuses = {
  success: true as const,
  message: null,
  data: { balance: 1500, currency: 'RUB', level: 'Серебряный', expires_at: '2025-12-31T23:59:59+03:00' }
}
