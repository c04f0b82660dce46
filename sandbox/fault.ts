// The faults an upstream can be made to commit, by kind: the fault upstream's vocabulary (faults.ts: a test's or the
// soak's choice per operation), of which the sandbox's test identities meet a few (outcomes.ts, served by
// upstream.ts). A type alone, below all three, so that none of them imports another for it: faults.ts starts the
// sandbox upstream, which serves the outcomes.
import type { ResponseFault } from './fault-response.ts'

export type Fault =
  | { kind: 'normal' } // the sandbox's response
  | { kind: 'slow', ms: number } // held, then the sandbox's response
  | { kind: 'reset' } // the socket destroyed before any byte of a response
  | { kind: 'wrong_type' } // the sandbox's response, labelled text/plain
  // 200 JSON streamed in chunks; content-length only when declared
  | { kind: 'huge', bytes: number, declared?: boolean }
  | { kind: 'redirect_loop', mode: 'self' | 'ping_pong' } // 307 to itself, or between the slashed and unslashed paths
  | { kind: 'cross_origin' } // 307 to the same path on `elsewhere`
  | ResponseFault // status (an HTML error page), garbage_json, answer (this JSON): fault-response.ts
