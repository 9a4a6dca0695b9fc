/**
 * The YAML inside a frontmatter block: a fast path for the common flat `key: plain text` layout, the full
 * YAML parser (`yaml`, YAML 1.2's core schema plus timestamps, alias expansion capped) with bounds against
 * pathological input, a line-wise repair for values strict YAML rejects, and the quoting memdir uses when it writes.
 *
 * The fast path is the one every header read takes first (a recall per prompt reads 200 of them); it only accepts
 * text on which it provably agrees with the YAML parser (a property test checks that), and returns `undefined`
 * for anything else so the caller falls back to the YAML path.
 */
import {
  type CreateNodeOptions,
  type DocumentOptions,
  isCollection,
  isMap,
  isSeq,
  parseDocument,
  type ParseOptions,
  type SchemaOptions,
  stringify,
  type ToJSOptions,
  type ToStringOptions
} from "yaml"

/** A top-level mapping, as the YAML parser returns it. */
export type YamlMap = Record<string, unknown>

// ---------------------------------------------------------------------------------------------------------------
// Fast path
// ---------------------------------------------------------------------------------------------------------------

/** A key the fast path accepts: what memdir writes and what every real memory file uses. */
const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/

/**
 * Characters on which the fast path gives up on the whole block: tabs, carriage returns, anything YAML
 * calls non-printable, the Unicode line/paragraph separators, BOMs and lone surrogates.
 */
