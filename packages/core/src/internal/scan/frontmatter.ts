/**
 * The frontmatter parser's core, shared by `Frontmatter` (strings) and the live `Scanner` (which finds the
 * fences in the raw bytes itself and hands over only the block between them).
 */
import * as Result from "effect/Result"
import { InvalidFrontmatterError } from "../../Errors.js"
import type { MemoryKind, MemoryType } from "../../Memory.js"
import { parseFlatBlock, parseYamlBlock, type YamlMap, type YamlRepair } from "./yaml.js"

/** Each known type by its text: a header keeps the one shared string, not its own copy. */
const knownTypes: ReadonlyMap<string, MemoryType> = new Map(
  (["user", "feedback", "project", "reference"] as const).map((type) => [type, type])
)

/**
 * The `extra` of every header without other keys: one frozen empty map (a scan keeps thousands of headers, and
 * `extra` is read-only to everyone).
 */
const NO_EXTRA: Readonly<Record<string, unknown>> = Object.freeze({})

/** Only this many lines of a memory file are ever read for its header (reference: 30). */
export const FRONTMATTER_MAX_LINES = 30
/** And at most this many bytes (characters when parsing a string): a bound for files with huge lines. */
export const FRONTMATTER_MAX_BYTES = 65_536

/** What the header of one memory file says. */
export interface ParsedFrontmatter {
  readonly name: string
  readonly description: string
  readonly type: MemoryKind
  /** Keys other than name/description/type, as YAML read them (a nested `metadata:` map stays here too). */
  readonly extra: Readonly<Record<string, unknown>>
  /** Set when the header was read leniently; says what was off and on which line. */
  readonly warning?: string | undefined
  /** 1-based line of the closing `---`. */
  readonly endLine: number
}

/** `team/feedback_testing.md` → `feedback_testing`: the name of a memory whose header has none. */
export const fileStem = (path: string): string => {
  const base = path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1)
  const dot = base.lastIndexOf(".")
  return dot > 0 ? base.slice(0, dot) : base
}

const isFence = (line: string): boolean => line.startsWith("---") && line.slice(3).trim() === ""

const fail = (path: string, reason: InvalidFrontmatterError["reason"], line: number, detail: string) =>
  Result.fail(new InvalidFrontmatterError({ path, reason, line, detail }))

/** Text from a YAML value that should be text: strings as they are, numbers/booleans/dates spelled out. */
const asText = (value: unknown): string | undefined => {
  if (typeof value === "string") return value.trim()
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value)
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString()
  return undefined
}

const isMap = (value: unknown): value is YamlMap =>
  value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date) &&
  !ArrayBuffer.isView(value)

const repairWarning = (repair: YamlRepair, firstLine: number): string =>
  repair._tag === "DuplicateKey"
    ? `line ${repair.line + firstLine}: repeated key, the last value was kept`
    : `line ${repair.line + firstLine}: the value of "${repair.key}" is not valid YAML (${repair.reason}); ` +
      `read as plain text: quote it`

export interface HeaderBlock {
  /** Lines between the fences, CR stripped, joined with `\n`. */
  readonly block: string
  /** 1-based line of the closing fence. */
  readonly endLine: number
  /** Offset in the BOM-stripped text just after the closing fence line (and its newline). */
  readonly bodyOffset: number
}

/** Finds the fences in the first 30 lines; a failure for the strict ones. */
const locateHeader = (text: string, path: string): Result.Result<HeaderBlock, InvalidFrontmatterError> => {
  const head = text.length > FRONTMATTER_MAX_BYTES ? text.slice(0, FRONTMATTER_MAX_BYTES) : text
  const lines: Array<string> = []
  let start = 0
  let closing = -1
  let cutByByteBound = false
  while (lines.length < FRONTMATTER_MAX_LINES && start <= head.length) {
    const newline = head.indexOf("\n", start)
    if (newline === -1 && head.length < text.length) {
      // A line cut by the byte bound is incomplete: it can be neither a fence nor part of the header.
      cutByByteBound = true
      break
    }
    const end = newline === -1 ? head.length : newline
    const line = head.charCodeAt(end - 1) === 13 ? head.slice(start, end - 1) : head.slice(start, end)
    start = end + 1
    if (lines.length > 0 && isFence(lines[0]!) && isFence(line)) {
      closing = lines.length
      break
    }
    lines.push(line)
    if (newline === -1) break
  }
  // Binary content is judged on the lines looked at, not on a body the header never reaches.
  const examined = head.slice(0, Math.min(start, head.length))
  const nul = examined.indexOf("\0")
  if (nul !== -1) {
    const line = examined.slice(0, nul).split("\n").length
    return fail(path, "binary", line, "contains NUL bytes: not a text file")
  }
  if (!isFence(lines[0] ?? "")) return fail(path, "missing-frontmatter", 1, "the file does not start with a '---' line")
  if (closing === -1) {
    const where = cutByByteBound
      ? `the first ${FRONTMATTER_MAX_BYTES} bytes`
      : `the first ${FRONTMATTER_MAX_LINES} lines`
    return fail(path, "unclosed-frontmatter", 1, `no closing '---' line within ${where}`)
  }
  return Result.succeed({
    block: lines.slice(1).join("\n"),
    endLine: closing + 1,
    bodyOffset: Math.min(start, text.length)
  })
}

