/**
 * The text a scan keeps of a batch of files, decoded at once: each file's head (up to the end of its body head) is
 * copied, as bytes, into one buffer while its file is open; when the batch is read the buffer is decoded into a
 * few strings of about 60 KiB, and every header's strings (name, description, other values, body head) are slices
 * of them.
 *
 * Why: a full scan keeps every header it reads, and each kept string is one more object the garbage collector
 * visits and copies while the scan runs; a few strings per batch instead of several per file, and one decode per
 * segment instead of one per string, measured as a few percent of a 20k scan (bench/scan-floor.bench.ts). A kept
 * slice keeps its segment alive: a caller that holds one header of a large scan for long holds ~60 KiB.
 *
 * Only ASCII bytes are sliced (a byte is a character there); a range with other bytes is decoded on its own as
 * UTF-8, exactly as it would be without the arena.
 */
import { isAscii } from "node:buffer"

/** Enough for a batch of typical memories (a few hundred bytes of header and up to 1 KiB of body each). */
const INITIAL_BYTES = 256 * 1024

export interface TextArena {
  /** Copies `source[start, end)` in; returns where it starts in the arena. */
  readonly add: (source: Buffer, start: number, end: number) => number
  /** Decodes what was added since the last `reset`: call once, after the batch's `add`s, before `text`. */
  readonly seal: () => void
  /** The text of arena bytes `[start, end)` (after `seal`). */
  readonly text: (start: number, end: number) => string
  /** The arena's bytes `[start, end)` (after `seal`, before `reset`), as a view: for the rare file read again. */
  readonly bytes: (start: number, end: number) => Buffer
  /** Empties the arena for the next batch (the strings already handed out stay valid). */
  readonly reset: () => void
}

/**
 * The decoded text is cut into strings of about this many characters (a new one starts at the first `add` past it):
 * big enough that a batch is a few strings, small enough that each is an ordinary young-generation allocation (a
 * string of more than 128 KiB is a large object, mapped afresh each time: as costly to make as the copies it saves).
 */
const SEGMENT_BYTES = 60 * 1024

/** One arena per scan (a batch uses it synchronously, start to end; concurrent scans have their own). */
export const makeTextArena = (): TextArena => {
  let buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES)
  let used = 0
  // Segment k is arena bytes [starts[k], starts[k + 1]) (the last one up to `used`), decoded as texts[k].
  const starts: Array<number> = [0]
  const texts: Array<string> = []
  const ascii: Array<boolean> = []
  const add = (source: Buffer, start: number, end: number): number => {
    const at = used
    if (at - starts[starts.length - 1]! >= SEGMENT_BYTES) starts.push(at)
    const needed = used + end - start
    if (needed > buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, buffer.length * 2))
      buffer.copy(grown, 0, 0, used)
      buffer = grown
    }
    source.copy(buffer, at, start, end)
    used = needed
    return at
  }
  const seal = () => {
    for (let k = 0; k < starts.length; k++) {
      const end = k + 1 < starts.length ? starts[k + 1]! : used
      const segment = buffer.subarray(starts[k]!, end)
      ascii.push(isAscii(segment))
      texts.push(segment.toString("latin1"))
    }
  }
  /** The segment holding arena offset `at` (the last one starting at or before it). */
  const segmentOf = (at: number): number => {
    let low = 0
    let high = starts.length - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (starts[middle]! <= at) low = middle
      else high = middle - 1
    }
    return low
  }
  const text = (start: number, end: number): string => {
    const k = segmentOf(start)
    const offset = starts[k]!
    return ascii[k] || isAscii(buffer.subarray(start, end))
      ? texts[k]!.slice(start - offset, end - offset)
      : buffer.toString("utf8", start, end)
  }
  const bytes = (start: number, end: number): Buffer => buffer.subarray(start, end)
  const reset = () => {
    used = 0
    starts.length = 1
    texts.length = 0
    ascii.length = 0
  }
  return { add, seal, text, bytes, reset }
}