const UNSAFE_CHARACTER =
  /[\t\r\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uFEFF\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/
/** A cheap first test: no match means no unsafe character (surrogates in valid pairs are checked only then). */
const MAYBE_UNSAFE_CHARACTER = /[\t\r\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uD800-\uDFFF\uFEFF\uFFFE\uFFFF]/

const hasUnsafeCharacter = (text: string): boolean => MAYBE_UNSAFE_CHARACTER.test(text) && UNSAFE_CHARACTER.test(text)

/** Plain scalars YAML resolves to null or a boolean (the core schema). */
const RESERVED_WORDS = new Set(["null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"])

/** YAML reads `TRUE:` as the key "true": reserved words are left to the parser (and quoted when written). */
const isSimpleKey = (key: string): boolean => SIMPLE_KEY.test(key) && !RESERVED_WORDS.has(key) && key !== "__proto__"

/** YAML indicators: a plain scalar cannot start with them (or they mean something else there). */
const INDICATORS = "-?:,[]{}#&*!|>'\"%@`"
/** Starts of the scalars that may resolve to a number, a date or null: only these meet the regex below. */
const NUMBER_OR_DATE_STARTS = "+.~0123456789-"

const startsWithOneOf = (value: string, characters: string): boolean => characters.includes(value.charAt(0))

const INDICATOR = 1
const NUMBER_OR_DATE = 2
/** The class of each ASCII first character, for the fast path. */
const START_CLASS = new Uint8Array(128)
for (const c of NUMBER_OR_DATE_STARTS) START_CLASS[c.charCodeAt(0)] = NUMBER_OR_DATE
for (const c of INDICATORS) START_CLASS[c.charCodeAt(0)] = INDICATOR

/**
 * Supersets of the plain scalars YAML resolves to a number or a date (the core schema's int and float, the
 * timestamp tag, and YAML 1.1's binary, sexagesimal and underscored forms for good measure); `~` is null.
 * Anything matching is left to the parser, so the fast path never has to know the exact rules. Common strings
 * such as ids (`6a6ab3b9-90e0-…`) and versions (`1.2.3`) do not match.
 */
const MAYBE_NUMBER_OR_DATE = new RegExp(
  "^(?:~" +
    "|[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9_]+(?::[0-5]?[0-9])*)" +
    "|[-+]?[0-9][0-9_]*(?:\\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?" +
    "|[-+]?\\.[0-9_]+(?:[eE][-+]?[0-9]+)?" +
    "|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*" +
    "|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)" +
    "|[0-9]{4}-[0-9][0-9]?-[0-9][0-9]?(?:[Tt \\t].*)?" +
    ")$"
)

/** `isPlainSafe` minus the character checks (done once per block by the fast path). */
const isPlainSafeText = (value: string): boolean =>
  value.length > 0 &&
  value.charCodeAt(0) > 32 &&
  value.charCodeAt(value.length - 1) > 32 &&
  !startsWithOneOf(value, INDICATORS) &&
  !(startsWithOneOf(value, NUMBER_OR_DATE_STARTS) && MAYBE_NUMBER_OR_DATE.test(value)) &&
  !RESERVED_WORDS.has(value) &&
  !value.endsWith(":") &&
  !value.includes(": ") &&
  !value.includes(" #")

/**
 * Whether YAML reads `value`, written bare after `key: `, back as exactly this string. Conservative: a `false`
 * only means "quote it" (when writing) or "use the YAML parser" (when reading).
 */
export const isPlainSafe = (value: string): boolean =>
  isPlainSafeText(value) && value.trim() === value && !/[\n\u0085]/.test(value) && !hasUnsafeCharacter(value)

/** Characters that never appear in a fast-path value: controls, tab, CR, NEL, line separators, BOM, surrogates. */
const UNSAFE_CLASS = "\\x00-\\x1F\\x7F-\\x9F\\u2028\\u2029\\uFEFF\\uFFFE\\uFFFF\\uD800-\\uDFFF"
const SURROGATE_PAIR = "[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]"
/**
 * One line of the fast path (sticky, after any blank lines): indentation, key, and optionally a value that is
 * plain text, a JSON-compatible double-quoted string or a single-quoted string. A plain value starts with no
 * space or indicator; inside it `:` is never followed by a space or the line end, and `#` never follows a space
 * (a nested map or a comment to YAML); spaces around it are not part of it, as in YAML.
 */
const FLAT_LINE = new RegExp(
  "(?:[ ]*\\n)*[ ]*[A-Za-z_][A-Za-z0-9_-]*:(?: +(?:" +
    `(?:[^ ${UNSAFE_CLASS}\\-?:,[\\]{}#&*!|>'"%@\`]|${SURROGATE_PAIR})` +
    `(?:[^ :${UNSAFE_CLASS}]|:(?=[^ \\n])|[ ]+(?=[^ #\\n])|${SURROGATE_PAIR})*` +
    `|"(?:[^"\\\\${UNSAFE_CLASS}]|\\\\["\\\\/bfnrt]|\\\\u[0-9A-Fa-f]{4}|${SURROGATE_PAIR})*"` +
    `|'(?:[^'${UNSAFE_CLASS}]|''|${SURROGATE_PAIR})*'` +
    "))? *(?:\\n|$)",
  "y"
)
const BLANK_TAIL = /^[ \n]*$/
const NEWLINE = 10
const SPACE = 32
const DOUBLE_QUOTE = 34
const SINGLE_QUOTE = 39

/**
 * The keys of memory headers (memdir's, the reference agent's): the fast path stores them as these very strings,
 * so a header's keys are not one new string each, looked up again to be used as a property name.
 */
const KNOWN_KEYS: ReadonlyArray<string> = [
  "name",
  "description",
  "type",
  "metadata",
  "modified",
  "node_type",
  "originSessionId"
]

/** The key at `[start, end)` of `block`: a known key's own string, else a new one. */
const keyAt = (block: string, start: number, end: number): string => {
  const length = end - start
  for (let i = 0; i < KNOWN_KEYS.length; i++) {
    const known = KNOWN_KEYS[i]!
    if (known.length === length && block.startsWith(known, start)) return known
  }
  return block.slice(start, end)
}

/** A key the fast path may store: not reserved, not already there. */
const isFreshKey = (map: YamlMap, key: string): boolean =>
  !(key.length <= 5 && RESERVED_WORDS.has(key)) && key !== "__proto__" && !Object.hasOwn(map, key)

/**
 * The fast path: `key: value` lines, one level of nested `key:` maps (the reference agent's `metadata:`), blank
 * lines; values plain, double-quoted (JSON escapes) or single-quoted. Parsed without a YAML parser;
 * `undefined` as soon as the block uses anything else (lists, deeper nesting, comments, anchors, block
 * scalars, numbers, dates…), and the caller then uses {@link parseYamlBlock}.
 */
export const parseFlatBlock = (block: string): YamlMap | undefined => {
  const result: YamlMap = {}
  let openKey: string | undefined
  let nested: YamlMap | undefined
  let nestedIndent = 0
  let position = 0
  while (position < block.length) {
    // `test` validates the line without allocating match arrays (this runs for every line of every file); the
    // parts are then found by position. The regex is shared, but this function is synchronous.
    FLAT_LINE.lastIndex = position
    if (!FLAT_LINE.test(block)) return BLANK_TAIL.test(block.slice(position)) ? result : undefined
    const next = FLAT_LINE.lastIndex
    let lineEnd = block.charCodeAt(next - 1) === NEWLINE ? next - 1 : next
    // The line regex took any blank lines before the key line: its start is after the last newline before the key
    // (the key line itself holds none).
    let lineStart = position
    let keyStart = position
    for (let c = block.charCodeAt(keyStart); c === SPACE || c === NEWLINE; c = block.charCodeAt(++keyStart)) {
      if (c === NEWLINE) lineStart = keyStart + 1
    }
    position = next
    const indent = keyStart - lineStart
    const colon = block.indexOf(":", keyStart)
    const key = keyAt(block, keyStart, colon)
    let valueStart = colon + 1
    while (block.charCodeAt(valueStart) === SPACE) valueStart++
    while (lineEnd > valueStart && block.charCodeAt(lineEnd - 1) === SPACE) lineEnd--
    let value: string | undefined
    if (valueStart < lineEnd) {
      const first = block.charCodeAt(valueStart)
      if (first === DOUBLE_QUOTE) {
        value = JSON.parse(block.slice(valueStart, lineEnd)) as string
      } else if (first === SINGLE_QUOTE) {
        value = block.slice(valueStart + 1, lineEnd - 1).replace(/''/g, "'")
      } else {
        value = block.slice(valueStart, lineEnd)
        if (!isPlainValue(value)) return undefined
      }
    }
    if (indent === 0) {
      if (!isFreshKey(result, key)) return undefined
      // `key:` alone is null, unless indented lines follow: then it is the map they make.
      result[key] = value ?? null
      openKey = value === undefined ? key : undefined
      nested = undefined
      continue
    }
    if (openKey === undefined || value === undefined) return undefined
    if (nested === undefined) {
      nested = {}
      nestedIndent = indent
      result[openKey] = nested
    } else if (indent !== nestedIndent) {
      return undefined
    }
    if (!isFreshKey(nested, key)) return undefined
    nested[key] = value
  }
  return result
}

/** The checks on a plain value that the line regex of the fast path does not make. */
const isPlainValue = (value: string): boolean => {
  const first = value.charCodeAt(0)
  if (first < 128 && START_CLASS[first] === NUMBER_OR_DATE && MAYBE_NUMBER_OR_DATE.test(value)) return false
  return !(value.length <= 5 && RESERVED_WORDS.has(value))
}

// ---------------------------------------------------------------------------------------------------------------
// YAML path
// ---------------------------------------------------------------------------------------------------------------

/** Deeper flow nesting than this is refused before the parser sees it (its values are built recursively). */
export const MAX_FLOW_NESTING = 64
/**
 * Alias uses a block may expand to (the parser's own limit, counting every use again): a "billion laughs" block
 * is refused, not expanded into whoever walks it later (JSON output, copies).
 */
export const MAX_ALIAS_COUNT = 100

/**
 * How memdir reads YAML: the core schema (YAML 1.2: `yes` is text, `0o17` a number) with timestamps (a bare
 * `2026-03-05` is a date, as memory files have always been read) and `<<` merge keys; errors as values, never
 * printed; a repeated key an error (`uniqueKeys`), which the repair below turns into "the last one wins".
 */
const READ_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  schema: "core",
  customTags: ["timestamp"],
  merge: true,
  prettyErrors: true,
  logLevel: "silent"
}
const TO_JS: ToJSOptions = { maxAliasCount: MAX_ALIAS_COUNT }

