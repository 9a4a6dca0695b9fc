/**
 * A second thread for the scan's file work. A scan of a large directory is its system calls (open, fstat, read,
 * close of every file; or an lstat of every file for a recall's newest-first pick), on one core; a machine has
 * more. Once a process has read or stat-ed many files, it starts one reader thread, and from then on every batch
 * of `visitHeads` (and of `mtimeMany`) is done from both ends at once: the calling thread takes files from the
 * front and handles each as it goes, the reader takes files from the back into shared memory, and the calling
 * thread then hands the reader's results on, still in index order.
 *
 * The reader does only what is safe to do twice: it opens a file as the calling thread does (`O_NOFOLLOW`,
 * `O_NONBLOCK`), keeps it only when `fstat` says it is a regular file smaller than its slot, and reads it whole;
 * any other case (an error, a FIFO, a directory swapped in, a file of `SLOT_BYTES` or more, a file that grew while
 * read) is marked, and the calling thread does that file itself, exactly as without a reader (for mtimes: only a
 * successful `lstat` is taken from the reader). So the caller sees the same results, in the same order, either
 * way; only when the work was done differs.
 *
 * The calling thread never waits for the reader. The batch's paths, the claims and each file's state are in shared
 * memory (`SharedArrayBuffer`, `Atomics`): the reader waits on a generation counter; a file the reader has claimed
 * but not finished when the calling thread comes to it (at most one: it does one at a time) is done by the calling
 * thread instead. Each state is tagged with its batch's generation and the reader sets it only from that batch's
 * "pending", so a reader that falls behind (a busy machine: its thread not scheduled) cannot touch a later batch; it
 * only helps less. The thread is `unref`'d: it never keeps a process alive, and costs nothing while it waits.
 *
 * When: only a process that lives long enough to use it many times starts it: one up for `START_AFTER_MS` that has
 * handled `START_AFTER_FILES` files (a server's or an agent loop's repeated scans, a scan of a huge directory)
 * starts it in the background and uses it for every batch of at least `MIN_BATCH` files once it is running. A
 * command done within those 2 s never does (every one-shot command over 20k memories measured here; one over far
 * more may start it late in its scan): the start (~5 ms on the calling thread, ~50 ms on the other core) is more than a
 * single scan of 20k memories gains from it (a few per cent in a fresh process, whose second core is already busy
 * with the engine's own compiling and collecting), and on a busy machine it made a fresh recall over 20k memories
 * slower, not faster. A machine with one core never starts it.
 *
 * `NODE_DEBUG=memdir-head-reader` reports when the thread starts and, at exit, how many files it did.
 */
import * as os from "node:os"
import { debuglog } from "node:util"
import { Worker } from "node:worker_threads"
import type { HeadVisitor, ReadAt } from "./memoryFsCore.js"

/** Bytes of one file the reader holds; a larger file is read by the calling thread. */
export const SLOT_BYTES = 8192
/** The most files one hand-off holds (the scanner's batch). */
const MAX_FILES = 512
/** Room for a batch's paths as UTF-8. */
const PATH_BYTES = 1024 * 1024
/** Files a process reads or stats (heads, mtimes) before it starts the reader. */
const START_AFTER_FILES = 1024
/** How long a process has been up (ms) before it starts the reader. */
const START_AFTER_MS = 2000
/**
 * A batch smaller than this is done by the calling thread alone: measured in the peers benchmark, a scan of 200
 * memories (one batch) took 1.93× the floor with the thread and 1.72× without; batches of 488 and 512 gain.
 */
export const MIN_BATCH = 256

// Control words (Int32)
const GEN = 0
/** The claims: `low | high << 16`; the calling thread takes `low`, the reader `high - 1`, until they meet. */
const RANGE = 1
const READY = 2
/** What the batch asks of each file: `HEADS` (open, fstat, read) or `MTIMES` (lstat). */
const OP = 3
const HEADS = 0
const MTIMES = 1

// A file's state (Int32 per file): its batch's generation (29 bits) times 4, plus what the reader did with it.
const PENDING = 0
const READ = 1
const LEFT = 2
const GENERATIONS = 0x1fffffff

/**
 * The reader thread, as source: it runs in its own isolate (`eval`), needs nothing but `node:fs`, and is kept
 * small enough to read whole. `claimBack` mirrors `claimFront` below.
 */
