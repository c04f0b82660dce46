// Where the docs are served: the security headers pick Swagger UI's policy by this prefix, the dev runner prints it.
export const DOCS_PREFIX = '/docs'
