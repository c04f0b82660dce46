// What the profile flow reports to metrics, and those metrics: the sections an answer went without (degraded)
// and the sections a last-known copy stood in for (stale). Every value comes from a small known set.
import type { Registry } from 'prom-client'
import { degradableSections, type DegradedSection, type StaleSection } from '../../schemas/profile.ts'
import type { PromClient } from '../prom.ts'

export interface ProfileObserver {
  /** A section an answer was sent without because its dealer lookup failed: once per answer. */
  degraded (section: DegradedSection): void
  /** A section answered from a copy, and why (the failure's reason, or `fresh_window`): once per load. */
  stale (section: StaleSection, reason: string): void
}

export const NO_PROFILE_OBSERVER: ProfileObserver = { degraded () {}, stale () {} }

/** The profile's section counters; returns the observer the flow reports to. */
export function profileMetrics ({ Counter }: Pick<PromClient, 'Counter'>, registry: Registry): ProfileObserver {
  const degradedSections = new Counter({
    name: 'bff_profile_degraded_sections_total',
    help: 'Profile answers sent without a section because its dealer lookup failed, by section.',
    labelNames: ['section'] as const,
    registers: [registry]
  })
  const staleSections = new Counter({
    name: 'bff_profile_stale_sections_total',
    help: 'Profile sections answered from the client\'s last-known copy, by section and reason (the failure\'s ' +
      'reason, or fresh_window within PROFILE_FRESH_S). Counted once per load; a single-flight burst shares one.',
    labelNames: ['section', 'reason'] as const,
    registers: [registry]
  })
  // Known series start at zero, so rate() and alerts see them before the first event.
  for (const section of degradableSections) degradedSections.labels(section).inc(0)
  return {
    degraded (section) { degradedSections.inc({ section }) },
    stale (section, reason) { staleSections.inc({ section, reason }) }
  }
}