const READER_SOURCE = `"use strict";
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { control, states, meta, ends, paths, slots, slotBytes, flags } = workerData;
const ctl = new Int32Array(control), st = new Int32Array(states), info = new Float64Array(meta);
const pathEnds = new Int32Array(ends), pathText = Buffer.from(paths), data = Buffer.from(slots);
const claimBack = () => {
  for (;;) {
    const v = Atomics.load(ctl, ${RANGE}), low = v & 0xffff, high = v >>> 16;
    if (low >= high) return -1;
    if (Atomics.compareExchange(ctl, ${RANGE}, v, low | ((high - 1) << 16)) === v) return high - 1;
  }
};
const pathOf = (i) => pathText.toString("utf8", i === 0 ? 0 : pathEnds[i - 1], pathEnds[i]);
const statOne = (i) => {
  try { info[i * 2] = fs.lstatSync(pathOf(i)).mtimeMs; return ${READ}; } catch { return ${LEFT}; }
};
const readOne = (i) => {
  const path = pathOf(i);
  let fd;
  try { fd = fs.openSync(path, flags); } catch { return ${LEFT}; }
  try {
    const stats = fs.fstatSync(fd);
    if (!stats.isFile() || stats.size >= slotBytes) return ${LEFT};
    const got = fs.readSync(fd, data, i * slotBytes, slotBytes, 0);
    if (got >= slotBytes) return ${LEFT};
    info[i * 2] = stats.mtimeMs;
    info[i * 2 + 1] = got;
    return ${READ};
  } catch { return ${LEFT}; } finally { try { fs.closeSync(fd); } catch {} }
};
Atomics.store(ctl, ${READY}, 1);
for (;;) {
  const gen = Atomics.load(ctl, ${GEN});
  const one = Atomics.load(ctl, ${OP}) === ${MTIMES} ? statOne : readOne;
  for (let i = claimBack(); i !== -1; i = claimBack()) {
    Atomics.compareExchange(st, i, gen * 4 + ${PENDING}, gen * 4 + one(i));
    if (Atomics.load(ctl, ${GEN}) !== gen) break;
  }
  Atomics.wait(ctl, ${GEN}, gen);
}
`

interface Shared {
  readonly control: Int32Array
  readonly states: Int32Array
  readonly meta: Float64Array
  readonly ends: Int32Array
  readonly paths: Buffer
  readonly slots: Buffer
}

const makeShared = () => {
  const buffers = {
    control: new SharedArrayBuffer(4 * 4),
    states: new SharedArrayBuffer(4 * MAX_FILES),
    meta: new SharedArrayBuffer(8 * 2 * MAX_FILES),
    ends: new SharedArrayBuffer(4 * MAX_FILES),
    paths: new SharedArrayBuffer(PATH_BYTES),
    slots: new SharedArrayBuffer(SLOT_BYTES * MAX_FILES)
  }
  const shared: Shared = {
    control: new Int32Array(buffers.control),
    states: new Int32Array(buffers.states),
    meta: new Float64Array(buffers.meta),
    ends: new Int32Array(buffers.ends),
    paths: Buffer.from(buffers.paths),
    slots: Buffer.from(buffers.slots)
  }
  return { buffers, shared }
}

const debug = debuglog("memdir-head-reader")

/** The calling thread's claim: the next file from the front, or -1 once the two ends have met. */
const claimFront = (control: Int32Array): number => {
  for (;;) {
    const v = Atomics.load(control, RANGE)
    const low = v & 0xffff
    const high = v >>> 16
    if (low >= high) return -1
    if (Atomics.compareExchange(control, RANGE, v, (low + 1) | (high << 16)) === v) return low
  }
}

/** How the calling thread reads one file itself (the live `MemoryFs`'s per-file head visit). */
export type VisitOne = (path: string, index: number, visitor: HeadVisitor) => void

export interface HeadReader {
  /**
   * Visits the heads of `paths` with the reader's help and answers true, or answers false (nothing visited) when
   * the batch is for the calling thread alone: no reader running (yet), too few files, too many, too long paths.
   */
  readonly visit: (paths: ReadonlyArray<string>, visitor: HeadVisitor, visitOne: VisitOne) => boolean
  /**
   * The `lstat` mtime of each of `paths` with the reader's help (`mtimeOne` for those left to this thread, and for
   * any failure: the reader only reports success), or undefined (nothing done) when not shared.
   */
  readonly mtimes: <E>(
    paths: ReadonlyArray<string>,
    mtimeOne: (path: string) => number | E
  ) => Array<number | E> | undefined
  /** Whether its thread has started and is taking batches. */
  readonly isRunning: () => boolean
  /** Files the thread did whose result was used (heads read, mtimes taken; not those left to the caller). */
  readonly threadReads: () => number
}

export interface HeadReaderOptions {
  /** The `open` flags of a head read (the calling thread's). */
  readonly flags: number
  /** Files read or stat-ed before the reader starts (default `START_AFTER_FILES`; 0: at the first batch). */
  readonly startAfterFiles?: number | undefined
  /** The process's uptime (ms) before the reader starts (default `START_AFTER_MS`; 0: at once). */
  readonly startAfterMs?: number | undefined
}

