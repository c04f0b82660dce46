// The response a failing upstream sends in place of its answer, for the faults that are a response of their own:
// the fault upstream (faults.ts) and the sandbox's test identities (upstream.ts, outcomes.ts) render them here, so
// both fail alike. Each server frames the body its own way (the sandbox declares its length).
import type { OutgoingHttpHeaders } from 'node:http'

/** The faults answered with a response of their own (fault.ts's `Fault` has them among its kinds). */
export type ResponseFault =
  | { kind: 'status', status: number } // an HTML error page with that status
  | { kind: 'garbage_json' } // 200, application/json, not JSON
  // this JSON answer, whoever is asked for (a not-found, another client's record)
  | { kind: 'answer', status: number, body: unknown }

interface FaultResponse { status: number, headers: OutgoingHttpHeaders, body: Buffer }

export const JSON_TYPE = 'application/json; charset=utf-8'

export function faultResponse (fault: ResponseFault): FaultResponse {
  switch (fault.kind) {
    case 'status':
      return {
        status: fault.status,
        headers: { 'content-type': 'text/html' },
        body: Buffer.from(`<html><body><h1>${fault.status}</h1></body></html>`)
      }
    case 'garbage_json':
      return {
        status: 200,
        headers: { 'content-type': JSON_TYPE },
        body: Buffer.from('{"success": tru\u0000e, "data": [')
      }
    case 'answer':
      return {
        status: fault.status,
        headers: { 'content-type': JSON_TYPE },
        body: Buffer.from(JSON.stringify(fault.body))
      }
  }
}
