// Where the metrics are scraped: tracing leaves this path out, the Kubernetes manifests name it.
export const METRICS_PATH = '/metrics'
