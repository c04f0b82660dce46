// `npm run models -- --out DIR [--from URL] [--package NAME]`: writes the app's types for every component of the
// OpenAPI document, as Kotlin data classes (no serialization library) and Swift Codable structs, with quicktype.
// The document is the committed openapi.yaml, or with --from a running service's /docs/json. Dates and every other
// `format` stay strings on both platforms: Swift's `.iso8601` strategy refuses the fractional seconds they carry.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { InputData, JSONSchemaInput, quicktype } from 'quicktype-core'
import { AcronymStyleOptions } from 'quicktype-core/dist/esm/support/Acronyms.js'
import { parse } from 'yaml'

export const DEFAULT_PACKAGE = 'com.example.dealerprofile.models'
export const KOTLIN_FILE = 'DealerProfileModels.kt'
export const SWIFT_FILE = 'DealerProfileModels.swift'
const OPENAPI_FILE = new URL('../openapi.yaml', import.meta.url)
/** How long --from waits for the document: a service that hangs gets a message, not a command that never ends. */
const FETCH_TIMEOUT_MS = 10_000

export const USAGE = `Usage: npm run models -- --out DIR [--from URL] [--package NAME]

  --out      the directory to write ${KOTLIN_FILE} and ${SWIFT_FILE} into (made if missing)
  --from     a running service's document, e.g. http://127.0.0.1:3000/docs/json (default: the committed
             openapi.yaml)
  --package  the Kotlin package of the data classes (default ${DEFAULT_PACKAGE})`

// Kotlin's package grammar, without the back-quoted names nobody wants in a package.
const KOTLIN_PACKAGE = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null

export class ModelsError extends Error {}

export interface ModelsOptions { out: string, from: string | undefined, packageName: string }

/** The options of the command line, or ModelsError naming every problem. */
export function parseModelsArgs (args: string[]): ModelsOptions {
  let values
  try {
    values = parseArgs({
      args,
      options: { out: { type: 'string' }, from: { type: 'string' }, package: { type: 'string' } },
      strict: true,
      allowPositionals: false
    }).values
  } catch (error) {
    throw new ModelsError((error as Error).message)
  }
  const problems: string[] = []
  if (values.out === undefined || values.out === '') problems.push('--out DIR is required')
  const packageName = values.package ?? DEFAULT_PACKAGE
  if (!KOTLIN_PACKAGE.test(packageName)) {
    problems.push(`--package ${JSON.stringify(packageName)} is not a Kotlin package name such as ${DEFAULT_PACKAGE}`)
  }
  if (values.from !== undefined && !URL.canParse(values.from)) problems.push(`--from ${values.from} is not a URL`)
  else if (values.from !== undefined && !/^https?:$/.test(new URL(values.from).protocol)) {
    problems.push(`--from ${values.from} is not an http or https URL`)
  }
  if (problems.length > 0) throw new ModelsError(problems.join('; '))
  return { out: values.out!, from: values.from, packageName }
}

/** The document's component schemas: the committed openapi.yaml, or the document a service serves at `from`. */
export async function readComponents (from?: string): Promise<Record<string, Json>> {
  let text: string
  if (from === undefined) text = await readFile(OPENAPI_FILE, 'utf8')
  else {
    let res: Response
    try {
      res = await fetch(from, {
        headers: { accept: 'application/json, application/yaml' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS)
      })
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') {
        throw new ModelsError(`${from} did not answer within ${FETCH_TIMEOUT_MS / 1000} s`)
      }
      throw new ModelsError(`cannot reach ${from}: ${(error as { cause?: Error }).cause?.message ?? 'no answer'}`)
    }
    if (!res.ok) throw new ModelsError(`${from} answered ${res.status}, not the OpenAPI document`)
    text = await res.text()
  }
  let doc: unknown
  try {
    doc = parse(text)
  } catch {
    doc = undefined
  }
  const schemas = isObject(doc) && isObject(doc.components) ? doc.components.schemas : undefined
  if (!isObject(doc) || typeof doc.openapi !== 'string' || !isObject(schemas)) {
    throw new ModelsError(`${from ?? 'openapi.yaml'} is not an OpenAPI document with component schemas`)
  }
  return schemas as Record<string, Json>
}

/** A schema without `format`s (dates, UUIDs stay strings) and with its component references as definitions. */
function plain (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(plain)
  if (!isObject(node)) return node
  return Object.fromEntries(Object.entries(node)
    .filter(([key, value]) => !(key === 'format' && typeof value === 'string'))
    .map(([key, value]) => [key, key === '$ref' && typeof value === 'string'
      ? value.replace('#/components/schemas/', '#/definitions/')
      : plain(value)]))
}

/** The Kotlin and Swift sources of every component. */
export async function renderModels (
  components: Record<string, Json>, { packageName = DEFAULT_PACKAGE, source = 'openapi.yaml' } = {}
): Promise<{ kotlin: string, swift: string }> {
  const input = new JSONSchemaInput(undefined)
  // One source whose every definition is a top-level type, so a component referenced by another is one type.
  await input.addSource({
    name: 'DealerProfileModels',
    schema: JSON.stringify({ definitions: plain(components) }),
    uris: ['#/definitions/']
  })
  const inputData = new InputData()
  inputData.addInput(input)
  // Acronyms as words (carGuid, not carGUID), so a snake-case naming policy maps every property back to its key.
  const header = `Generated by \`npm run models\` from ${source}; do not edit, regenerate.`
  const kotlin = await quicktype({
    inputData,
    lang: 'kotlin',
    rendererOptions: { 'just-types': 'true', package: packageName, 'acronym-style': AcronymStyleOptions.Camel }
  })
  const swift = await quicktype({
    inputData,
    lang: 'swift',
    rendererOptions: {
      'struct-or-class': 'struct',
      'access-level': 'public',
      initializers: 'false',
      'acronym-style': AcronymStyleOptions.Camel
    }
  })
  return {
    kotlin: `// ${header}\n${kotlin.lines.join('\n')}`,
    swift: `// ${header}\n${swift.lines.join('\n')}`
  }
}

/** The whole command: the files it wrote, or ModelsError. */
export async function runModels (args: string[]): Promise<string[]> {
  const options = parseModelsArgs(args)
  const { kotlin, swift } = await renderModels(await readComponents(options.from), {
    packageName: options.packageName, source: options.from ?? 'openapi.yaml'
  })
  const out = resolve(options.out)
  await mkdir(out, { recursive: true })
  const files = [resolve(out, KOTLIN_FILE), resolve(out, SWIFT_FILE)]
  await writeFile(files[0]!, kotlin)
  await writeFile(files[1]!, swift)
  return files
}

if (import.meta.main) {
  try {
    for (const file of await runModels(process.argv.slice(2))) process.stdout.write(`wrote ${file}\n`)
  } catch (error) {
    if (!(error instanceof ModelsError)) throw error
    process.stderr.write(`npm run models: ${error.message}\n\n${USAGE}\n`)
    process.exitCode = 1
  }
}