/** A head reader; its thread starts once the process has handled enough files (never, if it never does). */
export const makeHeadReader = (options: HeadReaderOptions): HeadReader => {
  const startAfter = options.startAfterFiles ?? START_AFTER_FILES
  const startAfterMs = options.startAfterMs ?? START_AFTER_MS
  let work = 0
  let generation = 0
  let fromThread = 0
  let state: "idle" | "starting" | "running" | "gone" = "idle"
  let worker: Worker | undefined
  let shared: Shared | undefined

  const giveUp = () => {
    state = "gone"
    shared = undefined
    const stopping = worker
    worker = undefined
    // terminate() is asynchronous; its failure only means the thread is already gone
    stopping?.terminate().catch(() => undefined)
  }

  const start = () => {
    if ((os.availableParallelism?.() ?? os.cpus().length) < 2) {
      state = "gone"
      return
    }
    const made = makeShared()
    try {
      worker = new Worker(READER_SOURCE, {
        eval: true,
        name: "memdir-head-reader",
        // not the parent's loaders or profilers (`--import tsx`, `--cpu-prof`): the reader needs plain Node
        execArgv: [],
        stdout: false,
        stderr: false,
        workerData: { ...made.buffers, slotBytes: SLOT_BYTES, flags: options.flags }
      })
    } catch {
      // no thread to be had (resource limits, an embedder without workers): every batch on the calling thread
      state = "gone"
      return
    }
    shared = made.shared
    state = "starting"
    if (debug.enabled) {
      debug("reader thread started after %d files", work)
      process.once("exit", () => debug("%d of %d files done by the reader thread", fromThread, work))
    }
    worker.unref()
    worker.on("error", giveUp)
    worker.on("exit", giveUp)
  }

  /**
   * One batch on both threads: `own(i)` for each file this thread takes (from the front) or is left (the reader
   * could not, or has not finished), `theirs(i)` for each the reader did, in index order after the front. False
   * (nothing done) when the batch is for this thread alone.
   */
  const share = (
    paths: ReadonlyArray<string>,
    op: typeof HEADS | typeof MTIMES,
    own: (index: number) => void,
    theirs: (index: number, meta: Float64Array, slots: Buffer) => void
  ): boolean => {
    const count = paths.length
    work += count
    if (state === "idle" && work >= startAfter && count >= MIN_BATCH && process.uptime() * 1000 >= startAfterMs) {
      start()
    }
    if (!isRunning() || shared === undefined || count < MIN_BATCH || count > MAX_FILES) return false
    const { control, ends, meta, slots, states } = shared
    // the paths, as UTF-8, while the range is empty (the reader claims nothing)
    let bytes = 0
    for (let i = 0; i < count; i++) bytes += paths[i]!.length * 3
    if (bytes > PATH_BYTES) return false
    generation = (generation + 1) & GENERATIONS
    const pending = generation * 4 + PENDING
    let at = 0
    for (let i = 0; i < count; i++) {
      at += shared.paths.write(paths[i]!, at, "utf8")
      ends[i] = at
      Atomics.store(states, i, pending)
    }
    // the op and the range before the generation: a reader that sees this generation sees its files
    Atomics.store(control, OP, op)
    Atomics.store(control, RANGE, count << 16)
    Atomics.store(control, GEN, generation)
    Atomics.notify(control, GEN)
    try {
      let mine = 0
      for (let i = claimFront(control); i !== -1; i = claimFront(control)) {
        own(i)
        mine = i + 1
      }
      // the back, as the reader left it: a file still in flight is done here too (its result is never looked at)
      const done = generation * 4 + READ
      for (let i = mine; i < count; i++) {
        if (Atomics.load(states, i) !== done) {
          own(i)
          continue
        }
        fromThread++
        theirs(i, meta, slots)
      }
    } finally {
      // however the batch ended (a visitor may throw): the reader claims nothing more of it
      Atomics.store(control, RANGE, 0)
    }
    return true
  }

  const visit = (paths: ReadonlyArray<string>, visitor: HeadVisitor, visitOne: VisitOne): boolean => {
    let at = 0
    let length = 0
    let from: Buffer | undefined
    const fromSlot: ReadAt = (buffer, offset, size) => {
      const start = Math.min(offset, length)
      const end = Math.min(offset + size, length)
      from!.copy(buffer, offset, at + start, at + end)
      return end - start
    }
    return share(paths, HEADS, (i) => visitOne(paths[i]!, i, visitor), (i, meta, slots) => {
      at = i * SLOT_BYTES
      length = meta[i * 2 + 1]!
      from = slots
      // the reader read the whole file (it is shorter than its slot): its length is the file's size
      visitor.file(i, meta[i * 2]!, fromSlot, length)
    })
  }

  const mtimes = <E>(paths: ReadonlyArray<string>, mtimeOne: (path: string) => number | E) => {
    const out: Array<number | E> = new Array(paths.length)
    const shared = share(paths, MTIMES, (i) => {
      out[i] = mtimeOne(paths[i]!)
    }, (i, meta) => {
      out[i] = meta[i * 2]!
    })
    return shared ? out : undefined
  }

  const isRunning = () => {
    if (state === "starting" && shared !== undefined && Atomics.load(shared.control, READY) === 1) state = "running"
    return state === "running"
  }

  return { visit, mtimes, isRunning, threadReads: () => fromThread }
}
