/**
 * The simple memory header, read from the raw bytes of a file head without a YAML parser or an intermediate map:
 * `key: value` lines only (no indentation, no blank lines), every value plain text that YAML reads as exactly
 * that text, with `name`, `description` and a known `type` among them and every key once. Nearly every memory
 * file has exactly this header.
 *
 * Two steps, so the scanner decodes nothing per file: `findSimpleHeader` checks the block's structure on the
 * bytes while the file is open and notes where each key and value is; `buildSimpleHeader` makes the header from
 * the decoded text once the batch's text exists, after the checks that need it (numbers, dates, reserved words).
 * Anything else (quotes, nesting, comments, a missing or unknown key, …) is refused by one or the other, and the
 * caller reads the block the general way (`readBlock`); a property test checks that on every block both steps
 * accept they give what the general way gives.
 */
import type { MemoryType } from "../Memory.js"
import type { ParsedFrontmatter } from "./scanFrontmatter.js"
import { mayReadAsNumberOrDate } from "./scanYaml.js"

/** Each known type by its text: a header keeps the one shared string, not its own copy. */
export const knownTypes: ReadonlyMap<string, MemoryType> = new Map(
  (["user", "feedback", "project", "reference"] as const).map((type) => [type, type])
)

/**
 * The `extra` of every header without other keys: one frozen empty map (a scan keeps thousands of headers, and
 * `extra` is read-only to everyone).
 */
export const NO_EXTRA: Readonly<Record<string, unknown>> = Object.freeze({})

const NEWLINE = 10
const SPACE = 32
const HASH = 35
const COLON = 58

/** Keys longer than this are left to the general reader (YAML limits implicit keys). */
const MAX_KEY_LENGTH = 64

/** ASCII classes: a key's first character, a key's other characters, a plain value's first character. */
const KEY_START = 1
const KEY_PART = 2
const VALUE_START = 4
const ASCII_CLASS = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  if (/[A-Za-z_]/.test(ch)) ASCII_CLASS[c]! |= KEY_START
  if (/[A-Za-z0-9_-]/.test(ch)) ASCII_CLASS[c]! |= KEY_PART
  // Not a space or control, not a YAML indicator.
  if (c > 32 && c < 127 && !"-?:,[]{}#&*!|>'\"%@`".includes(ch)) ASCII_CLASS[c]! |= VALUE_START
}

/**
 * Whether the UTF-8 bytes at `i` (a byte >= 0x80) start a character YAML keeps as it is in plain text: not a C1
 * control (NEL among them), a line or paragraph separator, a BOM, a non-character or an encoded surrogate.
 */
const isPlainWideAt = (bytes: Uint8Array, i: number, end: number): boolean => {
  const lead = bytes[i]!
  const next = i + 1 < end ? bytes[i + 1]! : 0
  const third = i + 2 < end ? bytes[i + 2]! : 0
  if (lead === 0xC2) return next < 0x80 || next > 0x9F
  if (lead === 0xE2) return !(next === 0x80 && (third === 0xA8 || third === 0xA9))
  if (lead === 0xED) return next < 0xA0
  if (lead === 0xEF) return !(next === 0xBB && third === 0xBF) && !(next === 0xBF && (third === 0xBE || third === 0xBF))
  return true
}

/**
 * The end of the plain value starting at `start` (at its line's newline or the block's end), or -1 when it is not
 * a value this reader accepts: a `: ` or ` #` inside, a trailing space or colon, a control character.
 */
const plainValueEnd = (bytes: Uint8Array, start: number, end: number): number => {
  if (start >= end) return -1
  const first = bytes[start]!
  if (first < 128 ? (ASCII_CLASS[first]! & VALUE_START) === 0 : first < 0xC2 || first > 0xF4) return -1
  let previous = 0
  let i = start
  for (; i < end; i++) {
    const c = bytes[i]!
    if (c === NEWLINE) break
    if (c < 128) {
      if (c < 32 || c === 127) return -1
      if ((c === HASH && previous === SPACE) || (c === SPACE && previous === COLON)) return -1
    } else if (c >= 0xC2 && !isPlainWideAt(bytes, i, end)) {
      return -1
    }
    previous = c
  }
  return previous === SPACE || previous === COLON ? -1 : i
}

/** Which of name, description and type a key is (by its bytes), or OTHER_KEY. */
const NAME = 0
const DESCRIPTION = 1
const TYPE = 2
const OTHER_KEY = 3

const isKey = (bytes: Uint8Array, start: number, end: number, key: string): boolean => {
  if (end - start !== key.length) return false
  for (let i = 0; i < key.length; i++) if (bytes[start + i] !== key.charCodeAt(i)) return false
  return true
}

