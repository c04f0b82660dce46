// The Kotlin of `npm run models`: quicktype's Kotlin renderer with every property and enum entry annotated with its
// wire name for the chosen serialization library (kotlinx.serialization or Gson), `= null` only where the document
// lets a property be absent, raw JSON where the document knows no shape, and enums that read a value they do not
// know as `Unknown` instead of failing the whole answer (docs/mobile.md, Unknown enum values).
import {
  type ClassType, type EnumType, getOptionValues, KotlinRenderer, KotlinTargetLanguage, kotlinOptions, type MapType,
  type ArrayType, type Name, type RenderContext, type Sourcelike, type Type, type UnionType
} from 'quicktype-core'

export const FLAVOURS = ['kotlinx', 'gson'] as const
export type Flavour = typeof FLAVOURS[number]

/** What differs between the libraries: imports, annotations and the code that reads an unknown enum value. */
interface Library {
  usage: string[]
  imports: string[]
  classAnnotation: string | null
  /** The annotation that names a property's or an enum entry's wire name. */
  wireName (json: string): string
  /** The annotation on an enum class that routes its decoding through `lenient`. */
  enumAnnotation (name: Name): Sourcelike
  /** A top-level declaration decoding `name` through its `fromValue`. */
  lenient (name: Name, serialName: string): Sourcelike[]
}

/** A Kotlin string literal: JSON's escapes, and `$` escaped so it never starts a template. */
const literal = (text: string) => JSON.stringify(text).replaceAll('$', '\\$')

const LIBRARIES: Record<Flavour, Library> = {
  kotlinx: {
    usage: [
      '// kotlinx.serialization (its Gradle plugin and kotlinx-serialization-json). The contract grows by added',
      '// fields: decode ignoring the keys these models do not know.',
      '//   val json = Json { ignoreUnknownKeys = true }',
      '//   val profile = json.decodeFromString<Profile>(body)'
    ],
    imports: [
      'kotlinx.serialization.KSerializer', 'kotlinx.serialization.SerialName', 'kotlinx.serialization.Serializable',
      'kotlinx.serialization.descriptors.PrimitiveKind', 'kotlinx.serialization.descriptors.PrimitiveSerialDescriptor',
      'kotlinx.serialization.descriptors.SerialDescriptor', 'kotlinx.serialization.encoding.Decoder',
      'kotlinx.serialization.encoding.Encoder', 'kotlinx.serialization.json.JsonArray',
      'kotlinx.serialization.json.JsonElement', 'kotlinx.serialization.json.JsonObject'
    ],
    classAnnotation: '@Serializable',
    wireName: json => `@SerialName(${literal(json)})`,
    enumAnnotation: name => ['@Serializable(with = ', name, 'Serializer::class)'],
    lenient: (name, serialName) => [
      ['/** Reads a value these models do not know as ', name, '.Unknown instead of failing the whole answer. */'],
      ['object ', name, 'Serializer : KSerializer<', name, '> {'],
      ['    override val descriptor: SerialDescriptor = PrimitiveSerialDescriptor(', literal(serialName),
        ', PrimitiveKind.STRING)'],
      ['    override fun deserialize(decoder: Decoder): ', name, ' = ', name, '.fromValue(decoder.decodeString())'],
      ['    override fun serialize(encoder: Encoder, value: ', name, ') = encoder.encodeString(value.value)'],
      '}'
    ]
  },
  gson: {
    usage: [
      '// Gson. It ignores the keys these models do not know, and never checks that a property is present: a property',
      '// typed non-null is null (or 0, false) when the answer lacks it (docs/mobile.md, Generating models).',
      '//   val profile = Gson().fromJson(body, Profile::class.java)'
    ],
    imports: [
      'com.google.gson.TypeAdapter', 'com.google.gson.annotations.JsonAdapter',
      'com.google.gson.annotations.SerializedName', 'com.google.gson.stream.JsonReader',
      'com.google.gson.stream.JsonToken', 'com.google.gson.stream.JsonWriter'
    ],
    classAnnotation: null,
    wireName: json => `@SerializedName(${literal(json)})`,
    enumAnnotation: name => ['@JsonAdapter(', name, 'Adapter::class)'],
    lenient: name => [
      ['/** Reads a value these models do not know as ', name, '.Unknown, where Gson would put null. */'],
      ['class ', name, 'Adapter : TypeAdapter<', name, '>() {'],
      ['    override fun write(out: JsonWriter, value: ', name, '?) {'],
      '        if (value == null) out.nullValue() else out.value(value.value)',
      '    }',
      '',
      ['    override fun read(reader: JsonReader): ', name, '? {'],
      '        if (reader.peek() == JsonToken.NULL) {',
      '            reader.nextNull()',
      '            return null',
      '        }',
      ['        return ', name, '.fromValue(reader.nextString())'],
      '    }',
      '}'
    ]
  }
}

const RAW_JSON = new Set(['JsonElement', 'JsonObject'])

class WireKotlinRenderer extends KotlinRenderer {
  private readonly flavour: Flavour
  private readonly library: Library

