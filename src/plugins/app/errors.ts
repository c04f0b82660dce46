// One error handler for every failure, 404 and 400 included: the body of docs/api.md, Error codes, with a
// stable code, and for 5xx a message that says what failed without internals.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { toErrorBody } from '../../error-body.ts'
import { MethodNotAllowedError, NotFoundError } from '../../errors.ts'
import routeMethods from './route-methods.ts'

async function errorsPlugin (fastify: import('fastify').FastifyInstance) {
  // Registered before any route (app.ts), it learns every route's methods as they are added.
  await fastify.register(routeMethods)
  fastify.setErrorHandler(function handle (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const body = toErrorBody(error)
    // Headers the error itself carries (as Fastify's own handler honours): an open breaker's Retry-After.
    const headers = (error as { headers?: Record<string, string> }).headers
    if (headers !== undefined && body.statusCode === error.statusCode) reply.headers(headers)
    if (body.statusCode >= 500) request.log.error({ err: error, code: body.code }, 'request failed')
    else request.log.info({ code: body.code, message: body.message }, 'request refused')
    return reply.code(body.statusCode).type('application/json; charset=utf-8').send(body)
  })

  // A known path with another method is 405 with Allow (RFC 9110 15.5.6), OPTIONS of it 204 with Allow;
  // only an unknown path is 404.
  fastify.setNotFoundHandler(function notFound (request, reply) {
    const path = request.url.split('?', 1)[0] ?? ''
    const allow = fastify.allowedMethods(path)
    if (allow === undefined) return reply.code(404).send(toErrorBody(new NotFoundError(request.method, path)))
    reply.header('allow', allow)
    if (request.method === 'OPTIONS') return reply.code(204).send()
    return reply.code(405).send(toErrorBody(new MethodNotAllowedError(request.method, path)))
  })
}

export default fp(errorsPlugin, { name: 'errors' })
