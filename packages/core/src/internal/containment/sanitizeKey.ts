/**
 * The key sanitizer of `Containment` (docs/team-memory.md, layer 1), pure string logic: what a key's characters
 * alone refuse, before any `..` is collapsed or the disk is asked.
 *
 * A key is what a caller (an agent, a teammate, a sync) names a memory with: a path relative to a root,
 * `/`-separated. Everything here fails closed: a key that merely looks like an attack is refused, because keys come
 * from models and other people and a legitimate memory never needs a percent sign that decodes to a dot or a slash.
 */
import * as Result from "effect/Result"
import { PathTraversalError } from "../../Errors.js"

export type KeyRefusal = PathTraversalError["reason"]

/**
 * Characters that look like `/` or `\` (or draw one over the previous character) but that NFKC leaves alone.
 * A file name holding one is a disguised path on screen, and some tools and file systems fold them: refused.
 */
const SLASH_LOOKALIKES: ReadonlyArray<readonly [string, string]> = [
  ["\u2215", "DIVISION SLASH"],
  ["\u2044", "FRACTION SLASH"],
  ["\u29F8", "BIG SOLIDUS"],
  ["\u29F9", "BIG REVERSE SOLIDUS"],
  ["\u2216", "SET MINUS"],
  ["\u2571", "BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT"],
  ["\u2572", "BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT"],
  ["\u27CB", "MATHEMATICAL RISING DIAGONAL"],
  ["\u27CD", "MATHEMATICAL FALLING DIAGONAL"],
  ["\u1735", "PHILIPPINE SINGLE PUNCTUATION"],
  ["\u0337", "COMBINING SHORT SOLIDUS OVERLAY"],
  ["\u0338", "COMBINING LONG SOLIDUS OVERLAY"],
  ["\u20E5", "COMBINING REVERSE SOLIDUS OVERLAY"],
  ["\u244A", "OCR DOUBLE BACKSLASH"],
  ["\uFF0F", "FULLWIDTH SOLIDUS"],
  ["\uFF3C", "FULLWIDTH REVERSE SOLIDUS"],
  ["\uFE68", "SMALL REVERSE SOLIDUS"]
]

/** Rounds of percent-decoding before we give up and refuse (real keys need at most one). */
const MAX_DECODE_ROUNDS = 8

const count = (text: string, needle: string): number => text.split(needle).length - 1

const hasDotSegment = (text: string): boolean =>
  text.split(/[/\\]/).some((segment) => segment === "." || segment === "..")

const codePointName = (char: string): string => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`

const isAbsoluteKey = (key: string): boolean =>
  key.startsWith("/") || key.startsWith("~") || key.startsWith("\\\\") || /^[A-Za-z]:/.test(key)

/**
 * Unicode tricks: a slash look-alike, an invisible format character or a control character anywhere, or an NFKC form that gains a `/`,
 * a `\`, a `..` or a dot segment the key did not have (fullwidth `．．／`, one-dot leaders `․․`, `‥`, small full stops…).
 */
const unicodeProblem = (key: string): string | undefined => {
  for (const [char, name] of SLASH_LOOKALIKES) {
    if (key.includes(char)) return `${codePointName(char)} ${name} looks like a path separator`
  }
  // invisible format characters (zero-width space, bidi overrides, BOM…): `..\u200B/` shows as `../`, and tools that
  // strip them make it one
  const invisible = /\p{Cf}/u.exec(key)
  if (invisible !== null) return `invisible ${codePointName(invisible[0])} disguises the name`
  // control characters (newline, ESC…) forge index lines and terminal output; no memory name needs one
  const control = /\p{Cc}/u.exec(key)
  if (control !== null) return `control character ${codePointName(control[0])}`
  const folded = key.normalize("NFKC")
  if (folded === key) return undefined
  const gains = count(folded, "/") > count(key, "/") ||
    count(folded, "\\") > count(key, "\\") ||
    count(folded, "..") > count(key, "..") ||
    (hasDotSegment(folded) && !hasDotSegment(key))
  return gains ? `NFKC turns it into ${JSON.stringify(folded)}` : undefined
}

/**
 * A segment of only dots and spaces other than `.` and `..` (`...`, `.. `, `. .`): Windows strips trailing dots and
 * spaces, so such a name can mean the current or the parent directory there. No memory needs one.
 */
const hasDotsOnlySegment = (key: string): boolean =>
  key.split("/").some((segment) => /^[. ]+$/.test(segment) && segment !== "." && segment !== "..")

/** The layer-1 checks that need no decoding, in order; the first that refuses names the reason. */
const plainProblem = (key: string): { readonly reason: KeyRefusal; readonly detail: string } | undefined => {
  if (key.includes("\0")) return { reason: "null-byte", detail: "contains a NUL character" }
  if (isAbsoluteKey(key)) return { reason: "absolute", detail: "absolute, home, drive or UNC path" }
  if (key.includes("\\")) return { reason: "backslash", detail: "contains a backslash" }
  const unicode = unicodeProblem(key)
  if (unicode !== undefined) return { reason: "unicode-traversal", detail: unicode }
  if (hasDotsOnlySegment(key)) {
    return { reason: "escapes-root", detail: "a segment of only dots and spaces is a parent directory on Windows" }
  }
  return undefined
}

const hexValue = (text: string, at: number, digits: number): number | undefined => {
  const chunk = text.slice(at, at + digits)
  return chunk.length === digits && /^[0-9A-Fa-f]+$/.test(chunk) ? Number.parseInt(chunk, 16) : undefined
}

/** Byte count of a UTF-8 sequence by its lead byte, including the 5- and 6-byte forms of the original UTF-8. */
const sequenceLength = (lead: number): number =>
  lead < 0x80
    ? 1
    : lead < 0xC0
    ? 0
    : lead < 0xE0
    ? 2
    : lead < 0xF0
    ? 3
    : lead < 0xF8
    ? 4
    : lead < 0xFC
    ? 5
    : lead < 0xFE
    ? 6
    : 0

/**
 * UTF-8 as a careless decoder reads it: overlong forms are accepted (`C0 AE`, `E0 80 AE`, `F0 80 80 AE`, even the
 * 5- and 6-byte `F8…`/`FC…` forms are `.`; `C0 AF` is `/`), and after the always-overlong leads `C0`/`C1` any byte
 * counts as a continuation (old IIS read `C1 1C` as `\`), because that is exactly what the attack counts on
 * somewhere down the line. Bytes that form no character stay as their `%XX` text, so decoding reaches a fixed point.
 */
const decodeBytesLeniently = (bytes: ReadonlyArray<number>): string => {
  let out = ""
  let i = 0
  const literal = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`
  while (i < bytes.length) {
    const lead = bytes[i]!
    const length = sequenceLength(lead)
    const continuation = bytes.slice(i + 1, i + length)
    const sloppyLead = lead === 0xC0 || lead === 0xC1
    if (
      length === 0 || continuation.length !== length - 1 ||
      (!sloppyLead && continuation.some((b) => (b & 0xC0) !== 0x80))
    ) {
      out += literal(lead)
      i += 1
      continue
    }
    const initial = length === 1 ? lead : lead & (0xFF >> (length + 1))
    // multiplication, not <<: a 6-byte sequence carries 31 bits
    const codePoint = continuation.reduce((acc, b) => acc * 64 + (b & 0x3F), initial)
    if (codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF)) {
      out += literal(lead)
      i += 1
      continue
    }
    out += String.fromCodePoint(codePoint)
    i += length
  }
  return out
}

