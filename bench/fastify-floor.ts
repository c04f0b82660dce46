// The Fastify floor: the least a team on this stack writes for a correct profile, the yardstick the service's CPU
// per profile is held to (bench/report.ts). One Fastify route whose 200 is serialized with the route's response
// schema (the Profile of schemas/), pino at the level the service is given, around the profile work the bare floor
// does too (bench/floor-profile.ts). No validation of upstream answers, deadlines, breaker, metrics, limits or copies.
// Honest by check: the bench asks it and the service for the same client and requires deep-equal bodies.
import Fastify, { type FastifySchema } from 'fastify'
import { Profile } from '../schemas/profile.ts'
import { floorProfile, PROFILE_PATH } from './floor-profile.ts'
import { serveParent } from './ipc.ts'
import { startMeters } from './meters.ts'

async function main (): Promise<void> {
  const work = floorProfile()
  // The service's keep-alive (autocannon keeps its connections).
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' }, keepAliveTimeout: 72_000 })
  // The Profile as plain JSON Schema without its `$id`s: a Breadcrumb with its `$id` in two lists clashes in
  // fast-json-stringify. Typed loosely, as without a type provider: the other answers are plain objects.
  const profile: unknown = JSON.parse(JSON.stringify(Profile, (key, value) => key === '$id' ? undefined : value))
  const schema: FastifySchema = { response: { 200: profile } }
  app.get(PROFILE_PATH, { schema }, async (request, reply) => {
    const claims = work.verify(request.headers.authorization)
    if (claims === null) return reply.code(401).send({})
    try {
      return await work.load(claims)
    } catch {
      return reply.code(502).send({})
    }
  })
  const meters = startMeters(app.server)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the Fastify floor is not on a TCP port')
  serveParent(`http://127.0.0.1:${address.port}`, {
    ...meters.handlers,
    async close () {
      meters.stop()
      await app.close()
      await work.close()
    }
  })
}

if (import.meta.main) await main()
