// What the plugins owning a source of metrics get from the metrics plugin (plugins/app/metrics/): prom-client's
// classes and the app's registry, to make their own metrics with (src/prom.ts), or null when metrics are off.
import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import type { PromClient } from '../prom.ts'

export interface Metrics {
  /** prom-client's classes, for the owners to make their metrics with. */
  readonly prom: PromClient
  readonly registry: Registry
  /** One request refused by load shedding, by under-pressure's name of the bound it found exceeded. */
  shed (pressure: string): void
}

/**
 * The app's metrics, or null when they are off. A plugin calling this declares `metrics` in its fastify-plugin
 * `dependencies`; one that does not and runs first fails here, at boot, rather than losing its metrics in silence.
 */
export function metricsOf (fastify: FastifyInstance): Metrics | null {
  if (!fastify.hasDecorator('metrics')) {
    throw new Error('the metrics plugin is not registered yet: declare \'metrics\' in this plugin\'s dependencies')
  }
  return fastify.metrics
}
