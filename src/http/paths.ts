// The paths of the service's own routes that other parts must know: the security headers pick Swagger UI's policy
// by the docs' prefix, tracing leaves the scrape out, the dev runner prints where the docs are.
export const DOCS_PREFIX = '/docs'
export const METRICS_PATH = '/metrics'
