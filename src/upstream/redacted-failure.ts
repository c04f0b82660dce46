// A failure as it may be logged: every text the upstream chose (a hop's location, a contract error's path and
// message, the cause's message) with the keys and the caller's login redacted, a content type as its media type.
import { textRedactor } from '../redaction.ts'
import type { CallOptions } from './call-types.ts'
import { upstreamError, type UpstreamError } from './errors.ts'
import { trimmedContractMessage } from './interpret.ts'
import type { WireFailure } from './transport/exchange.ts'

/** What of a call's failure texts is redacted: the keys, and the caller's login (the call's, or its params'). */
export function failureRedaction (keys: readonly string[]) {
  const keysOnly = textRedactor(keys)
  return (call: CallOptions, params: unknown): (text: string) => string => {
    const login = call.caller?.login ?? (params as { login?: unknown }).login
    return typeof login === 'string' && login.length > 0 ? textRedactor([...keys, login]) : keysOnly
  }
}

/** The caller's upstream error of a failure on the wire. */
export function upstreamFailure (failure: WireFailure): UpstreamError {
  return upstreamError(failure.reason, failure.record, failure.cause)
}

/** The failure with its texts redacted, in place. Its exchange is its own (never the console's Exchange). */
export function redacted (error: UpstreamError, redact: (text: string) => string): UpstreamError {
  const { exchange } = error
  exchange.redirects = exchange.redirects.map(hop => ({ status: hop.status, location: redact(hop.location) }))
  if (exchange.contract !== undefined) {
    exchange.contract = {
      valid: exchange.contract.valid,
      errors: exchange.contract.errors.map(e => ({
        path: redact(e.path), message: redact(trimmedContractMessage(e.message))
      }))
    }
  }
  if (error.cause instanceof Error) error.cause.message = redact(error.cause.message)
  return error
}
