// A route's hooks as Fastify's onRoute hands them (one, a list or none), for the plugins that add their own.

/** The hooks of one kind a route already has, as a new list. */
export const hooksOf = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? [...hooks] : [hooks]
