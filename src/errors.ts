// The error catalog: every error the service answers with, a stable upper-snake code, its HTTP status and
// its message in each language (in the manner of fastify's lib/errors.js). Messages say what failed, never
// how: no key, URL, stack or upstream body. An error's own `message` (logs, tests) is the English text.
import createError from '@fastify/error'
import { APP_VERSION_HEADER } from '../schemas/app-version.ts'
import type { TokenReason } from '../schemas/errors.ts'

/** The languages of every message; the answer's is chosen by Accept-Language (plugins/app/errors/). */
export const languages = ['ru', 'en'] as const
export type Language = typeof languages[number]

/** One text in every language. */
export type Texts = Record<Language, string>
/** A message in every language, from the error's arguments. */
type Messages<A extends unknown[]> = Record<Language, (...args: A) => string>

/** The operation name, and optionally the failure that caused it. */
type UpstreamArgs = [operation: string, options?: { cause: unknown }]

// "1 секунду", "3 секунды", "5 секунд": Russian counts take three forms.
const russianPlural = new Intl.PluralRules('ru')
const SECONDS_RU: Record<string, string> = { one: 'секунду', few: 'секунды', many: 'секунд', other: 'секунды' }
const secondsRu = (n: number) => `${n} ${SECONDS_RU[russianPlural.select(n)]!}`
const secondsEn = (n: number) => `${n} second${n === 1 ? '' : 's'}`

/** BAD_REQUEST's detail for a malformed x-app-version header (plugins/app/app-version/). */
export const MALFORMED_APP_VERSION = `${APP_VERSION_HEADER} must be a semantic version such as 2.14.0 ${
  '(MAJOR.MINOR.PATCH, optionally -prerelease and +build)'}` as const

/** SERVICE_UNAVAILABLE's detail while the identity provider's key set has not loaded: no token can be verified. */
export const KEY_SET_NOT_LOADED = 'The identity provider\'s key set has not loaded yet'

/**
 * The texts an error with a free detail (BAD_REQUEST, UNAUTHORIZED, SERVICE_UNAVAILABLE) is thrown with,
 * by their English text (the key, as gettext's msgid is), and each code's text for a detail not listed.
 */
export const details = {
  BAD_REQUEST: [
    { en: 'The request is malformed', ru: 'Запрос составлен неверно' },
    { en: 'The request is not valid HTTP', ru: 'Не удалось разобрать запрос: это не HTTP' },
    { en: 'The request body is not valid JSON', ru: 'Тело запроса — некорректный JSON' },
    { en: 'The request body is empty; send a JSON object', ru: 'Тело запроса пустое: отправьте JSON-объект' },
    {
      en: 'The request content-length does not match its body',
      ru: 'Заголовок Content-Length не совпадает с размером тела запроса'
    },
    {
      en: MALFORMED_APP_VERSION,
      ru: 'Заголовок x-app-version должен содержать версию приложения в формате семантического версионирования, ' +
        'например 2.14.0 (MAJOR.MINOR.PATCH, допускаются -prerelease и +build)'
    }
  ],
  UNAUTHORIZED: [
    { en: 'Authorization is required', ru: 'Требуется авторизация' },
    {
      en: 'This endpoint needs an Authorization: Bearer token',
      ru: 'Требуется авторизация: передайте токен в заголовке Authorization: Bearer'
    },
    { en: 'The bearer token is malformed', ru: 'Токен доступа повреждён, войдите заново' },
    { en: 'The bearer token has expired', ru: 'Срок действия токена истёк, войдите заново' },
    { en: 'The bearer token is invalid', ru: 'Токен доступа недействителен, войдите заново' },
    {
      en: 'The bearer token does not carry valid sub, login and vendor claims',
      ru: 'В токене доступа нет корректных данных пользователя (sub, login, vendor)'
    },
    {
      en: 'Metrics need Authorization: Bearer <METRICS_API_KEY>',
      ru: 'Для метрик нужен заголовок Authorization: Bearer <METRICS_API_KEY>'
    },
    { en: 'Send the console key in the x-console-key header', ru: 'Передайте ключ консоли в заголовке x-console-key' }
  ],
  // A limit's own refusal that is not ours (RATE_LIMITED is otherwise thrown with its wait).
  RATE_LIMITED: [{ en: 'Too many requests', ru: 'Слишком много запросов, повторите попытку позже' }],
  SERVICE_UNAVAILABLE: [
    { en: 'The service is temporarily unavailable', ru: 'Сервис временно недоступен, повторите попытку позже' },
    { en: 'The service is overloaded; retry later', ru: 'Сервис перегружен, повторите попытку позже' },
    { en: 'The service is shutting down', ru: 'Сервис завершает работу, повторите попытку позже' },
    {
      en: KEY_SET_NOT_LOADED,
      ru: 'Ключи для проверки входа ещё не загружены, повторите попытку позже'
    }
  ]
} as const satisfies Record<string, readonly Texts[]>