export interface YamlFailure {
  /** 0-based line inside the block. */
  readonly line: number
  readonly detail: string
}

export type YamlOutcome =
  | { readonly _tag: "Parsed"; readonly value: unknown; readonly repairs: ReadonlyArray<YamlRepair> }
  | { readonly _tag: "Failed"; readonly failure: YamlFailure }

/** What was off in a block that still parsed: a value read as plain text, or a repeated key. */
export interface YamlRepair {
  readonly _tag: "ReadAsPlainText" | "DuplicateKey"
  /** 0-based line inside the block. */
  readonly line: number
  /** The key whose value was read as plain text (empty for a duplicate key). */
  readonly key: string
  /** What the YAML parser said. */
  readonly reason: string
}

const flowNestingDepth = (block: string): number => {
  let depth = 0
  let max = 0
  for (let i = 0; i < block.length; i++) {
    const c = block.charCodeAt(i)
    if (c === 91 || c === 123) {
      depth++
      if (depth > max) max = depth
    } else if ((c === 93 || c === 125) && depth > 0) {
      depth--
    }
  }
  return max
}

type Attempt =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly failure: YamlFailure; readonly duplicateKey: boolean }

/** Whether a key anywhere in `node` is a list or a map (not text, a number, a date…). */
const hasCollectionKey = (node: unknown): boolean => {
  if (isMap(node)) return node.items.some((pair) => isCollection(pair.key) || hasCollectionKey(pair.value))
  if (isSeq(node)) return node.items.some(hasCollectionKey)
  return false
}

