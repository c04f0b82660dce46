// What a shed request is told (plugins/external/load-shedding/ sheds): its message and when to retry, and the
// header a route documents for it.

/** Seconds a shed client is told to wait. */
export const SHED_RETRY_AFTER_S = 10
export const OVERLOADED = 'The service is overloaded; retry later'

/** The shed answer's header, for a route's documentation. */
export function shedHeaders () {
  return {
    'retry-after': {
      type: 'string' as const,
      description: 'Seconds to wait before retrying; sent when the service sheds load.',
      examples: [String(SHED_RETRY_AFTER_S)]
    }
  }
}