  constructor (language: KotlinTargetLanguage, renderContext: RenderContext,
    options: ConstructorParameters<typeof KotlinRenderer>[2], flavour: Flavour) {
    super(language, renderContext, options)
    this.flavour = flavour
    this.library = LIBRARIES[flavour]
  }

  // A value of no documented shape stays raw JSON: kotlinx's JsonElement, JsonObject, JsonArray. Gson's own
  // JsonObject refuses a JSON null (`discount: null`), so its flavour keeps quicktype's Any?, Map and List, which
  // Gson reads as they come (numbers as Double).
  protected override anySourceType (optional: string): Sourcelike {
    return this.flavour === 'kotlinx' ? ['JsonElement', optional] : super.anySourceType(optional)
  }

  protected override arrayType (arrayType: ArrayType, withIssues = false): Sourcelike {
    const items = this.sourcelikeToString(this.kotlinType(arrayType.items, withIssues, true))
    return RAW_JSON.has(items) ? 'JsonArray' : super.arrayType(arrayType, withIssues)
  }

  protected override mapType (mapType: MapType, withIssues = false): Sourcelike {
    const values = this.sourcelikeToString(this.kotlinType(mapType.values, withIssues, true))
    return RAW_JSON.has(values) ? 'JsonObject' : super.mapType(mapType, withIssues)
  }

  // No description: quicktype merges every free map of the document into this one type, and their descriptions too.
  protected override emitTopLevelMap (t: MapType, name: Name): void {
    this.emitLine('typealias ', name, ' = ', this.mapType(t))
  }

  protected override emitUsageHeader (): void {
    for (const line of this.library.usage) this.emitLine(line)
  }

  protected override emitHeader (): void {
    super.emitHeader()
    for (const name of this.library.imports) this.emitLine('import ', name)
    this.ensureBlankLine()
  }

  // Every property annotated, required or not; `= null` only for a property the document lets be absent, so
  // kotlinx refuses an answer without a required one (nullable or not).
  protected override emitClassDefinition (c: ClassType, className: Name): void {
    this.emitDescription(this.descriptionForType(c))
    if (this.library.classAnnotation !== null) this.emitLine(this.library.classAnnotation)
    this.emitLine('data class ', className, ' (')
    this.indent(() => {
      let count = c.getProperties().size
      this.forEachClassProperty(c, 'none', (name, jsonName, p) => {
        const last = --count === 0
        const type = p.isOptional ? [this.kotlinType(p.type, true, true), '?'] : this.kotlinType(p.type, true)
        this.emitDescription(this.descriptionForClassProperty(c, jsonName))
        this.emitLine(this.library.wireName(jsonName))
        this.emitLine('val ', name, ': ', type, p.isOptional ? ' = null' : '', last ? '' : ',')
        if (!last) this.ensureBlankLine()
      })
    })
    this.emitLine(')')
  }

  protected override emitEnumDefinition (e: EnumType, enumName: Name): void {
    this.emitDescription(this.descriptionForType(e))
    this.emitLine(this.library.enumAnnotation(enumName))
    this.emitBlock(['enum class ', enumName, '(val value: String)'], () => {
      this.forEachEnumCase(e, 'none', (name, jsonName) => {
        if (this.sourcelikeToString(name) === 'Unknown') {
          throw new Error(`enum ${this.sourcelikeToString(enumName)} has a value named like its Unknown entry`)
        }
        this.emitLine(this.library.wireName(jsonName), ' ', name, '(', literal(jsonName), '),')
      })
      this.ensureBlankLine()
      this.emitLine('/** A value these models do not know, from a newer service: skip it (docs/mobile.md). */')
      this.emitLine('Unknown("");')
      this.ensureBlankLine()
      this.emitBlock('companion object', () => {
        this.emitLine('/** The entry of a wire value; Unknown for a value these models do not know. */')
        this.emitLine('fun fromValue(value: String): ', enumName,
          ' = values().firstOrNull { it.value == value } ?: Unknown')
      })
    })
    this.ensureBlankLine()
    const serialName = `${this._kotlinOptions.packageName}.${this.sourcelikeToString(enumName)}`
    for (const line of this.library.lenient(enumName, serialName)) this.emitLine(line)
  }

  // The documents' anyOf are all `T | null`, which kotlinType renders as `T?`; anything else is a document this
  // generator was not written for.
  protected override emitUnionDefinition (u: UnionType): void {
    throw new Error(`a union of ${[...u.members].map((m: Type) => m.kind).join(', ')} has no Kotlin form here`)
  }
}

class WireKotlinLanguage extends KotlinTargetLanguage {
  private readonly flavour: Flavour

  constructor (flavour: Flavour) {
    super()
    this.flavour = flavour
  }

  protected override makeRenderer (renderContext: RenderContext, options: Record<string, unknown>): KotlinRenderer {
    return new WireKotlinRenderer(this, renderContext, getOptionValues(kotlinOptions, options), this.flavour)
  }
}

/** quicktype's target language for the Kotlin of `flavour`. */
export const kotlinLanguage = (flavour: Flavour) => new WireKotlinLanguage(flavour)
