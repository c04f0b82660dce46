// Every answer carries `x-request-id` (plugins/app/request-id/): the caller's own when it is well formed, a fresh
// UUID otherwise. The same id is forwarded upstream and is on every log line of the request.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/

/** Fastify's `genReqId`: trusts an inbound id only when it cannot smuggle anything into logs or headers. */
export function requestId (req: IncomingMessage): string {
  const inbound = req.headers['x-request-id']
  return typeof inbound === 'string' && WELL_FORMED.test(inbound) ? inbound : randomUUID()
}