type DetailCode = keyof typeof details
/** The English texts an error of `code` may be thrown with: any other is a type error, so none lacks Russian. */
export type Detail<C extends DetailCode> = typeof details[C][number]['en']

/** A detail in `language`: its listed translation, or the code's general text when it is not listed. */
export function detailIn (code: DetailCode, english: string, language: Language): string {
  if (language === 'en') return english
  const listed = details[code].find(texts => texts.en === english) ?? details[code][0]
  return listed[language]
}

const detailed = <C extends Exclude<DetailCode, 'RATE_LIMITED'>>(code: C): Messages<[detail: Detail<C>]> =>
  ({ en: detail => detail, ru: detail => detailIn(code, detail, 'ru') })

/** The catalog's messages by code, filled by `coded` below. */
const catalog = new Map<string, Messages<never[]>>()
const ARGS = Symbol('catalog arguments')

/**
 * A coded error class whose instances remember their arguments, so the error handler can write the
 * message again in the caller's language.
 */
function coded<C extends string, S extends number, A extends unknown[]> (code: C, status: S, messages: Messages<A>) {
  catalog.set(code, messages as unknown as Messages<never[]>)
  const Base = createError<C, S, [message: string, options?: { cause: unknown }]>(code, '%s', status)
  return class extends Base {
    readonly [ARGS]: A
    constructor (...args: A) {
      const last = args.at(-1)
      const options = typeof last === 'object' && last !== null && 'cause' in last ? [last as { cause: unknown }] : []
      super(messages.en(...args), ...options)
      this[ARGS] = args
    }
  }
}

// A symbol, not a `reason` property: upstream errors carry a `reason` of their own that no body may show.
const REASON = Symbol('token refusal reason')

/** `error` marked with why a bearer token was refused: the body's `reason` (schemas/errors.ts). */
export function withReason<E extends Error> (error: E, reason: TokenReason): E {
  return Object.assign(error, { [REASON]: reason })
}

/** Why a bearer token was refused, when `error` says so. */
export function reasonOf (error: unknown): TokenReason | undefined {
  return (error as { [REASON]?: TokenReason } | null)?.[REASON]
}

export const BadRequestError = coded('BAD_REQUEST', 400, detailed('BAD_REQUEST'))
export const UnauthorizedError = coded('UNAUTHORIZED', 401, detailed('UNAUTHORIZED'))
export const NotFoundError = coded('NOT_FOUND', 404, {
  en: (method: string, url: string) => `Route ${method} ${url} not found`,
  ru: (method: string, url: string) => `Адрес ${method} ${url} не найден`
})
export const MethodNotAllowedError = coded('METHOD_NOT_ALLOWED', 405, {
  en: (method: string, url: string) =>
    `Method ${method} is not allowed on ${url}; the Allow header lists those that are`,
  ru: (method: string, url: string) => `Метод ${method} недоступен для ${url}; допустимые методы — в заголовке Allow`
})
export const ClientNotFoundError = coded('CLIENT_NOT_FOUND', 404, {
  en: () => 'The client is not known to the passport service',
  ru: () => 'Клиент не найден в сервисе паспортов'
})
export const PayloadTooLargeError = coded('PAYLOAD_TOO_LARGE', 413, {
  en: () => 'The request body is too large',
  ru: () => 'Тело запроса слишком большое'
})
export const UnsupportedMediaTypeError = coded('UNSUPPORTED_MEDIA_TYPE', 415, {
  en: () => 'The request content type is not supported; send application/json',
  ru: () => 'Этот тип содержимого не поддерживается, отправьте application/json'
})
// Answered before routing (src/client-errors.ts): the request never became one Fastify could route.
export const RequestTimeoutError = coded('REQUEST_TIMEOUT', 408, {
  en: () => 'The request was not received in time',
  ru: () => 'Запрос не получен полностью за отведённое время'
})
export const HeadersTooLargeError = coded('HEADERS_TOO_LARGE', 431, {
  en: () => 'The request headers are too large',
  ru: () => 'Заголовки запроса слишком большие'
})
export const RateLimitedError = coded('RATE_LIMITED', 429, {
  en: (seconds: number) => `Too many requests; retry in ${secondsEn(seconds)}`,
  ru: (seconds: number) => `Слишком много запросов, повторите через ${secondsRu(seconds)}`
})
// x-app-version below MIN_APP_VERSION: the app shows the message and sends its user to the store.
export class AppUpdateRequiredError extends coded('APP_UPDATE_REQUIRED', 426, {
  en: (minimum: string) =>
    `This version of the app is no longer supported; update the app to version ${minimum} or later`,
  ru: (minimum: string) =>
    `Эта версия приложения больше не поддерживается. Обновите приложение до версии ${minimum} или новее.`
}) {
  /** The oldest version served, the body's `min_app_version`. */
  readonly minAppVersion: string
  constructor (minimum: string) {
    super(minimum)
    this.minAppVersion = minimum
  }
}
export const InternalError = coded('INTERNAL_ERROR', 500, {
  en: () => 'Internal server error',
  ru: () => 'Внутренняя ошибка сервиса'
})
export const ServiceUnavailableError = coded('SERVICE_UNAVAILABLE', 503, detailed('SERVICE_UNAVAILABLE'))
// A token under a kid the key set does not hold yet, while an early refresh is not allowed: retried, not refused.
export class SigningKeyPendingError extends coded('SIGNING_KEY_PENDING', 503, {
  en: (retryAfterS: string) =>
    `The key that signed the bearer token is not known yet; retry in ${secondsEn(Number(retryAfterS))}`,
  ru: (retryAfterS: string) =>
    `Ключ, которым подписан токен доступа, ещё не получен, повторите через ${secondsRu(Number(retryAfterS))}`
}) {
  constructor (retryAfterS: string) {
    super(retryAfterS)
    withReason(this, 'signing_key_pending')
  }
}