const interpret = (
  data: unknown,
  endLine: number,
  path: string,
  warnings: Array<string>
): Result.Result<ParsedFrontmatter, InvalidFrontmatterError> => {
  // An empty header is an empty map: the file is still a memory, with warnings below.
  const map = data === null || data === undefined ? {} : data
  if (!isMap(map)) {
    const kind = Array.isArray(map) ? "a list" : `a ${typeof map}`
    return fail(path, "not-a-map", 2, `the header is ${kind}, not 'key: value' lines`)
  }
  let extra: Record<string, unknown> | undefined
  for (const key in map) {
    if (key === "name" || key === "description" || key === "type" || !Object.hasOwn(map, key)) continue
    extra ??= {}
    if (key === "__proto__") {
      // Data here, never the prototype of `extra`.
      Object.defineProperty(extra, key, { value: map[key], enumerable: true, writable: true, configurable: true })
    } else {
      extra[key] = map[key]
    }
  }

  let name = asText(map.name)
  if (name === undefined || name === "") {
    name = fileStem(path)
    warnings.push(`no name: using the file name "${name}"`)
  }
  let description = asText(map.description)
  if (description === undefined || description === "") {
    description = ""
    warnings.push("no description: recall cannot judge this memory without one")
  }

  // Newer files of the reference agent put `type` under a nested `metadata:` map.
  const metadata = map.metadata
  const rawType = map.type ?? (isMap(metadata) ? metadata.type : undefined)
  const typeText = asText(rawType)?.toLowerCase()
  const known = typeText === undefined ? undefined : knownTypes.get(typeText)
  let type: MemoryKind = "untyped"
  if (known !== undefined) {
    type = known
  } else if (typeText === undefined || typeText === "") {
    warnings.push("no type: kept as untyped")
  } else {
    warnings.push(`unknown type "${typeText}": kept as untyped (use user | feedback | project | reference)`)
  }

  return Result.succeed({
    name,
    description,
    type,
    extra: extra ?? NO_EXTRA,
    warning: warnings.length === 0 ? undefined : warnings.join("; "),
    endLine
  })
}

export const stripBom = (text: string): string => text.charCodeAt(0) === 0xFEFF ? text.slice(1) : text

/** The block between the fences: the fast path when it applies, the YAML parser (with repairs) otherwise. */
export const readBlock = (
  block: string,
  endLine: number,
  path: string
): Result.Result<ParsedFrontmatter, InvalidFrontmatterError> => {
  // Line 1 is the opening fence, so line k (0-based) of the block is line k + 2 of the file.
  const firstLine = 2
  const flat = parseFlatBlock(block)
  if (flat !== undefined) return interpret(flat, endLine, path, [])
  const outcome = parseYamlBlock(block)
  if (outcome._tag === "Failed") {
    const line = Math.min(outcome.failure.line + firstLine, endLine)
    return fail(path, "yaml-error", line, `invalid YAML: ${outcome.failure.detail}`)
  }
  const warnings = outcome.repairs.map((repair) => repairWarning(repair, firstLine))
  return interpret(outcome.value, endLine, path, warnings)
}

export const parseHeader = (
  source: string,
  path: string
): Result.Result<readonly [ParsedFrontmatter, HeaderBlock], InvalidFrontmatterError> =>
  Result.flatMap(
    locateHeader(source, path),
    (header) =>
      Result.map(readBlock(header.block, header.endLine, path), (frontmatter) => [frontmatter, header] as const)
  )
