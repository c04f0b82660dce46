// `npm run dev` keeps load shedding on: on a loaded machine a fresh run's start-up, or the test's own work beside it
// (a compiler starting), lags the event loop past the bound and requests are shed (503 with Retry-After), which an
// app retries. The tests of the dev run retry the same way, so that no state they check is about shedding.
import { setTimeout as sleep } from 'node:timers/promises'
import { detailIn, languages } from '../../src/errors.ts'
import { OVERLOADED } from '../../src/plugins/external/load-shedding/shedding.ts'

/** The shed answer's message, in each language the caller may have asked for. */
const SHED_MESSAGES = new Set<unknown>(languages.map(language => detailIn('SERVICE_UNAVAILABLE', OVERLOADED, language)))

async function isShed (res: Response): Promise<boolean> {
  if (res.status !== 503) return false
  const body = await res.clone().json().catch(() => undefined) as { message?: unknown } | undefined
  return SHED_MESSAGES.has(body?.message)
}

/**
 * `fetch(url, init)`, sent again `pauseMs` later while the answer is shed, `retries` times at most: the first answer
 * not shed, or the last, its body unread.
 */
export async function fetchUnlessShed (
  url: string, init: RequestInit = {}, { retries = 100, pauseMs = 100 } = {}
): Promise<Response> {
  for (let retry = 0; ; retry++) {
    const res = await fetch(url, init)
    if (retry === retries || !await isShed(res)) return res
    await res.body?.cancel()
    await sleep(pauseMs)
  }
}
