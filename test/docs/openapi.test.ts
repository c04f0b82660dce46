// The OpenAPI document (docs/api.md, Docs and health): Swagger UI at /docs, the document at /docs/json and
// /docs/yaml, components named after the schemas' $ids, both security schemes, examples that satisfy
// their schemas, and openapi.yaml identical to what the code generates.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { isAlias, isNode, parseDocument, visit } from 'yaml'
import { Compile } from 'typebox/compile'
import pkg from '../../package.json' with { type: 'json' }
import { ConsoleAnswer, ConsoleRequest } from '../../schemas/console.ts'
import { ErrorBody } from '../../schemas/errors.ts'
import { registeredRoutes, routeModules } from '../../src/routes/registry.ts'
import { collectShared } from '../../src/plugins/app/shared-schemas/refs.ts'
import { operationNames } from '../../schemas/operations.ts'
import { generateOpenapi, OPENAPI_FILE } from '../../scripts/openapi.ts'
import { buildTestApp } from '../helpers/build-app.ts'

type Json = Record<string, any>

t.test('openapi.yaml is the document the code generates', async t => {
  const [committed, generated] = await Promise.all([readFile(OPENAPI_FILE, 'utf8').catch(() => ''), generateOpenapi()])
  const [mine, theirs] = [committed.split('\n'), generated.split('\n')]
  const line = mine.findIndex((text, i) => text !== theirs[i])
  t.ok(committed === generated, 'openapi.yaml is out of date: run `npm run openapi` and commit it', {
    firstDifference: line === -1 ? 'at the end' : { line: line + 1, committed: mine[line], generated: theirs[line] }
  })
  // The served document is the same one (the file only adds a comment line on top).
  const { app } = await buildTestApp(t)
  const served = await app.inject('/docs/yaml')
  t.equal(served.statusCode, 200)
  t.match(served.headers['content-type'], /yaml/)
  t.match(served.body, /^openapi: 3\.1\.0$/m)
  t.ok(generated.endsWith(served.body), '/docs/yaml serves the content of openapi.yaml')
})

t.test('the document lists the routes in the registry\'s order: a route appended there appends its path', async t => {
  const { app } = await buildTestApp(t)
  const doc: Json = (await app.inject('/docs/json')).json()
  const registered = [...new Set(registeredRoutes.map(route => route.split(' ')[1]!))]
  t.strictSame(Object.keys(doc.paths).filter(path => registered.includes(path)), registered)
})

t.test('openapi.yaml holds no YAML anchor or alias: every part of the document is written out where it is', async t => {
  const anchored = (text: string) => {
    const found: string[] = []
    visit(parseDocument(text), (_key, node) => {
      if (isAlias(node)) found.push(`*${node.source}`)
      else if (isNode(node) && node.anchor !== undefined) found.push(`&${node.anchor}`)
    })
    return found
  }
  t.same(anchored(await readFile(OPENAPI_FILE, 'utf8')), [],
    'an object shared by two places of the document (a response, a header, an examples list): make it fresh per call')
  t.same(anchored('a: &a1 [1]\nb: *a1\n'), ['&a1', '*a1'], 'the check sees anchors and aliases')
})

t.test('Swagger UI at /docs loads its scripts from files, none inline', async t => {
  const { app } = await buildTestApp(t)
  const page = await app.inject('/docs')
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  const scripts = [...page.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
  t.ok(scripts.length > 0, 'the page loads Swagger UI')
  for (const [, attributes, content] of scripts) {
    t.match(attributes, /\bsrc="/, 'every script is a file (a strict CSP needs no inline script)')
    t.equal(content?.trim(), '')
  }
  const initializer = await app.inject('/docs/static/swagger-initializer.js')
  t.equal(initializer.statusCode, 200)
  t.match(initializer.body, /json/, 'the UI reads the generated document')
})

t.test('/docs/json: OpenAPI 3.1.0 with components named after the $ids and both security schemes', async t => {
  const { app } = await buildTestApp(t)
  const res = await app.inject('/docs/json')
  t.equal(res.statusCode, 200)
  const doc: Json = res.json()
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.version, pkg.version)
  t.ok(doc.info.title && doc.info.description)
  t.ok(Array.isArray(doc.servers) && doc.servers.length > 0)

  const names = Object.keys(doc.components.schemas)
  const ids = collectShared([ErrorBody, ...routeModules.flatMap(route => route.schemas)])
    .map(s => (s as { $id: string }).$id)
  t.same([...names].sort(), [...ids].sort(), 'one component per shared schema, named by its $id')
  for (const name of ['ErrorBody', 'ConsoleRequest', 'ConsoleAnswer', 'PassportParams', 'DealerParams']) {
    t.ok(names.includes(name), name)
  }
  t.notOk(JSON.stringify(doc).includes('def-'), 'no generated def-N names')
  t.notOk(JSON.stringify(doc).includes('"$id"'), 'no $id left in the document')

  t.match(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
  t.match(doc.components.securitySchemes.consoleKey, { type: 'apiKey', in: 'header', name: 'x-console-key' })

  const consoleOp = doc.paths['/request-console']?.post
  t.ok(consoleOp, 'the console is documented')
  t.same(consoleOp.security, [{ consoleKey: [] }])
  t.same(consoleOp.tags, ['console'])
  t.ok(consoleOp.summary && consoleOp.description)
  t.equal(consoleOp.requestBody.content['application/json'].schema.$ref, '#/components/schemas/ConsoleRequest')
  t.equal(consoleOp.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/ConsoleAnswer')

  const profileOp = doc.paths['/api/users/profile']?.get
  if (profileOp === undefined) t.comment('the profile route is not documented yet')
  else t.same(profileOp.security, [{ bearerAuth: [] }])

  for (const [path, item] of Object.entries(doc.paths as Json)) {
    t.notOk(path.startsWith('/docs'), `the docs' own routes are hidden: ${path}`)
    for (const op of Object.values(item as Json)) t.ok(op.tags?.length > 0, `${path} has a tag`)
  }
})

t.test('examples: one console request per operation, and every example satisfies its schema', async t => {
  const { app } = await buildTestApp(t)
  const doc: Json = (await app.inject('/docs/json')).json()
  const request = doc.components.schemas.ConsoleRequest
  t.equal(request.anyOf.length, operationNames.length, 'one variant per registry operation')
  t.same(request.examples.map((e: Json) => e.operation), operationNames, 'one example per operation')
  const checkRequest = Compile(ConsoleRequest)
  for (const example of request.examples) {
    t.ok(checkRequest.Check(example),
      `request example ${example.operation} is valid`)
  }

  const answer = doc.components.schemas.ConsoleAnswer
  t.ok(answer.examples.length > 0)
  const checkResponse = Compile(ConsoleAnswer)
  for (const example of answer.examples) {
    t.ok(checkResponse.Check(example),
      `answer example ${example.operation} is valid`)
  }

  if (doc.components.schemas.Profile !== undefined) {
    t.ok(doc.components.schemas.Profile.examples?.length > 0,
      'the profile has an example')
  }
})
