/**
 * What the selector gets from the bytes the scan already read, beyond the header: the first lines of the body
 * (up to line 30 of the file, at most BODY_HEAD_MAX_BYTES), and for a file whose header cannot be read a stand-in
 * header made from its file name and first lines. Never reads anything itself.
 */
import type { MemoryHeader, ScanProblem } from "../../Memory.js"
import { fileStem, FRONTMATTER_MAX_LINES } from "./frontmatter.js"

/** Enough for the "Why / How to apply" lines of a typical memory; bounds the decoding work per file. */
const BODY_HEAD_MAX_BYTES = 1024

const NEWLINE = 10

const isAsciiBlank = (c: number): boolean => c === 32 || (c >= 9 && c <= 13)

/** A byte range `[start, end)`, filled in by {@link bodyHeadRange} (one per scan, reused: no object per file). */
interface ByteRange {
  start: number
  end: number
}

/**
 * Where the body head is in the first `length` bytes of `head`: the bytes after line `afterLine` (1-based; 0 for
 * the whole head) up to the end of line 30, at most BODY_HEAD_MAX_BYTES, cut back to a whole UTF-8 character, ASCII
 * blanks trimmed. Lines are found with `indexOf` (native): this runs once per memory file.
 */
const bodyHeadRange = (head: Buffer, length: number, afterLine: number, range: ByteRange): ByteRange => {
  let start = 0
  for (let line = 0; line < afterLine; line++) {
    const newline = head.indexOf(NEWLINE, start)
    if (newline === -1 || newline >= length) {
      start = length
      break
    }
    start = newline + 1
  }
  const limit = Math.min(length, start + BODY_HEAD_MAX_BYTES)
  let end = limit
  // Line 30 ends the head; a header that closes on line 30 or later leaves up to the byte bound.
  for (let line = afterLine, from = start; line < FRONTMATTER_MAX_LINES;) {
    const newline = head.indexOf(NEWLINE, from)
    if (newline === -1 || newline >= limit) break
    if (++line === FRONTMATTER_MAX_LINES) end = newline
    from = newline + 1
  }
  // Never split a multi-byte character: back off continuation bytes (10xxxxxx) and the lead byte they follow.
  if (end === limit && end < length) {
    let cut = end
    while (cut > start && (head[cut]! & 0xC0) === 0x80) cut--
    end = cut
  }
  // ASCII blanks are trimmed before decoding (they are never part of a multi-byte character); `trim` then takes
  // any other white space, as it always did.
  while (start < end && isAsciiBlank(head[start]!)) start++
  while (end > start && isAsciiBlank(head[end - 1]!)) end--
  range.start = start
  range.end = Math.max(start, end)
  return range
}

/** The decoded body head of a range {@link bodyHeadRange} found: trimmed of any other white space too. */
const decodeBodyHead = (bytes: Buffer, start: number, end: number): string =>
  end <= start ? "" : bytes.toString("utf8", start, end).trim()

/**
 * The text after line `afterLine` (1-based; 0 for the whole head) up to the end of line 30, of the first `length`
 * bytes of `head`, at most BODY_HEAD_MAX_BYTES and cut back to a whole UTF-8 character. Trimmed. Only the bytes
 * kept are decoded.
 */
export const bodyHeadOf = (head: Buffer, length: number, afterLine: number): string => {
  const range = bodyHeadRange(head, length, afterLine, { start: 0, end: 0 })
  return decodeBodyHead(head, range.start, range.end)
}

/** Problems that still leave a text file the selector can read (not binary, not unreadable). */
const TEXT_PROBLEMS: ReadonlySet<string> = new Set([
  "missing-frontmatter",
  "unclosed-frontmatter",
  "yaml-error",
  "not-a-map"
])

/**
 * A memory whose header could not be read, as the selector still sees it: named after its file, described by its
 * first non-empty line (a Markdown heading's text), with the next lines as its body head. `undefined` for problems
 * that leave no text (binary content) or a head with no text at all.
 */
export const headerlessMemory = (
  problem: Pick<ScanProblem, "code" | "message">,
  relativePath: string,
  absolutePath: string,
  mtime: number,
  text: string
): MemoryHeader | undefined => {
  if (!TEXT_PROBLEMS.has(problem.code)) return undefined
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  const first = lines.findIndex((line) => line.trim().length > 0 && !/^-{3,}\s*$/.test(line))
  if (first === -1) return undefined
  return {
    path: relativePath,
    absolutePath,
    name: fileStem(relativePath),
    description: lines[first]!.replace(/^\s*#+\s*/, "").trim(),
    type: "untyped",
    mtime,
    extra: {},
    warning: `${problem.message} Offered to recall by its file name and first lines only.`,
    bodyHead: lines.slice(first + 1).join("\n").trim(),
    headerless: true
  }
}