const tryParse = (block: string, uniqueKeys: boolean): Attempt => {
  const document = parseDocument(block, { ...READ_OPTIONS, uniqueKeys })
  const error = document.errors[0]
  if (error === undefined) {
    // A list or map as a key becomes one string of its whole YAML in JavaScript (aliases expanded): refused.
    if (hasCollectionKey(document.contents)) {
      return { ok: false, failure: { line: 0, detail: "a list or map used as a key" }, duplicateKey: false }
    }
  } else {
    // "Map keys must be unique at line 2, column 1:" and a code excerpt: the sentence is the detail.
    const detail = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "").trim()
    const line = Math.max(0, (error.linePos?.[0].line ?? 1) - 1)
    return { ok: false, failure: { line, detail }, duplicateKey: error.code === "DUPLICATE_KEY" }
  }
  // Building the values is where aliases expand: past the limit the parser throws (a ReferenceError), as it does
  // on a stack overflow from input that slipped past the nesting guard. This is where that becomes data.
  try {
    return { ok: true, value: document.toJS(TO_JS) }
  } catch (cause) {
    const detail = cause instanceof ReferenceError && /alias/i.test(cause.message)
      ? `expands through more than ${MAX_ALIAS_COUNT} uses of YAML aliases`
      : String(cause instanceof Error ? cause.message : cause).split("\n")[0]!.trim()
    return { ok: false, failure: { line: 0, detail }, duplicateKey: false }
  }
}

