// A documented error answer: the shared ErrorBody, with one example per error as the error handler renders it and
// the Content-Language and the Cache-Control every error answer carries.
import type { FastifyError } from 'fastify'
import { ErrorBody } from '../../../../schemas/errors.ts'
import { toErrorBody } from '../../../error-body.ts'
import { languages } from '../../../errors.ts'
import { noStoreHeader } from '../cache-control/no-store.ts'
import { ref } from '../shared-schemas/refs.ts'

interface ResponseHeader { type: 'string', description: string, examples?: string[], enum?: string[] }

/** The languages of error messages, as the document lists them. */
export const LANGUAGE_LIST = languages.map(language => `\`${language}\``).join(', ')

/** Every error answer's language (the error handler's choice by Accept-Language). */
const CONTENT_LANGUAGE: Record<string, ResponseHeader> = {
  'content-language': {
    type: 'string',
    enum: [...languages],
    description: `The language of \`message\`: one of ${LANGUAGE_LIST}, by the request's Accept-Language ` +
      '(`DEFAULT_LANGUAGE` when it names neither). A `Vary: Accept-Language` header comes with it.'
  }
}

/**
 * A documented error response: the shared ErrorBody with one named example per error, each built by the
 * error handler's own mapping so the example is exactly what a client receives.
 */
export function errorResponse (description: string, errors: FastifyError[], headers?: Record<string, ResponseHeader>) {
  const examples = Object.fromEntries(errors.map(error => {
    const value = toErrorBody(error)
    return [value.code, { summary: value.message, value }]
  }))
  return {
    description,
    // Copies: a shared object would be written as a YAML anchor and alias.
    headers: { ...headers, ...structuredClone(CONTENT_LANGUAGE), ...noStoreHeader() },
    content: { 'application/json': { schema: ref(ErrorBody), examples } }
  }
}
