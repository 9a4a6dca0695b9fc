/**
 * Pins: the few memories marked `pinned: true` (top-level, or `metadata.pinned` as the reference agent writes it)
 * that the memory prompt loads in full beside the index (docs/file-format.md#pinned-memories).
 *
 * At most `MAX_PINNED` (reference: 4), newest first; each body capped like a recalled one and all of them within
 * `PINNED_MAX_BYTES`, so pins never crowd out the index. More pins than that are reported by `doctor`.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { parseMemoryFile } from "./Frontmatter.js"
import { type MemoryHeader, type MemoryKind, TEAM_DIR } from "./Memory.js"
import { writtenAtOf } from "./MemoryAge.js"
import { MemoryStore } from "./MemoryStore.js"
import { capBody } from "./Recall.js"
import { Scanner } from "./Scanner.js"
import { Staleness } from "./Staleness.js"

/** The reference's limit. */
export const MAX_PINNED = 4
/** Each pinned body, as a recalled one: 200 lines / 4 KiB. */
export const PINNED_MAX_LINES = 200
export const PINNED_MAX_BYTES_EACH = 4096
/** All pinned bodies together (the index itself may take 25 KB). */
export const PINNED_MAX_BYTES = 12_288

const isMap = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date)

const truthy = (value: unknown): boolean => value === true || (typeof value === "string" && value.trim() === "true")

/** `pinned: true` at the top level or under `metadata:`. */
export const isPinned = (extra: Readonly<Record<string, unknown>>): boolean =>
  truthy(extra.pinned) || (isMap(extra.metadata) && truthy(extra.metadata.pinned))

/** The pinned memories of a scan, newest first (all of them: the caller takes `MAX_PINNED`). */
export const pinnedOf = (memories: ReadonlyArray<MemoryHeader>): Array<MemoryHeader> =>
  memories.filter((m) => isPinned(m.extra)).sort((a, b) => writtenAtOf(b) - writtenAtOf(a))

export interface PinnedMemory {
  readonly path: string
  readonly name: string
  readonly type: MemoryKind
  readonly description: string
  readonly ageDays: number
  readonly age: string
  readonly caveat: string | null
  readonly content: string
  readonly truncated: boolean
}

export interface LoadedPins {
  readonly pinned: ReadonlyArray<PinnedMemory>
  /** Pinned memories left out: beyond `MAX_PINNED`, or past the byte budget. */
  readonly leftOut: ReadonlyArray<string>
}

const utf8 = new TextEncoder()

/** The pinned private memories of `memoryDir`, read through the store, within the limits above. */
export const loadPinned = Effect.fn("Pins.loadPinned")(function*(memoryDir: string) {
  const scanner = yield* Scanner
  const store = yield* MemoryStore
  const staleness = yield* Staleness
  const scan = yield* scanner.scan(memoryDir, { skipDirs: [TEAM_DIR, "logs"] })
  const candidates = pinnedOf(scan.memories)
  const pinned: Array<PinnedMemory> = []
  const leftOut: Array<string> = candidates.slice(MAX_PINNED).map((m) => m.path)
  let used = 0
  for (const memory of candidates.slice(0, MAX_PINNED)) {
    const head = yield* Effect.result(store.readHead({ memoryDir }, memory.path, 64 * 1024 + PINNED_MAX_BYTES_EACH))
    // Gone or unreadable since the scan: left out (doctor and ls report why).
    if (Result.isFailure(head)) {
      leftOut.push(memory.path)
      continue
    }
    const parsed = parseMemoryFile(head.success.text, memory.path)
    if (Result.isFailure(parsed)) {
      leftOut.push(memory.path)
      continue
    }
    const body = parsed.success.body.replace(/\r\n/g, "\n")
    const capped = capBody(body, {
      absolutePath: memory.absolutePath,
      firstLine: head.success.text.slice(0, head.success.text.length - parsed.success.body.length).split("\n").length,
      maxLines: PINNED_MAX_LINES,
      maxBytes: PINNED_MAX_BYTES_EACH,
      moreAfter: head.success.truncated
    })
    const bytes = utf8.encode(capped.content).length
    if (used + bytes > PINNED_MAX_BYTES) {
      leftOut.push(memory.path)
      continue
    }
    used += bytes
    const age = yield* staleness.age(writtenAtOf(memory))
    pinned.push({
      path: memory.path,
      name: memory.name,
      type: memory.type,
      description: memory.description,
      ...age,
      content: capped.content,
      truncated: capped.truncated
    })
  }
  const loaded: LoadedPins = { pinned, leftOut }
  return loaded
})

/** The pinned memories as prompt text: each with its path, type, age and caveat, then its body. */
export const renderPinned = (pinned: ReadonlyArray<PinnedMemory>): string =>
  pinned.map((m) => {
    const caveat = m.caveat === null ? "" : `\n${m.caveat}`
    return `### ${m.name} (${m.path}, ${m.type}, saved ${m.age})${caveat}\n\n${m.content.replace(/\n+$/, "")}`
  }).join("\n\n")
