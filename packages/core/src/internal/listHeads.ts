/**
 * The headers of the files a listing shows, read exactly as the scan reads them (`MemoryFs.visitHeads`, the scan's
 * head parser, the written time of `MemoryAge`), so a listing that shows a page of a directory opens only the files
 * on that page instead of scanning every memory to describe a few hundred.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { MemoryKind } from "../Memory.js"
import { type CommitTimes, writtenAt } from "../MemoryAge.js"
import type { MemoryFs } from "../MemoryFs.js"
import { FRONTMATTER_MAX_BYTES } from "./scanFrontmatter.js"
import { readHead } from "./scanHead.js"

/** A listed file: its key (relative to the scanned directory, `/`-separated) and where it is. */
export interface ListedFile {
  readonly key: string
  readonly path: string
}

/** What a listing line says of a memory. */
export interface ListedHeader {
  readonly type: MemoryKind
  readonly description: string
  /** When it was written (epoch ms): its `modified:`, else its last commit, else its mtime. */
  readonly writtenAt: number
}

/** A buffer for `headersOf`, one per caller: each call uses it synchronously, so calls never interleave on it. */
export const headBuffer = (): Buffer => Buffer.allocUnsafe(FRONTMATTER_MAX_BYTES + 1)

/**
 * The headers of `files` that are valid memories, by key. A file that is gone, not a regular file or has no valid
 * header is left out (the listing shows it by its size), as the scan leaves it out of its memories.
 */
export const headersOf = (
  fs: MemoryFs["Type"],
  buffer: Buffer,
  files: ReadonlyArray<ListedFile>,
  commitTimes?: CommitTimes | undefined
): Effect.Effect<ReadonlyMap<string, ListedHeader>> =>
  Effect.gen(function*() {
    const nowMs = yield* Clock.currentTimeMillis
    const headers = new Map<string, ListedHeader>()
    yield* fs.visitHeads(files.map((file) => file.path), {
      file: (index, mtime, read) => {
        const key = files[index]!.key
        const parsed = readHead(buffer, (offset, length) => read(buffer, offset, length), key)
        if (Either.isLeft(parsed)) return
        const { description, extra, type } = parsed.right
        const at = writtenAt({ extra, mtime }, nowMs, commitTimes?.(key, mtime)).at
        headers.set(key, { type, description, writtenAt: at })
      },
      failed: () => undefined
    })
    return headers
  })
