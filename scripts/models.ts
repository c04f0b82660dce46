// `npm run models -- --out DIR [--from URL] [--package NAME] [--flavour kotlinx|gson]`: writes the app's types for
// every component of the OpenAPI document with quicktype: Kotlin data classes whose every property and enum entry
// carries its wire name for kotlinx.serialization (the default) or Gson (scripts/models/kotlin.ts), and Swift Codable
// structs with CodingKeys (scripts/models/swift.ts). The document is the committed openapi.yaml, or with --from a
// running service's /docs/json. Dates and every other `format` stay strings on both platforms: Swift's `.iso8601`
// strategy refuses the fractional seconds they carry, and some dates have no offset (docs/mobile.md, Dates).
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { InputData, JSONSchemaInput, quicktype } from 'quicktype-core'
import { AcronymStyleOptions } from 'quicktype-core/dist/esm/support/Acronyms.js'
import { parse } from 'yaml'
import { VALUE_KEYWORDS } from '../src/json-schema.ts'
import { FLAVOURS, kotlinLanguage, type Flavour } from './models/kotlin.ts'
import { lenientEnums } from './models/swift.ts'

export const DEFAULT_PACKAGE = 'com.example.dealerprofile.models'
export const KOTLIN_FILE = 'DealerProfileModels.kt'
export const SWIFT_FILE = 'DealerProfileModels.swift'
const OPENAPI_FILE = new URL('../openapi.yaml', import.meta.url)
/** How long --from waits for the document: a service that hangs gets a message, not a command that never ends. */
const FETCH_TIMEOUT_MS = 10_000

export const DEFAULT_FLAVOUR: Flavour = 'kotlinx'

export const USAGE = `Usage: npm run models -- --out DIR [--from URL] [--package NAME] [--flavour ${FLAVOURS.join('|')}]

  --out      the directory to write ${KOTLIN_FILE} and ${SWIFT_FILE} into (made if missing)
  --from     a running service's document, e.g. http://127.0.0.1:3000/docs/json (default: the committed
             openapi.yaml)
  --package  the Kotlin package of the data classes (default ${DEFAULT_PACKAGE})
  --flavour  the Kotlin serialization library the annotations are for: kotlinx (kotlinx.serialization, the
             default) or gson`

// Kotlin's package grammar, without the back-quoted names nobody wants in a package.
const KOTLIN_PACKAGE = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null

export class ModelsError extends Error {}

export interface ModelsOptions { out: string, from: string | undefined, packageName: string, flavour: Flavour }

const isFlavour = (value: string): value is Flavour => (FLAVOURS as readonly string[]).includes(value)