/** One round of percent-decoding: `%XX` runs (lenient UTF-8) and IIS-style `%uXXXX`. */
export const percentDecodeOnce = (text: string): string => {
  let out = ""
  let i = 0
  while (i < text.length) {
    if (text[i] !== "%") {
      out += text[i]
      i += 1
      continue
    }
    if (text[i + 1] === "u" || text[i + 1] === "U") {
      const unit = hexValue(text, i + 2, 4)
      if (unit !== undefined) {
        out += String.fromCharCode(unit)
        i += 6
        continue
      }
    }
    const bytes: Array<number> = []
    let j = i
    while (text[j] === "%") {
      const byte = hexValue(text, j + 1, 2)
      if (byte === undefined) break
      bytes.push(byte)
      j += 3
    }
    if (bytes.length === 0) {
      out += "%"
      i += 1
      continue
    }
    out += decodeBytesLeniently(bytes)
    i = j
  }
  return out
}

/** Percent-decodes until nothing changes; `undefined` when it is still changing after `MAX_DECODE_ROUNDS`. */
export const percentDecodeFully = (text: string): string | undefined => {
  let current = text
  for (let round = 0; round < MAX_DECODE_ROUNDS; round++) {
    const next = percentDecodeOnce(current)
    if (next === current) return current
    current = next
  }
  return undefined
}

/**
 * Layer 1: refuses null bytes, absolute/home/drive/UNC paths, backslashes, Unicode look-alikes and whatever
 * becomes one of those (or a `.`/`..` segment, or an extra `/`) once percent-decoded, however many times.
 */
export const sanitizeKey = (key: string): Result.Result<string, PathTraversalError> => {
  const refuse = (reason: KeyRefusal, detail: string) => Result.fail(new PathTraversalError({ key, reason, detail }))
  const plain = plainProblem(key)
  if (plain !== undefined) return refuse(plain.reason, plain.detail)
  if (!key.includes("%")) return Result.succeed(key)
  const decoded = percentDecodeFully(key)
  if (decoded === undefined) return refuse("encoded-traversal", `still changing after ${MAX_DECODE_ROUNDS} decodings`)
  if (decoded === key) return Result.succeed(key)
  const hidden = plainProblem(decoded)
  if (hidden !== undefined) {
    return refuse("encoded-traversal", `decodes to ${JSON.stringify(decoded)}: ${hidden.detail}`)
  }
  if (hasDotSegment(decoded)) return refuse("encoded-traversal", `decodes to ${JSON.stringify(decoded)}`)
  if (count(decoded, "/") > count(key, "/")) {
    return refuse("encoded-traversal", `decodes to ${JSON.stringify(decoded)}: an encoded separator`)
  }
  return Result.succeed(key)
}
