// What an answer is: the operation's answer, its documented not-found, or a broken contract (a status, a content
// type, JSON or a schema the operation does not have, or nesting too deep to pass on), with the body as data.
import type { OperationName } from '../../schemas/operations.ts'
import type { ContractError, OperationContracts } from './contract/check.ts'
import { MAX_DEPTH, passThroughWithinDepth, withinDepth } from './contract/depth.ts'
import type { Exchange, Outcome } from './call-types.ts'
import { responseText, parseResponseJson } from './transport/response-body.ts'
import { headerValue, type WireResponse } from './transport/exchange.ts'
import { mediaType } from './transport/trim.ts'

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

const CONTENT_TYPE = 'content type '
const NOT_JSON = ' is not application/json'
/** The contract message of an answer that is not JSON; the exchange (the console) quotes its content type whole. */
const contentTypeMessage = (contentType: string) => CONTENT_TYPE + contentType + NOT_JSON

/** A contract message as a failure keeps it: a content type quoted as its media type (its parameters dropped). */
export function trimmedContractMessage (message: string): string {
  if (!message.startsWith(CONTENT_TYPE) || !message.endsWith(NOT_JSON)) return message
  return contentTypeMessage(mediaType(message.slice(CONTENT_TYPE.length, -NOT_JSON.length)))
}

/** A body nested too deep is kept as the text received: a string is safe to redact and to show. */
function tooDeep (text: string): Pick<Exchange, 'contract' | 'body' | 'outcome'> {
  return {
    body: text,
    outcome: 'too_deep',
    contract: {
      valid: false,
      errors: [{ path: '/', message: `nests objects or arrays deeper than ${MAX_DEPTH} levels` }]
    }
  }
}

/**
 * Decides what an answer is. `wholeBodyDepth`: the whole body is bounded in depth (the console shows all of it), not
 * only the parts the schema passes on.
 */
export function interpret (
  name: OperationName, response: WireResponse, contract: OperationContracts, wholeBodyDepth: boolean
): Pick<Exchange, 'contract' | 'body' | 'outcome'> {
  const { status } = response
  const contentType = headerValue(response.headers['content-type'])
  const expected = status >= 200 && status < 300
    ? { outcome: 'ok' as const, check: contract.response }
    : status === contract.notFound?.status
      ? { outcome: 'not_found' as const, check: contract.notFound.contract }
      : undefined
  let body: unknown
  let parsed = false
  const json = contentType !== undefined && JSON_TYPE.test(contentType)
  if (json) {
    try {
      body = parseResponseJson(response.body)
      parsed = true
    } catch {}
  }
  // Decoded as text only for what is shown as text: a body that is not JSON, or nests too deep.
  if (!parsed) body = responseText(response.body)
  const broken = (outcome: Outcome, message: string, errors = [{ path: '/', message }]) =>
    ({ body, outcome, contract: { valid: false, errors } })
  if (expected === undefined) return broken('status', `HTTP ${status} is not an answer of ${name}`)
  if (!json) {
    return broken('content_type', contentTypeMessage(contentType ?? '(none)'))
  }
  if (!parsed) return broken('json', 'the body is not valid JSON')
  // Before anything recurses over it (the console's redaction, serialization). The schema check itself
  // only descends where the schema does; its error walk too.
  if (wholeBodyDepth && !withinDepth(body, MAX_DEPTH)) return tooDeep(responseText(response.body))
  if (!expected.check.check(body)) return broken('contract', '', expected.check.errors(body))
  if (!wholeBodyDepth && !passThroughWithinDepth(body, expected.check.passThrough, MAX_DEPTH)) {
    return tooDeep(responseText(response.body))
  }
  return { body, outcome: expected.outcome, contract: VALID }
}

/** The contract report of every answer that meets its schema: one frozen object, not one per call. */
const VALID: Exchange['contract'] = Object.freeze({
  valid: true, errors: Object.freeze([]) as unknown as ContractError[]
})