/** The options of the command line, or ModelsError naming every problem. */
export function parseModelsArgs (args: string[]): ModelsOptions {
  let values
  try {
    values = parseArgs({
      args,
      options: {
        out: { type: 'string' }, from: { type: 'string' }, package: { type: 'string' }, flavour: { type: 'string' }
      },
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
  const flavour = values.flavour ?? DEFAULT_FLAVOUR
  if (!isFlavour(flavour)) problems.push(`--flavour ${flavour} is not one of ${FLAVOURS.join(', ')}`)
  if (problems.length > 0) throw new ModelsError(problems.join('; '))
  return { out: values.out!, from: values.from, packageName, flavour: flavour as Flavour }
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

/** What a property of no documented shape says in the models, after its own description. */
export const SHAPELESS_NOTE = 'The upstream documents no shape for it: the model keeps it as raw JSON, to read by ' +
  'key (docs/mobile.md, Undocumented shapes).'

/**
 * The components as quicktype's input: no `format`s (dates, UUIDs stay strings), component references as
 * definitions, and each property's description where the models show it: its own, else that of its one non-null
 * branch (`T | null`), with SHAPELESS_NOTE when the document gives it no shape.
 */
function modelInput (components: Record<string, Json>): Record<string, unknown> {
  const resolveRef = (node: unknown): unknown => isObject(node) && typeof node.$ref === 'string'
    ? components[node.$ref.replace('#/components/schemas/', '')]
    : node
  const branches = (node: Json) => (Array.isArray(node.anyOf) ? node.anyOf : [])
    .filter((branch: unknown) => !(isObject(branch) && branch.type === 'null'))
  // Any value (no keyword that constrains it), an object without properties, or a list of those.
  const shapeless = (raw: unknown): boolean => {
    const node = resolveRef(raw)
    if (!isObject(node)) return false
    if (node.anyOf !== undefined) return branches(node).some(shapeless)
    if (node.type === 'array') return shapeless(node.items ?? {})
    if (node.type === 'object') {
      return Object.keys(isObject(node.properties) ? node.properties : {}).length === 0 &&
        node.additionalProperties !== false
    }
    return ['type', 'enum', 'const', '$ref', 'properties', 'allOf', 'oneOf'].every(key => node[key] === undefined)
  }
  const described = (property: Json): Json => {
    const [sole, ...others] = branches(property)
    const inherited = others.length === 0 && isObject(sole) && sole.$ref === undefined ? sole.description : undefined
    const own = property.description ?? inherited
    const description = shapeless(property) ? [own, SHAPELESS_NOTE].filter(text => text !== undefined).join(' ') : own
    return description === undefined ? property : { ...property, description }
  }
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk)
    if (!isObject(node)) return node
    return Object.fromEntries(Object.entries(node).flatMap(([key, value]): Array<[string, unknown]> => {
      if (key === 'format' && typeof value === 'string') return []
      if (VALUE_KEYWORDS.has(key)) return [[key, value]]
      if (key === '$ref' && typeof value === 'string') {
        return [[key, value.replace('#/components/schemas/', '#/definitions/')]]
      }
      if (key === 'properties' && isObject(value)) {
        return [[key, Object.fromEntries(Object.entries(value)
          .map(([name, property]) => [name, walk(isObject(property) ? described(property) : property)]))]]
      }
      return [[key, walk(value)]]
    }))
  }
  return walk(components) as Record<string, unknown>
}

/** Names declared twice in `kotlin` (an enum's serializer or adapter meeting a component of that name). */
function twiceDeclared (kotlin: string): string[] {
  const names = [...kotlin.matchAll(/^(?:data class|enum class|class|object|typealias) (\w+)/gm)].map(m => m[1]!)
  return names.filter((name, i) => names.indexOf(name) !== i)
}

/** The Kotlin (annotated for `flavour`) and Swift sources of every component. */
export async function renderModels (components: Record<string, Json>, {
  packageName = DEFAULT_PACKAGE, source = 'openapi.yaml', flavour = DEFAULT_FLAVOUR
}: { packageName?: string, source?: string, flavour?: Flavour } = {}): Promise<{ kotlin: string, swift: string }> {
  const input = new JSONSchemaInput(undefined)
  // One source whose every definition is a top-level type, so a component referenced by another is one type.
  await input.addSource({
    name: 'DealerProfileModels',
    schema: JSON.stringify({ definitions: modelInput(components) }),
    uris: ['#/definitions/']
  })
  const inputData = new InputData()
  inputData.addInput(input)
  // Acronyms as words (carGuid, not carGUID), as app code names them.
  const kotlin = await quicktype({
    inputData,
    lang: kotlinLanguage(flavour),
    rendererOptions: { package: packageName, 'acronym-style': AcronymStyleOptions.Camel }
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
  const kotlinText = kotlin.lines.join('\n')
  const twice = twiceDeclared(kotlinText)
  if (twice.length > 0) throw new ModelsError(`the document's names meet the models' own: ${twice.join(', ')}`)
  const header = (flavourNote: string) =>
    `// Generated by \`npm run models\`${flavourNote} from ${source}; do not edit, regenerate.`
  return {
    kotlin: `${header(` (${flavour})`)}\n${kotlinText}`,
    swift: `${header('')}\n${lenientEnums(swift.lines.join('\n'))}`
  }
}

/** The whole command: the files it wrote, or ModelsError. */
export async function runModels (args: string[]): Promise<string[]> {
  const options = parseModelsArgs(args)
  const { kotlin, swift } = await renderModels(await readComponents(options.from), {
    packageName: options.packageName, source: options.from ?? 'openapi.yaml', flavour: options.flavour
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
