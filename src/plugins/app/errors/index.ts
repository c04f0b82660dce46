// One error handler for every failure, 404 and 400 included: the body of docs/api.md, Error codes, with a
// stable code, its message in the caller's language, and for 5xx a message that says what failed without internals.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { languageOf, toErrorBody } from '../../../error-body.ts'
import { MethodNotAllowedError, NotFoundError, type Language } from '../../../errors.ts'
import { isSummarised } from '../refusals/summary.ts'

/** Content-Language of an error answer, and Vary so that a cache keeps one answer per language. */
function languageHeaders (reply: FastifyReply, language: Language): void {
  reply.header('content-language', language)
  const vary = reply.getHeader('vary')
  const present = vary === undefined ? [] : String(vary).split(',').map(name => name.trim()).filter(Boolean)
  if (!present.some(name => name.toLowerCase() === 'accept-language' || name === '*')) {
    reply.header('vary', [...present, 'Accept-Language'].join(', '))
  }
}

interface ErrorsOptions {
  /** The language of error answers to a caller whose Accept-Language names none of ours (DEFAULT_LANGUAGE). */
  defaultLanguage?: Language
}

async function errorsPlugin (fastify: import('fastify').FastifyInstance, { defaultLanguage = 'ru' }: ErrorsOptions) {
  fastify.setErrorHandler(function handle (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const language = languageOf(request.headers['accept-language'], defaultLanguage)
    const english = toErrorBody(error)
    const body = language === 'en' ? english : toErrorBody(error, language)
    languageHeaders(reply, language)
    // Headers the error itself carries (as Fastify's own handler honours): an open breaker's Retry-After.
    const headers = (error as { headers?: Record<string, string> }).headers
    if (headers !== undefined && body.statusCode === error.statusCode) reply.headers(headers)
    // A refusal past a limit or under load shedding is counted in a summary line instead (plugins/app/refusals/);
    // the access line (at info) still records the request.
    if (!isSummarised(error)) {
      if (body.statusCode >= 500) request.log.error({ err: error, code: body.code }, 'request failed')
      else request.log.info({ code: body.code, message: english.message }, 'request refused')
    }
    return reply.code(body.statusCode).type('application/json; charset=utf-8').send(body)
  })

  // A known path with another method is 405 with Allow (RFC 9110 15.5.6), OPTIONS of it 204 with Allow;
  // only an unknown path is 404.
  fastify.setNotFoundHandler(function notFound (request, reply) {
    const path = request.url.split('?', 1)[0] ?? ''
    const allow = fastify.allowedMethods(path)
    const language = languageOf(request.headers['accept-language'], defaultLanguage)
    if (allow === undefined) {
      languageHeaders(reply, language)
      return reply.code(404).send(toErrorBody(new NotFoundError(request.method, path), language))
    }
    reply.header('allow', allow)
    if (request.method === 'OPTIONS') return reply.code(204).send()
    languageHeaders(reply, language)
    return reply.code(405).send(toErrorBody(new MethodNotAllowedError(request.method, path), language))
  })
}

export default fp(errorsPlugin, { name: 'errors', dependencies: ['route-methods'] })
