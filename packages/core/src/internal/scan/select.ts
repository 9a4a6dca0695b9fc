/**
 * Which files a capped scan reads: the newest `count` of a listing by mtime, picked with a bounded heap (one pass,
 * O(n log count), no sort of the whole listing), and the loop that reads heads newest first until enough of them
 * are memories. No I/O of its own: the live scanner and the in-memory one (and any other file access) call the same
 * code, handing it the listing and the reads as effects.
 */
import * as Effect from "effect/Effect"

/** What the selection orders by: the mtime, then the relative path, so the order is total and deterministic. */
export interface Dated {
  readonly path: string
  readonly mtime: number
}

/** Whether `a` comes before `b` newest first (newer mtime; equal mtimes in path order). */
export const isNewer = (a: Dated, b: Dated): boolean => a.mtime > b.mtime || (a.mtime === b.mtime && a.path < b.path)

export interface NewestSelection<A extends Dated> {
  /** Keeps `item` if it is among the newest `capacity` offered so far (and older than the boundary). */
  readonly offer: (item: A) => void
  /** Whether an item with this mtime and path would be kept if offered now: a caller builds the item only then. */
  readonly admits: (mtime: number, path: string) => boolean
  /** The kept items, newest first. */
  readonly take: () => Array<A>
}

/**
 * A bounded min-heap of the newest `capacity` items offered. With `olderThan`, only items that come after it
 * newest first are kept: the next page of a selection that already handed out everything up to `olderThan`.
 */
export const newestSelection = <A extends Dated>(capacity: number, olderThan?: Dated): NewestSelection<A> => {
  // heap[0] is the oldest kept item: the one a newer offer replaces.
  const heap: Array<A> = []
  const siftUp = (start: number) => {
    let i = start
    const item = heap[i]!
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!isNewer(heap[parent]!, item)) break
      heap[i] = heap[parent]!
      i = parent
    }
    heap[i] = item
  }
  const siftDown = () => {
    const item = heap[0]!
    const size = heap.length
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= size) break
      const right = left + 1
      const older = right < size && isNewer(heap[left]!, heap[right]!) ? right : left
      if (!isNewer(item, heap[older]!)) break
      heap[i] = heap[older]!
      i = older
    }
    heap[i] = item
  }
  const admits = (mtime: number, path: string): boolean => {
    if (capacity <= 0) return false
    if (olderThan !== undefined && !(olderThan.mtime > mtime || (olderThan.mtime === mtime && olderThan.path < path))) {
      return false
    }
    if (heap.length < capacity) return true
    const oldest = heap[0]!
    return mtime > oldest.mtime || (mtime === oldest.mtime && path < oldest.path)
  }
  const offer = (item: A): void => {
    if (capacity <= 0 || (olderThan !== undefined && !isNewer(olderThan, item))) return
    if (heap.length < capacity) {
      heap.push(item)
      siftUp(heap.length - 1)
    } else if (isNewer(item, heap[0]!)) {
      heap[0] = item
      siftDown()
    }
  }
  const take = (): Array<A> => heap.slice().sort((a, b) => (isNewer(a, b) ? -1 : isNewer(b, a) ? 1 : 0))
  return { offer, admits, take }
}

/** The newest `count` of `items`, newest first (after `olderThan`, when given). */
export const newest = <A extends Dated>(items: Iterable<A>, count: number, olderThan?: Dated): Array<A> => {
  const selection = newestSelection<A>(count, olderThan)
  for (const item of items) selection.offer(item)
  return selection.take()
}

/** What reading one selected head gave. */
export type HeadKind =
  /** A memory with a valid header. */
  | "memory"
  /** A text file without a readable header: a problem, and offered to the selector by its first lines. */
  | "headerless"
  /** A problem that offers nothing (binary, unreadable), or a file gone since the listing. */
  | "none"

/**
 * How many heads past the `limit`-th memory a capped scan still reads while it holds fewer than `limit` headerless
 * files: a headerless file a little older than the newest memories is still offered, at a bounded cost.
 */
export const headerlessLookahead = (limit: number): number => Math.ceil(limit / 8)

/**
 * Reads heads newest first until `limit` of them are memories; a head that is not a valid memory does not count,
 * so each one makes the scan read one further. Then at most `headerlessLookahead(limit)` more heads while fewer
 * than `limit` headerless files were found, within the page already selected. `select(count, olderThan)` is the
 * listing's next page: the newest `count` after `olderThan` (all of them when fewer). The first page has room for
 * the look-ahead and a quarter more bad heads; only when that is not enough is a next page selected (a new
 * listing, for the live scanner), and pages double in size, so a directory full of bad heads costs a few
 * listings, not one per file.
 *
 * `readMany` reads several heads at once (one batch of the live scanner's): only as many as the loop is sure to
 * read one by one (each head adds at most one memory, one headerless file and one look-ahead read), so the heads
 * read are exactly those a read per head would read, in the same order.
 */
export const readNewestBatched = <A extends Dated, R>(
  limit: number,
  select: (count: number, olderThan: A | undefined) => Effect.Effect<ReadonlyArray<A>, never, R>,
  readMany: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<HeadKind>, never, R>
): Effect.Effect<void, never, R> =>
  Effect.gen(function*() {
    if (limit <= 0) return
    const lookahead = headerlessLookahead(limit)
    let memories = 0
    let headerless = 0
    let extra = 0
    const done = () => memories >= limit && (headerless >= limit || extra >= lookahead)
    /** Heads that will be read before `done` can hold (at least one while it does not). */
    const surelyRead = () => memories < limit ? limit - memories : Math.min(lookahead - extra, limit - headerless)
    let capacity = limit + lookahead + Math.ceil(limit / 4)
    let olderThan: A | undefined = undefined
    for (;;) {
      const page: ReadonlyArray<A> = yield* select(capacity, olderThan)
      let next = 0
      while (next < page.length && !done()) {
        const chunk = page.slice(next, next + surelyRead())
        next += chunk.length
        for (const kind of yield* readMany(chunk)) {
          if (memories >= limit) extra++
          if (kind === "memory") memories++
          else if (kind === "headerless") headerless++
        }
      }
      // The look-ahead alone never costs another page.
      if (done() || page.length < capacity || memories >= limit) return
      olderThan = page[page.length - 1]
      capacity *= 2
    }
  })

/** `readNewestBatched` reading one head at a time. */
export const readNewest = <A extends Dated, R>(
  limit: number,
  select: (count: number, olderThan: A | undefined) => Effect.Effect<ReadonlyArray<A>, never, R>,
  read: (item: A) => Effect.Effect<HeadKind, never, R>
): Effect.Effect<void, never, R> => readNewestBatched(limit, select, (items) => Effect.forEach(items, read))
