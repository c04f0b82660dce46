// What every owner of metrics shares. Each owner (the front, the upstream client and its breakers, the contract's
// drift, Redis, the key set, the profile, the last-known store) exports one `<owner>Metrics(prom, registry, ...)`
// that puts its metrics on the app's registry and, where events feed them, returns the observer to report to.
// The metrics plugin (plugins/app/metrics/) holds the registry; the plugin owning each source calls its function.

/** prom-client, imported only when metrics are on: unused, it would cost every instance about 2 MiB of heap. */
export type PromClient = typeof import('prom-client')

// A BFF answers in milliseconds to a few seconds; the top buckets frame the 5 s upstream and 8 s profile
// deadlines so a request that ran into one shows up where it belongs.
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 8, 10]
