/**
 * What a listing says of the files it shows, read exactly as the scan reads them (`MemoryFs.visitHeads`, the scan's
 * head parser, the written time of `MemoryAge`): a listing that shows a page of a directory opens only the files on
 * that page, once each, instead of scanning every memory (or stat-ing every file) to describe a few hundred. A
 * file's size comes from the fstat of the open file, so a page costs one open per file and nothing else.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { MemoryKind } from "../../Memory.js"
import { type CommitTimes, writtenAt } from "../../MemoryAge.js"
import type { MemoryFs } from "../../MemoryFs.js"
import { FRONTMATTER_MAX_BYTES } from "./frontmatter.js"
import { readHead } from "./head.js"

/** A listed file: its key (relative to the scanned directory, `/`-separated) and where it is. */
export interface ListedFile {
  readonly key: string
  readonly path: string
  /** It may be a memory (the scan's candidate): its head is read and parsed. Otherwise only its size is taken. */
  readonly candidate: boolean
}

/** What a listing line says of a file: a memory's header, or (any other regular file) its size. */
export type ListedLine =
  | {
    readonly _tag: "Memory"
    readonly type: MemoryKind
    readonly description: string
    /** When it was written (epoch ms): its `modified:`, else its last commit, else its mtime. */
    readonly writtenAt: number
    /** The header's other keys (`pinned:`, …), as the scan keeps them. */
    readonly extra: Readonly<Record<string, unknown>>
  }
  | { readonly _tag: "File"; readonly size: number }

/** A buffer for `describeFiles`, one per caller: each call uses it synchronously, so calls never interleave on it. */
export const headBuffer = (): Buffer => Buffer.allocUnsafe(FRONTMATTER_MAX_BYTES + 1)

/**
 * The line of each of `files`, at its index: a candidate with a valid header is a memory, any other regular file is
 * described by its size (as the scan leaves it out of its memories). A file gone or no longer a regular file since
 * it was listed has no line (`undefined`).
 */
export const describeFiles = (
  fs: MemoryFs["Service"],
  buffer: Buffer,
  files: ReadonlyArray<ListedFile>,
  commitTimes?: CommitTimes | undefined
): Effect.Effect<ReadonlyArray<ListedLine | undefined>> =>
  Effect.gen(function*() {
    const nowMs = yield* Clock.currentTimeMillis
    const lines = new Array<ListedLine | undefined>(files.length).fill(undefined)
    yield* fs.visitHeads(files.map((file) => file.path), {
      file: (index, mtime, read, size) => {
        const { candidate, key } = files[index]!
        const parsed = candidate ? readHead(buffer, (offset, length) => read(buffer, offset, length), key) : undefined
        if (parsed === undefined || Result.isFailure(parsed)) {
          lines[index] = { _tag: "File", size }
          return
        }
        const { description, extra, type } = parsed.success
        const at = writtenAt({ extra, mtime }, nowMs, commitTimes?.(key, mtime)).at
        lines[index] = { _tag: "Memory", type, description, writtenAt: at, extra }
      },
      failed: () => undefined
    })
    return lines
  })
