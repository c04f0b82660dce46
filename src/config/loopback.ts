import { isIP } from 'node:net'

/** True for the local machine: an http:// URL there never crosses a network. */
export function isLoopback (hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' ||
    (isIP(host) === 4 && host.startsWith('127.'))
}
