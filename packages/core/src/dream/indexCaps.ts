/**
 * After a dream, memdir puts MEMORY.md back under its caps: dead pointers and duplicates dropped by `Doctor.fix`;
 * if still over, the lines of the least recently changed memories go, each listed in the report.
 */
import * as Effect from "effect/Effect"
import * as Doctor from "../Doctor.js"
import { parseIndexLine } from "../Memory.js"
import {
  countLines,
  fitsIndexCaps,
  INDEX_MAX_BYTES,
  INDEX_MAX_LINES,
  MemoryIndex,
  normalizeIndexLink,
  truncateIndex,
  utf8ByteLength
} from "../MemoryIndex.js"
import { Scanner } from "../Scanner.js"
import { UNTOUCHED_DIRS } from "./snapshot.js"

export interface IndexRepair {
  /** Lines removed, with why. */
  readonly removed: ReadonlyArray<{ readonly line: string; readonly reason: string }>
  /** Lines added or rewritten (Doctor: missing memories, shortened entries). */
  readonly written: ReadonlyArray<string>
  readonly lines: number
  readonly bytes: number
  readonly underCaps: boolean
}

/**
 * Pure: drop entry lines, least recently changed memory first (entries whose file is unknown first of all), until
 * the text fits the caps; if prose alone is over, cut it like loading does. Returns the text and what went.
 */
export const fitIndexToCaps = (
  text: string,
  mtimeOf: (file: string) => number | undefined
): { readonly text: string; readonly removed: ReadonlyArray<string> } => {
  if (fitsIndexCaps(text)) return { text, removed: [] }
  const rows = text.split("\n")
  const candidates = rows.flatMap((raw, i) => {
    const entry = parseIndexLine(raw)
    if (entry === undefined) return []
    return [{ i, mtime: mtimeOf(normalizeIndexLink(entry.file) ?? entry.file) ?? -Infinity }]
  }).sort((a, b) => a.mtime - b.mtime || b.i - a.i)
  const dropped = new Set<number>()
  let lineCount = countLines(text)
  let byteCount = utf8ByteLength(text)
  for (const candidate of candidates) {
    if (lineCount <= INDEX_MAX_LINES && byteCount <= INDEX_MAX_BYTES) break
    dropped.add(candidate.i)
    lineCount--
    byteCount -= utf8ByteLength(rows[candidate.i]!) + 1
  }
  const removed = [...dropped].sort((a, b) => a - b).map((i) => rows[i]!)
  let next = rows.filter((_, i) => !dropped.has(i)).join("\n")
  if (!fitsIndexCaps(next)) {
    const kept = truncateIndex(next).kept
    removed.push(...next.slice(kept.length).split("\n").filter((line) => line !== ""))
    next = kept
  }
  return { text: next, removed }
}

/** `Doctor.fix` (dead pointers, duplicates, long entries, missing lines), then `fitIndexToCaps` under the lock. */
export const enforceIndexCaps = Effect.fn("Dream.enforceIndexCaps")(function*(memoryDir: string) {
  const index = yield* MemoryIndex
  const scanner = yield* Scanner
  const fixed = yield* Doctor.fix(memoryDir)
  const removed: Array<{ line: string; reason: string }> = []
  const written: Array<string> = []
  for (const change of fixed.changes) {
    if (change.action === "removed-line") {
      removed.push({
        line: change.text,
        reason: change.code === "dead-link"
          ? "dead pointer"
          : change.code === "duplicate-entry"
          ? "duplicate"
          : change.code
      })
    } else written.push(change.text)
  }
  const scan = yield* scanner.scan(memoryDir, { skipDirs: [...UNTOUCHED_DIRS] })
  const mtimes = new Map(scan.memories.map((m) => [m.path, m.mtime]))
  const capped = yield* index.modify(memoryDir, (current) => {
    const fitted = fitIndexToCaps(current.text, (file) => mtimes.get(file))
    return Effect.succeed({ text: fitted.text, result: fitted })
  })
  for (const line of capped.removed) removed.push({ line, reason: "over the index caps (least recently changed)" })
  const final = yield* index.read(memoryDir)
  const repair: IndexRepair = {
    removed,
    written,
    lines: countLines(final.text),
    bytes: utf8ByteLength(final.text),
    underCaps: fitsIndexCaps(final.text)
  }
  return repair
})