const keyKind = (bytes: Uint8Array, start: number, end: number): number =>
  isKey(bytes, start, end, "name")
    ? NAME
    : isKey(bytes, start, end, "description")
    ? DESCRIPTION
    : isKey(bytes, start, end, "type")
    ? TYPE
    : OTHER_KEY

/**
 * Where a simple header's parts are, in `out` (appended, offsets as in `bytes`): name start and end, description
 * start and end, type start and end, the count of other keys, then key start, key end, value start and value end
 * of each. `false` (and `out` as it was) when the block `bytes[start, end)` is not simple by its structure.
 */
export const findSimpleHeader = (bytes: Uint8Array, start: number, end: number, out: Array<number>): boolean => {
  if (start >= end || bytes[end - 1] === NEWLINE) return false
  const at = out.length
  out.push(-1, -1, -1, -1, -1, -1, 0)
  let i = start
  while (i < end) {
    const keyStart = i
    let c = bytes[i]!
    if (c >= 128 || (ASCII_CLASS[c]! & KEY_START) === 0) break
    for (i++; i < end && (c = bytes[i]!) < 128 && (ASCII_CLASS[c]! & KEY_PART) !== 0; i++);
    const keyEnd = i
    if (i >= end || keyEnd - keyStart > MAX_KEY_LENGTH || c !== COLON || bytes[i + 1] !== SPACE) break
    for (i += 2; i < end && bytes[i] === SPACE; i++);
    const valueStart = i
    const valueEnd = plainValueEnd(bytes, valueStart, end)
    if (valueEnd === -1) break
    i = valueEnd + 1
    const kind = keyKind(bytes, keyStart, keyEnd)
    if (kind !== OTHER_KEY) {
      const slot = at + 2 * kind
      if (out[slot] !== -1) break
      out[slot] = valueStart
      out[slot + 1] = valueEnd
    } else {
      out[at + 6]!++
      out.push(keyStart, keyEnd, valueStart, valueEnd)
    }
    if (i >= end) {
      if (out[at] !== -1 && out[at + 2] !== -1 && out[at + 4] !== -1) return true
      break
    }
  }
  out.length = at
  return false
}

/** Plain words YAML reads as null or a boolean, as keys or values. */
const RESERVED_WORDS: ReadonlySet<string> = new Set([
  "null",
  "Null",
  "NULL",
  "true",
  "True",
  "TRUE",
  "false",
  "False",
  "FALSE"
])

/** Keys of other agents' headers, kept as these very strings (no new string per header). */
const SHARED_KEYS: ReadonlyMap<string, string> = new Map(
  ["originSessionId", "modified", "metadata", "node_type", "tags"].map((key) => [key, key])
)

/** A first character of a value that may start a number, a date or null (`~`): the value is then checked whole. */
const mayStartNumber = (c: number): boolean => (c >= 48 && c <= 57) || c === 43 || c === 46 || c === 126

/** Whether YAML reads a plain value as this very text (not null, a boolean, a number or a date). */
const isText = (value: string): boolean =>
  !(value.length <= 5 && RESERVED_WORDS.has(value)) &&
  !(mayStartNumber(value.charCodeAt(0)) && mayReadAsNumberOrDate(value))

/**
 * The header `findSimpleHeader` found (its parts from `out[at…]`), with `text(start, end)` the decoded text of the
 * same bytes; `undefined` when a value is not plain text to YAML or name or description is blank, or the type
 * unknown (the general reader then says what is off).
 */
export const buildSimpleHeader = (
  out: ReadonlyArray<number>,
  at: number,
  text: (start: number, end: number) => string,
  endLine: number
): ParsedFrontmatter | undefined => {
  const rawName = text(out[at]!, out[at + 1]!)
  const rawDescription = text(out[at + 2]!, out[at + 3]!)
  const rawType = text(out[at + 4]!, out[at + 5]!)
  if (!isText(rawName) || !isText(rawDescription) || !isText(rawType)) return undefined
  const type = knownTypes.get(rawType.trim().toLowerCase())
  // As the general reader: surrounding white space is not part of a name or description (Unicode blanks included).
  const name = rawName.trim()
  const description = rawDescription.trim()
  if (type === undefined || name === "" || description === "") return undefined
  let extra: Record<string, unknown> | undefined
  for (let k = 0, p = at + 7; k < out[at + 6]!; k++, p += 4) {
    const rawKey = text(out[p]!, out[p + 1]!)
    const key = SHARED_KEYS.get(rawKey) ?? rawKey
    const value = text(out[p + 2]!, out[p + 3]!)
    if (key === "__proto__" || RESERVED_WORDS.has(key) || !isText(value)) return undefined
    extra ??= {}
    if (Object.hasOwn(extra, key)) return undefined
    extra[key] = value
  }
  return { name, description, type, extra: extra ?? NO_EXTRA, warning: undefined, endLine }
}