export const UpstreamTimeoutError = coded('UPSTREAM_TIMEOUT', 504, {
  en: (...[operation]: UpstreamArgs) => `Upstream operation ${operation} did not answer in time`,
  ru: (...[operation]: UpstreamArgs) => `Внешний сервис не ответил вовремя (операция ${operation})`
})
export const UpstreamBadResponseError = coded('UPSTREAM_BAD_RESPONSE', 502, {
  en: (...[operation]: UpstreamArgs) => `Upstream operation ${operation} gave an unusable answer`,
  ru: (...[operation]: UpstreamArgs) => `Внешний сервис вернул непригодный ответ (операция ${operation})`
})
export const UpstreamUnavailableError = coded('UPSTREAM_UNAVAILABLE', 503, {
  en: (...[operation]: UpstreamArgs) => `Upstream operation ${operation} is unavailable`,
  ru: (...[operation]: UpstreamArgs) => `Внешний сервис недоступен (операция ${operation})`
})

/** Every code a client can meet, for the docs and the tests. */
export const errorCodes = [
  'BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'CLIENT_NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'UPSTREAM_BAD_RESPONSE',
  'UPSTREAM_UNAVAILABLE',
  'REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE', 'METHOD_NOT_ALLOWED', 'APP_UPDATE_REQUIRED', 'SIGNING_KEY_PENDING'
] as const

/** The catalog's messages of a code (every language), for the tests that hold it complete. */
export function messagesOf (code: string): Record<Language, unknown> | undefined {
  return catalog.get(code)
}

/** A catalog error's message in `language`, from the arguments it was thrown with; else its own message. */
export function messageIn (error: { code: string, message: string }, language: Language): string {
  const messages = catalog.get(error.code)
  const args = (error as { [ARGS]?: never[] })[ARGS]
  if (messages === undefined || args === undefined) return error.message
  return messages[language](...args)
}

/** One failure of request validation, as Fastify hands it to the error handler. */
interface Problem { instancePath: string, keyword: string, params?: Record<string, unknown> }

/**
 * A request validation failure in `language`. English is the validator's own text (the error's message);
 * Russian names each field and whether it is missing, not allowed or wrong, in the validator's path form.
 */
export function validationIn (
  error: { message: string, validation: readonly Problem[], validationContext?: string }, language: Language
): string {
  if (language === 'en') return error.message
  const parts = error.validation.map(({ instancePath, keyword, params }) => {
    const field = `${error.validationContext ?? ''}${instancePath}`
    if (keyword === 'required') {
      const missing = params?.missingProperty ?? params?.requiredProperties
      return `нет обязательного поля ${field}/${Array.isArray(missing) ? missing.join(', ') : String(missing)}`
    }
    if (keyword === 'additionalProperties') return `поле ${field} не допускается`
    return `неверное значение поля ${field}`
  })
  return `Запрос составлен неверно: ${parts.join('; ')}`
}
