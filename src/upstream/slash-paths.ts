// Where each operation is posted (docs/upstream.md, The slash redirect): its documented path, whose first call meets
// a 307 to the same path with a trailing slash, the one place it may be redirected to; once an answer came from the
// slash path, later calls go straight to it, and back to the documented path once if it answers 404 or redirects.
import { operations, type OperationName } from '../../schemas/operations.ts'
import { postFollowingRedirects, type WireResponse, type WireRequest } from './transport/exchange.ts'

export function createSlashPaths (baseUrl: string) {
  const base = new URL(baseUrl)
  const basePath = base.pathname.replace(/\/+$/, '')
  const documented = Object.fromEntries(Object.entries(operations).map(([name, op]) =>
    [name, new URL(basePath + op.path, base)])) as Record<OperationName, URL>
  const slashed = Object.fromEntries(Object.entries(documented).map(([name, url]) =>
    [name, new URL(`${url.pathname}/`, url)])) as Record<OperationName, URL>
  // The slash location each operation was redirected to, so later calls take one round trip.
  const learned = new Map<OperationName, URL>()

  return {
    /** Where a call of the operation goes: the learned slash path, or the documented one. */
    url: (name: OperationName): URL => learned.get(name) ?? documented[name],
    /** The one place the operation may be redirected to. */
    redirectTarget: (name: OperationName): URL => slashed[name],
    /** True when the call goes to a learned path: a redirect from it is not followed but falls back. */
    learned: (name: OperationName): boolean => learned.has(name),

    /** The POST of `wire` (made with the three above), falling back to the documented path once. */
    async post (name: OperationName, wire: WireRequest): Promise<WireResponse> {
      const response = await postFollowingRedirects(wire)
      const moved = response.status === 404 || (response.status >= 300 && response.status < 400)
      if (wire.stopAtRedirect !== true || !moved) return response
      // The learned location may have moved: start again from the documented path, a new exchange. The learned
      // path is only replaced by one that answered: a fallback that fails proves it wrong no more than right.
      return await postFollowingRedirects({ ...wire, url: documented[name], stopAtRedirect: false })
    },

    /** After an answer that is the operation's (its answer or its not-found): the path it came from is the one. */
    learn (name: OperationName, response: WireResponse): void {
      if (response.url.href !== documented[name].href) learned.set(name, response.url)
      else learned.delete(name)
    }
  }
}
