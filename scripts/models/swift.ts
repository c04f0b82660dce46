// The Swift of `npm run models` past quicktype: every `String` enum reads a value it does not know as `.unknown`
// instead of failing the whole answer (docs/mobile.md, Unknown enum values). quicktype's own option for this
// (`optional-enums`) needs a third-party package and covers properties only, not the items of a list.

// A quicktype String enum: its cases, each `case name = "wire"`, and nothing else.
const STRING_ENUM = /^(public enum (\w+): String, Codable \{\n)((?: {4}case \w+ = "(?:[^"\\\n]|\\.)*"\n)+)\}$/gm
const ANY_STRING_ENUM = /^public enum \w+: String, Codable \{$/gm

/** `swift` with a `.unknown` case and a lenient decoder in every String enum; throws on an enum it cannot read. */
export function lenientEnums (swift: string): string {
  let changed = 0
  const out = swift.replace(STRING_ENUM, (_, head: string, name: string, cases: string) => {
    if (/^ {4}case unknown = |= ""$/m.test(cases)) throw new Error(`enum ${name} already has an unknown or "" case`)
    changed++
    return `${head}${cases}
    /// A value these models do not know, from a newer service: skip it (docs/mobile.md).
    case unknown = ""

    public init(from decoder: Decoder) throws {
        self = ${name}(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .unknown
    }
}`
  })
  const enums = [...swift.matchAll(ANY_STRING_ENUM)].length
  if (changed !== enums) throw new Error(`${enums - changed} Swift enum(s) not in the form quicktype writes`)
  return out
}