/** A top-level `key: value` line whose plain value contains ": " (or ends the value with a lone ":"). */
const TOP_LEVEL_PLAIN_WITH_COLON = /^([A-Za-z_][A-Za-z0-9_ .-]*?):[ \t]+([^\s"'[{|>&*!%@`#].*?: .*?)\s*$/

/** A `key: value` line that can be read as plain text: indentation, key, the raw value. */
const KEY_VALUE_LINE = /^( *)([A-Za-z_][A-Za-z0-9_ .-]*?):[ \t]+(\S.*?)\s*$/

/**
 * The full YAML path. When strict YAML rejects a line (typically an unquoted `: ` inside a description), the
 * nearest `key: value` line at or above the error is re-read with its value as plain text, and parsing is
 * retried; every such repair is reported so the caller can warn about it.
 */
export const parseYamlBlock = (block: string): YamlOutcome => {
  if (flowNestingDepth(block) > MAX_FLOW_NESTING) {
    return { _tag: "Failed", failure: { line: 0, detail: `nesting deeper than ${MAX_FLOW_NESTING} levels` } }
  }
  const lines = block.split("\n")
  const repairs: Array<YamlRepair> = []
  const repaired = new Set<number>()
  // A top-level plain value holding ": " is always a YAML error: quote it up front instead of learning it
  // from a failed parse (a parse per repaired line, and real memory files do this a lot).
  for (let index = 0; index < lines.length; index++) {
    const match = TOP_LEVEL_PLAIN_WITH_COLON.exec(lines[index]!)
    if (match === null) continue
    repaired.add(index)
    repairs.push({ _tag: "ReadAsPlainText", line: index, key: match[1]!, reason: "unquoted ': ' inside the value" })
    lines[index] = `${match[1]}: ${quoteYamlString(match[2]!)}`
  }
  let uniqueKeys = true
  // Each round either succeeds, fails for good, or repairs one more line: bounded by the line count.
  for (let round = 0; round <= lines.length + 1; round++) {
    const attempt = tryParse(lines.join("\n"), uniqueKeys)
    if (attempt.ok) return { _tag: "Parsed", value: attempt.value, repairs }
    const { failure } = attempt
    if (attempt.duplicateKey && uniqueKeys) {
      // Without the uniqueness check the last value of a repeated key is kept.
      repairs.push({ _tag: "DuplicateKey", line: failure.line, key: "", reason: failure.detail })
      uniqueKeys = false
      continue
    }
    let candidate = Math.min(failure.line, lines.length - 1)
    let match: RegExpExecArray | null = null
    while (candidate >= 0 && (match = KEY_VALUE_LINE.exec(lines[candidate]!)) === null) candidate--
    // An already repaired line that still fails, or a block scalar, is beyond a line-wise reading.
    if (match === null || repaired.has(candidate) || /^[|>]/.test(match[3]!)) return { _tag: "Failed", failure }
    repaired.add(candidate)
    repairs.push({ _tag: "ReadAsPlainText", line: candidate, key: match[2]!, reason: failure.detail })
    lines[candidate] = `${match[1]}${match[2]}: ${quoteYamlString(match[3]!)}`
  }
  return { _tag: "Failed", failure: { line: 0, detail: "could not be read" } }
}

// ---------------------------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------------------------

const ESCAPED =
  /[\\"\x00-\x1F\x7F-\x9F\u2028\u2029\uFEFF\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|(?<=[^\uD800-\uDBFF]))[\uDC00-\uDFFF]/g

const escapeCharacter = (c: string): string => {
  switch (c) {
    case "\\":
      return "\\\\"
    case "\"":
      return "\\\""
    case "\n":
      return "\\n"
    case "\t":
      return "\\t"
    case "\r":
      return "\\r"
    default:
      return "\\u" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
  }
}

/** A YAML double-quoted scalar that reads back as exactly `value`, on one line. */
export const quoteYamlString = (value: string): string => `"${value.replace(ESCAPED, escapeCharacter)}"`

/** `value` as YAML text after `key: `: bare when that is safe, double-quoted otherwise. */
export const yamlScalar = (value: string): string => isPlainSafe(value) ? value : quoteYamlString(value)

/** How memdir writes a value that is not a string: the read schema, one line per scalar, no anchors. */
const WRITE_OPTIONS: CreateNodeOptions & SchemaOptions & ToStringOptions = {
  schema: "core",
  customTags: ["timestamp"],
  lineWidth: 0,
  aliasDuplicateObjects: false
}

/** One top-level entry of any value, as YAML lines (no trailing newline). */
export const yamlEntry = (key: string, value: unknown): string | undefined => {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return undefined
  const renderedKey = isSimpleKey(key) ? key : quoteYamlString(key)
  if (typeof value === "string") return `${renderedKey}: ${yamlScalar(value)}`
  let dumped: string
  try {
    // Only newlines are trimmed: a line may end with a plain scalar of Unicode blanks (U+3000).
    dumped = stringify({ value }, WRITE_OPTIONS).replace(/\n+$/, "")
  } catch {
    // A value YAML cannot hold (a BigInt, a cycle): left out, as an undefined one is.
    return undefined
  }
  if (!dumped.startsWith("value:")) return undefined
  return renderedKey + dumped.slice("value".length)
}
