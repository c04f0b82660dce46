// The front server's options: how long and how much a client may send, and who the client is behind a balancer.
import type { Server } from 'node:http'
import type { FastifyHttpOptions } from 'fastify'
import { trustProxySetting, type Config } from '../config.ts'

// Node's default check interval (30 s) would let a slow client hold a socket 30 s past its deadlines.
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000
// The socket is silent while a request is handled: its inactivity timeout must outlast the longest budget.
const HANDLING_MARGIN_MS = 2000

/** Fastify's server options for the front's limits and for who the client is behind a balancer. */
export function frontServerOptions (config: Config) {
  return {
    connectionTimeout: Math.max(
      config.SERVER_CONNECTION_TIMEOUT_MS,
      Math.max(config.PROFILE_TIMEOUT_MS, config.UPSTREAM_TIMEOUT_MS) + HANDLING_MARGIN_MS
    ),
    keepAliveTimeout: config.SERVER_KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: config.SERVER_REQUEST_TIMEOUT_MS,
    maxRequestsPerSocket: config.SERVER_MAX_REQUESTS_PER_SOCKET,
    bodyLimit: config.SERVER_BODY_LIMIT_BYTES,
    http: {
      headersTimeout: config.SERVER_HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(CONNECTIONS_CHECKING_INTERVAL_MS, config.SERVER_HEADERS_TIMEOUT_MS)
    },
    // loadConfig has refused any other value.
    trustProxy: trustProxySetting(config.TRUST_PROXY) ?? false
  } satisfies FastifyHttpOptions<Server>
}
