/**
 * Finds the frontmatter fences in the raw bytes of a file head, so the scanner decodes only the block between
 * them (a few hundred bytes) instead of the whole 4 KiB it read. Anything unusual (no opening fence, a fence
 * line with non-ASCII blanks, CR line ends, NUL bytes, no closing fence) is handed to the string parser
 * instead, which then sees exactly the lines it would see in the whole file.
 */
import * as Result from "effect/Result"
import type { InvalidFrontmatterError } from "../../Errors.js"
import { FRONTMATTER_MAX_LINES, type ParsedFrontmatter, parseHeader, readBlock, stripBom } from "./frontmatter.js"

export type HeadLocation =
  /** The block between the fences, as byte offsets; `endLine` is the 1-based line of the closing fence. */
  | { readonly _tag: "Block"; readonly start: number; readonly end: number; readonly endLine: number }
  /** Decode bytes `[0, end)` and let the string parser judge them. */
  | { readonly _tag: "Text"; readonly end: number }
  /** The bytes read so far cannot decide: read more. */
  | { readonly _tag: "NeedMore" }

const NEWLINE = 10
const DASH = 45
const NOT_FENCE = 0
const FENCE = 1
/** `---` followed by non-ASCII bytes: maybe Unicode blanks, which the string parser trims. */
const UNSURE = 2

const isAsciiBlank = (c: number): boolean => c === 32 || (c >= 9 && c <= 13)

const fenceKind = (head: Uint8Array, start: number, end: number): number => {
  if (end - start < 3 || head[start] !== DASH || head[start + 1] !== DASH || head[start + 2] !== DASH) return NOT_FENCE
  for (let i = start + 3; i < end; i++) {
    const c = head[i]!
    if (c >= 0x80) return UNSURE
    if (!isAsciiBlank(c)) return NOT_FENCE
  }
  return FENCE
}

const NEED_MORE: HeadLocation = { _tag: "NeedMore" }

/** End of the first 30 lines (or of all bytes, when the file ends sooner or no more can be read). */
const endOfHeaderLines = (head: Uint8Array, length: number, complete: boolean): HeadLocation => {
  let lines = 0
  for (let i = 0; i < length; i++) {
    if (head[i] === NEWLINE && ++lines === FRONTMATTER_MAX_LINES) return { _tag: "Text", end: i + 1 }
  }
  return complete ? { _tag: "Text", end: length } : NEED_MORE
}

/**
 * Where the header is in the first `length` bytes of `head` (the bytes read so far). `complete` says no more
 * bytes can be read (end of file, or the read bound reached). One pass over the header's bytes, no allocation
 * on the common path: this runs once per memory file.
 */
export const locateHead = (head: Uint8Array, length: number, complete: boolean): HeadLocation => {
  const bom = head[0] === 0xEF && head[1] === 0xBB && head[2] === 0xBF && length >= 3 ? 3 : 0
  let lines = 0
  let lineStart = bom
  let blockStart = -1
  let sawCarriageReturn = false
  for (let i = bom; i <= length; i++) {
    const c = i < length ? head[i]! : NEWLINE
    if (c === 0) return endOfHeaderLines(head, length, complete)
    if (c === 13) sawCarriageReturn = true
    if (c !== NEWLINE) continue
    if (i === length && !complete) return NEED_MORE
    lines++
    const kind = fenceKind(head, lineStart, i)
    if (kind === UNSURE) return endOfHeaderLines(head, length, complete)
    if (lines === 1) {
      if (kind !== FENCE) return endOfHeaderLines(head, length, complete)
      blockStart = i + 1
      sawCarriageReturn = false
    } else if (kind === FENCE) {
      // CR line ends are left to the string parser, which strips them line by line.
      if (sawCarriageReturn) return { _tag: "Text", end: Math.min(i + 1, length) }
      return { _tag: "Block", start: blockStart, end: Math.max(blockStart, lineStart - 1), endLine: lines }
    }
    if (lines === FRONTMATTER_MAX_LINES || i === length) return { _tag: "Text", end: Math.min(i + 1, length) }
    lineStart = i + 1
  }
  return complete ? { _tag: "Text", end: length } : NEED_MORE
}

/** The first read of each file: enough for the 30 header lines of almost every memory. */
export const FIRST_READ_BYTES = 4096

/**
 * Reads a file head through `readAt(offset, length)` (which fills `buffer` at `offset` from the same file
 * offset and returns the bytes read) until the header is located: 4 KiB first, then more (doubling) only while the
 * header is undecided, up to the buffer's size. Never `NeedMore`.
 */
export const readHeadLocation = (
  buffer: Buffer,
  readAt: (offset: number, length: number) => number
): Exclude<HeadLocation, { readonly _tag: "NeedMore" }> => {
  let requested = Math.min(FIRST_READ_BYTES, buffer.length)
  let length = readAt(0, requested)
  let atEnd = length < requested
  for (;;) {
    const location = locateHead(buffer, length, atEnd || length === buffer.length)
    if (location._tag !== "NeedMore") return location
    requested = Math.min(buffer.length - length, length)
    const read = readAt(length, requested)
    atEnd = read < requested
    length += read
  }
}

/**
 * The header of a head located by {@link readHeadLocation}: between clean fences only the block is decoded (and
 * read by the fast path when it can: internal/scan/yaml.ts), anything else is parsed from the decoded head.
 */
export const parseLocatedHead = (
  buffer: Buffer,
  location: Exclude<HeadLocation, { readonly _tag: "NeedMore" }>,
  path: string
): Result.Result<ParsedFrontmatter, InvalidFrontmatterError> =>
  location._tag === "Block"
    ? readBlock(buffer.toString("utf8", location.start, location.end), location.endLine, path)
    : Result.map(parseHeader(stripBom(buffer.toString("utf8", 0, location.end)), path), ([parsed]) => parsed)

/** Reads a file head ({@link readHeadLocation}) and parses it ({@link parseLocatedHead}). */
export const readHead = (
  buffer: Buffer,
  readAt: (offset: number, length: number) => number,
  path: string
): Result.Result<ParsedFrontmatter, InvalidFrontmatterError> =>
  parseLocatedHead(buffer, readHeadLocation(buffer, readAt), path)
