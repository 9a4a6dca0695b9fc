/**
 * The live `MemoryFs`, on `node:fs` directly: Effect's `FileSystem` opens with neither `O_NOFOLLOW` nor
 * `O_NONBLOCK` and folds errno codes into a few coarse reasons, and those are exactly what memdir's checks are made
 * of. Every failure is mapped here, once, from its errno code into a `MemoryFsError` that keeps the cause.
 *
 * Residual race: Node has no `openat`/`renameat`, so between re-verifying a parent directory's real path and the
 * `rename` into it, a LOCAL process with write access to the directory could still swap it for a symlink. The
 * final component is never followed.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import {
  closeSync,
  constants,
  type Dir,
  type Dirent,
  fstatSync,
  lstatSync,
  mkdirSync,
  opendirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
  statSync
} from "node:fs"
import * as fsp from "node:fs/promises"
import * as NodePath from "node:path"
import { isInside, withSeparator } from "../containment/inside.js"
import {
  describeKind,
  DIR_MODE,
  type DirectoryEntry,
  FILE_MODE,
  type FileBytes,
  type FileInfo,
  type FileKind,
  type FileText,
  type HeadVisitor,
  type MemoryFs,
  MemoryFsError,
  type MemoryFsReason,
  type ReadOptions,
  type WalkEntry,
  type WalkKindEntry,
  type WalkOptions,
  type WriteOptions
} from "./core.js"
import { tempFileName, uniqueToken } from "./leftovers.js"

const REASONS: Readonly<Record<string, MemoryFsReason>> = {
  ENOENT: "NotFound",
  EEXIST: "AlreadyExists",
  ENOTEMPTY: "AlreadyExists",
  // Linux and macOS answer ELOOP, FreeBSD EMLINK, when O_NOFOLLOW meets a symlink
  ELOOP: "SymbolicLink",
  EMLINK: "SymbolicLink",
  // opening a socket, or a device without a driver
  ENXIO: "NotRegularFile",
  ENODEV: "NotRegularFile",
  EISDIR: "NotRegularFile",
  ENOTDIR: "NotDirectory",
  EACCES: "PermissionDenied",
  EPERM: "PermissionDenied",
  ENOSPC: "NoSpace",
  EDQUOT: "NoSpace",
  // the process's file-size limit (RLIMIT_FSIZE): no room for this file, as for a full disk or a quota
  EFBIG: "NoSpace"
}

/** The one errno mapper. */
const toError = (op: string, path: string) => (cause: unknown): MemoryFsError => {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? "UNKNOWN"
  return new MemoryFsError({ op, path, reason: REASONS[code] ?? "Unknown", detail: code, cause })
}

const sys = <A>(op: string, path: string, operation: () => Promise<A>): Effect.Effect<A, MemoryFsError> =>
  Effect.tryPromise({ try: operation, catch: toError(op, path) })

/**
 * A path lookup, synchronously: a real path or an lstat is one system call, far cheaper than the round trip through
 * the thread pool an async call makes (the containment check of every store call resolves one or two).
 */
const sysSync = <A>(op: string, path: string, operation: () => A): Effect.Effect<A, MemoryFsError> =>
  Effect.try({ try: operation, catch: toError(op, path) })

const fail = (op: string, path: string, reason: MemoryFsReason, detail: string) =>
  Effect.fail(new MemoryFsError({ op, path, reason, detail }))

const kindOf = (stats: Stats): FileKind =>
  stats.isFile()
    ? "File"
    : stats.isDirectory()
    ? "Directory"
    : stats.isSymbolicLink()
    ? "SymbolicLink"
    : stats.isFIFO()
    ? "FIFO"
    : stats.isSocket()
    ? "Socket"
    : stats.isCharacterDevice()
    ? "CharacterDevice"
    : stats.isBlockDevice()
    ? "BlockDevice"
    : "Unknown"

const infoOf = (stats: Stats): FileInfo => ({
  kind: kindOf(stats),
  size: stats.size,
  mtimeMs: stats.mtimeMs,
  ino: stats.ino,
  dev: stats.dev,
  nlink: stats.nlink,
  uid: stats.uid,
  mode: stats.mode & 0o777
})

/** `within` checks: `Containment`'s predicate, the root itself included. */
const ROOT_INCLUDED = { allowRoot: true } as const

const realPathOfDeepestExisting = (absolute: string): Effect.Effect<string, MemoryFsError> =>
  Effect.gen(function*() {
    const op = "resolve"
    const missingTail: Array<string> = []
    let current = absolute
    // another process may create `current` between realpath and lstat: look again, a few times
    let retries = 3
    while (true) {
      const real = yield* Effect.result(sysSync(op, current, () => realpathSync.native(current)))
      if (Result.isSuccess(real)) return NodePath.join(real.success, ...[...missingTail].reverse())
      const error = real.failure
      if (error.detail === "ELOOP") return yield* fail(op, current, "SymlinkLoop", "too many levels of symbolic links")
      if (error.reason !== "NotFound") return yield* Effect.fail(error)
      // ENOENT: either `current` does not exist (walk up), or it is a link whose target does not
      const entry = yield* Effect.result(sysSync("lstat", current, () => lstatSync(current)))
      if (Result.isSuccess(entry)) {
        if (!entry.success.isSymbolicLink()) {
          if (retries-- > 0) continue
          return yield* fail(op, current, "Changed", "changed while checked")
        }
        const target = yield* Effect.result(sysSync("readlink", current, () => readlinkSync(current)))
        return yield* fail(op, current, "DanglingSymlink", `-> ${Result.getOrElse(target, () => "?")} (missing)`)
      }
      if (entry.failure.reason !== "NotFound") return yield* Effect.fail(entry.failure)
      const parent = NodePath.dirname(current)
      if (parent === current) return yield* fail(op, absolute, "Unknown", "no ancestor exists")
      missingTail.push(NodePath.basename(current))
      current = parent
    }
  })

const closeQuietly = (handle: fsp.FileHandle) => Effect.promise(() => handle.close().catch(() => undefined))

const decoder = new TextDecoder("utf-8")

/**
 * A whole small file (a setting, a ref, a memory), synchronously: open, fstat, read and close are four system calls,
 * far cheaper than four round trips through the thread pool (a command's start reads half a dozen). Opened without
 * blocking and checked to be a regular file first, so a FIFO or device is an error, never a wait.
 */
const readFile = (path: string, options: ReadOptions) =>
  Effect.try({
    try: () => readFileSyncInto(path, options),
    catch: (error) => error instanceof MemoryFsError ? error : toError("read", path)(error)
  })

const readHead = (path: string, maxBytes: number) =>
  Effect.try({
    try: () => {
      const { fd, stats } = openRegularSync(path)
      try {
        const buffer = new Uint8Array(Math.max(0, Math.min(maxBytes, stats.size)))
        const filled = readFully(fd, path, buffer)
        return { text: decoder.decode(buffer.subarray(0, filled)), info: infoOf(stats), truncated: stats.size > filled }
      } finally {
        closeSync(fd)
      }
    },
    catch: (error) => error instanceof MemoryFsError ? error : toError("read", path)(error)
  })

const lstat = (path: string) => Effect.map(sysSync("lstat", path, () => lstatSync(path)), infoOf)

const exists = (path: string) =>
  lstat(path).pipe(
    Effect.as(true),
    Effect.catchIf((error) => error.reason === "NotFound", () => Effect.succeed(false))
  )

const direntKind = (entry: Dirent): FileKind =>
  entry.isFile()
    ? "File"
    : entry.isDirectory()
    ? "Directory"
    : entry.isSymbolicLink()
    ? "SymbolicLink"
    : entry.isFIFO()
    ? "FIFO"
    : entry.isSocket()
    ? "Socket"
    : entry.isCharacterDevice()
    ? "CharacterDevice"
    : entry.isBlockDevice()
    ? "BlockDevice"
    : "Unknown"

const byName = (a: DirectoryEntry, b: DirectoryEntry) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0

// Synchronous, like the scan's other batches: one directory's listing is one system call, and an async round trip
// per directory cost a small scan more than its reads.
const readDirectory = (path: string, options: { readonly sorted?: boolean | undefined } = {}) =>
  Effect.map(
    Effect.try({ try: () => readdirSync(path, { withFileTypes: true }), catch: toError("list", path) }),
    (entries): ReadonlyArray<DirectoryEntry> => {
      const listed = entries.map((entry): DirectoryEntry => ({ name: entry.name, kind: direntKind(entry) }))
      return options.sorted === false ? listed : listed.sort(byName)
    }
  )

/** Up to `chunkSize` entries of an open directory (fewer at its end). */
const readChunk = (dir: Dir, chunkSize: number): Array<DirectoryEntry> => {
  const chunk: Array<DirectoryEntry> = []
  for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
    if (chunk.push({ name: entry.name, kind: direntKind(entry) }) >= chunkSize) break
  }
  return chunk
}

const readDirectoryChunks = (
  path: string,
  chunkSize: number,
  onChunk: (entries: ReadonlyArray<DirectoryEntry>) => Effect.Effect<void>
) =>
  Effect.acquireUseRelease(
    Effect.try({ try: () => opendirSync(path, { bufferSize: chunkSize }), catch: toError("list", path) }),
    (dir) =>
      Effect.gen(function*() {
        for (;;) {
          const chunk = yield* Effect.try({ try: () => readChunk(dir, chunkSize), catch: toError("list", path) })
          if (chunk.length > 0) yield* onChunk(chunk)
          if (chunk.length < chunkSize) return
        }
      }),
    (dir) =>
      Effect.sync(() => {
        try {
          dir.closeSync()
        } catch {
          // Closing a directory handle only releases it: nothing was written, nothing to report.
        }
      })
  )

// The scan's batches: synchronous calls, one Effect per batch (an async round trip per file would cost more than
// the file's read). Each path's failure is mapped like every other one.
const mtimeOne = (path: string): number | MemoryFsError => {
  try {
    return lstatSync(path).mtimeMs
  } catch (cause) {
    return toError("lstat", path)(cause)
  }
}

const mtimeMany = (paths: ReadonlyArray<string>) => Effect.sync(() => paths.map(mtimeOne))

// O_NOFOLLOW: never through a link in the last component; O_NONBLOCK: a FIFO swapped in after the listing must
// not block the batch.
export const HEAD_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

const visitHead = (path: string, index: number, visitor: HeadVisitor): void => {
  let fd: number
  try {
    fd = openSync(path, HEAD_FLAGS)
  } catch (cause) {
    visitor.failed(index, toError("open", path)(cause))
    return
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) {
      visitor.failed(
        index,
        new MemoryFsError({ op: "open", path, reason: "NotRegularFile", detail: describeKind(kindOf(stats)) })
      )
      return
    }
    visitor.file(index, stats.mtimeMs, (buffer, offset, length) => {
      try {
        return readSync(fd, buffer, offset, length, offset)
      } catch (cause) {
        throw toError("read", path)(cause)
      }
    }, stats.size)
  } catch (error) {
    if (!(error instanceof MemoryFsError)) throw error
    visitor.failed(index, error)
  } finally {
    closeSync(fd)
  }
}

/** `openRegular`'s refusals, synchronously: the open's errno named, then anything but a regular file refused. */
const openRegularSync = (path: string): { readonly fd: number; readonly stats: Stats } => {
  let fd: number
  try {
    fd = openSync(path, HEAD_FLAGS)
  } catch (cause) {
    const error = toError("open", path)(cause)
    throw error.reason === "SymbolicLink" ?
      new MemoryFsError({ ...error, detail: `a symbolic link (${error.detail})`, cause: error.cause }) :
      error.detail === "ENXIO" || error.detail === "ENODEV" ?
      new MemoryFsError({ ...error, detail: `a socket or device (${error.detail})`, cause: error.cause }) :
      error
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) {
      throw new MemoryFsError({ op: "open", path, reason: "NotRegularFile", detail: describeKind(kindOf(stats)) })
    }
    return { fd, stats }
  } catch (error) {
    closeSync(fd)
    throw error instanceof MemoryFsError ? error : toError("stat", path)(error)
  }
}

/** `within`, synchronously: the open file's path resolves inside `within` and names the very inode held open. */
const checkWithinSync = (path: string, stats: Stats, within: string): void => {
  let real: string
  try {
    real = realpathSync.native(path)
  } catch (cause) {
    const error = toError("resolve", path)(cause)
    throw error.detail === "ELOOP" ? new MemoryFsError({ ...error, reason: "SymlinkLoop", cause: error.cause }) : error
  }
  if (!isInside(within, real, ROOT_INCLUDED)) {
    throw new MemoryFsError({ op: "open", path, reason: "Escapes", detail: `resolves to ${real}, outside ${within}` })
  }
  let named: Stats
  try {
    named = lstatSync(real)
  } catch (cause) {
    throw toError("lstat", real)(cause)
  }
  if (named.ino !== stats.ino || named.dev !== stats.dev) {
    throw new MemoryFsError({ op: "open", path, reason: "Changed", detail: "changed while it was opened" })
  }
}

/** Reads `buffer` full from `position` of `fd` (less at the end of the file); the bytes read. */
const readFully = (fd: number, path: string, buffer: Uint8Array, position = 0): number => {
  let filled = 0
  while (filled < buffer.length) {
    let read: number
    try {
      read = readSync(fd, buffer, filled, buffer.length - filled, position + filled)
    } catch (cause) {
      throw toError("read", path)(cause)
    }
    if (read === 0) break
    filled += read
  }
  return filled
}

/**
 * `readFile`, synchronously: into the batch's buffer when given (`maxBytes + 1` bytes: one past the limit notices
 * growth), else into one of the file's size.
 */
const readFileSyncInto = (path: string, options: ReadOptions, batchBuffer?: Uint8Array): FileText => {
  const { buffer, filled, stats } = readBoundedSync(path, options, batchBuffer)
  return { text: decoder.decode(buffer.subarray(0, filled)), info: infoOf(stats) }
}

/** The bytes of a whole regular file, read like `readFileSyncInto` (a buffer of its own, not a batch's). */
const readBytes = (path: string, options: ReadOptions) =>
  Effect.try({
    try: (): FileBytes => {
      const { buffer, filled, stats } = readBoundedSync(path, options)
      return { bytes: Uint8Array.prototype.slice.call(buffer, 0, filled), info: infoOf(stats) }
    },
    catch: (error) => error instanceof MemoryFsError ? error : toError("read", path)(error)
  })

/**
 * A regular file opened without following a link or blocking, checked (`singleLink`, `maxBytes`, `within`) and read
 * whole: into the batch's buffer when given (`maxBytes + 1` bytes: one past the limit notices growth), else into one
 * of the file's size.
 */
const readBoundedSync = (path: string, options: ReadOptions, batchBuffer?: Uint8Array) => {
  const { fd, stats } = openRegularSync(path)
  try {
    if (options.singleLink === true && stats.nlink > 1) {
      throw new MemoryFsError({
        op: "open",
        path,
        reason: "NotRegularFile",
        detail: `has ${stats.nlink} hard links (may alias a file elsewhere)`
      })
    }
    if (stats.size > options.maxBytes) {
      throw new MemoryFsError({
        op: "read",
        path,
        reason: "TooLarge",
        detail: `${stats.size} bytes (limit ${options.maxBytes})`
      })
    }
    if (options.within !== undefined) checkWithinSync(path, stats, options.within)
    // one file alone: a buffer of its size (and one byte to notice growth), not of the limit, larger only when it
    // grew since its fstat; not zeroed, only the bytes read are used
    let buffer = batchBuffer ?? Buffer.allocUnsafe(stats.size + 1)
    let filled = readFully(fd, path, buffer)
    if (filled === buffer.length && buffer.length <= options.maxBytes) {
      const grown = Buffer.allocUnsafe(options.maxBytes + 1)
      grown.set(buffer.subarray(0, filled))
      buffer = grown
      filled += readFully(fd, path, buffer.subarray(filled), filled)
    }
    if (filled > options.maxBytes) {
      throw new MemoryFsError({
        op: "read",
        path,
        reason: "TooLarge",
        detail: `grew past ${options.maxBytes} bytes while read`
      })
    }
    return { buffer, filled, stats }
  } finally {
    closeSync(fd)
  }
}

const readFileMany = (paths: ReadonlyArray<string>, options: ReadOptions) =>
  Effect.sync(() => {
    // one buffer for the batch, not zeroed: only the bytes read are decoded
    const buffer = Buffer.allocUnsafe(options.maxBytes + 1)
    return paths.map((path): FileText | MemoryFsError => {
      try {
        return readFileSyncInto(path, options, buffer)
      } catch (error) {
        if (error instanceof MemoryFsError) return error
        return toError("read", path)(error)
      }
    })
  })

const visitHeads = (paths: ReadonlyArray<string>, visitor: HeadVisitor) =>
  Effect.sync(() => {
    for (let i = 0; i < paths.length; i++) visitHead(paths[i]!, i, visitor)
  })

const realPath = (path: string) =>
  sysSync("resolve", path, () => realpathSync.native(path)).pipe(
    Effect.mapError((error) =>
      error.detail === "ELOOP" ? new MemoryFsError({ ...error, reason: "SymlinkLoop", cause: error.cause }) : error
    )
  )

/** Entries `lstat`-ed per synchronous batch of a walk; between batches the fiber yields. */
const WALK_BATCH = 512

const lstatOne = (path: string): FileInfo | MemoryFsError => {
  try {
    return infoOf(lstatSync(path))
  } catch (cause) {
    return toError("lstat", path)(cause)
  }
}

/** The `lstat` of each path in one synchronous call (an async round trip per entry costs more than the call). */
const lstatMany = (paths: ReadonlyArray<string>) => Effect.sync(() => paths.map(lstatOne))

/**
 * A walk's batch: an entry gone since the listing is `undefined`; any other failure stops the batch and is returned.
 */
const lstatBatch = (paths: ReadonlyArray<string>) =>
  Effect.sync((): ReadonlyArray<FileInfo | undefined> | MemoryFsError => {
    const infos: Array<FileInfo | undefined> = new Array(paths.length)
    for (let i = 0; i < paths.length; i++) {
      const info = lstatOne(paths[i]!)
      if (info instanceof MemoryFsError && info.reason !== "NotFound") return info
      infos[i] = info instanceof MemoryFsError ? undefined : info
    }
    return infos
  })

interface WalkedDirectory {
  readonly absolute: string
  readonly relative: string
  readonly depth: number
}

/** One directory of a walk: appends its entries to `out` and the directories to enter to `queue`. */
type WalkStep<E> = (
  directory: WalkedDirectory,
  isRoot: boolean,
  options: WalkOptions,
  max: number,
  out: Array<E>,
  queue: Array<WalkedDirectory>
) => Effect.Effect<void, MemoryFsError>

/** One directory of a walk: its entries (the ones `enter` lets through) `lstat`-ed in batches, appended to `out`. */
const walkDirectory: WalkStep<WalkEntry> = (directory, isRoot, options, max, out, queue) =>
  Effect.gen(function*() {
    const listed = yield* readDirectory(directory.absolute).pipe(
      Effect.catchIf((error) => error.reason === "NotFound" && !isRoot, () => Effect.succeed([]))
    )
    const relatives: Array<string> = []
    const absolutes: Array<string> = []
    for (const entry of listed) {
      const relative = directory.relative === "" ? entry.name : `${directory.relative}/${entry.name}`
      if (entry.kind === "Directory" && options.enter !== undefined && !options.enter(relative, entry.name)) continue
      relatives.push(relative)
      absolutes.push(NodePath.join(directory.absolute, entry.name))
    }
    const depth = directory.depth + 1
    const descend = options.maxDepth === undefined || depth < options.maxDepth
    for (let start = 0; start < absolutes.length && out.length < max; start += WALK_BATCH) {
      if (start > 0) yield* Effect.yieldNow
      const batch = absolutes.slice(start, start + WALK_BATCH)
      const infos = yield* lstatBatch(batch)
      if (infos instanceof MemoryFsError) return yield* Effect.fail(infos)
      for (let i = 0; i < batch.length && out.length < max; i++) {
        const info = infos[i]
        if (info === undefined) continue
        const relative = relatives[start + i]!
        out.push({ relative, absolute: batch[i]!, info })
        if (descend && info.kind === "Directory") queue.push({ absolute: batch[i]!, relative, depth })
      }
    }
  })

/** A breadth-first walk from `root`, one directory at a time by `step`, until `maxEntries`. */
const breadthFirst = <E>(step: WalkStep<E>) => (root: string, options: WalkOptions = {}) =>
  Effect.gen(function*() {
    const out: Array<E> = []
    const max = options.maxEntries ?? Number.POSITIVE_INFINITY
    const queue: Array<WalkedDirectory> = [{ absolute: root, relative: "", depth: 0 }]
    for (let next = 0; next < queue.length && out.length < max; next++) {
      yield* step(queue[next]!, next === 0, options, max, out, queue)
    }
    return out
  })

const walk = breadthFirst<WalkEntry>(walkDirectory)

/**
 * A listed entry's kind: the directory entry's, or (only where the file system reports no type) its `lstat`'s;
 * `undefined` when it is gone by then.
 */
const listedKind = (absolute: string, listed: FileKind): FileKind | undefined | MemoryFsError => {
  if (listed !== "Unknown") return listed
  const info = lstatOne(absolute)
  return info instanceof MemoryFsError ? (info.reason === "NotFound" ? undefined : info) : info.kind
}

/** One directory of `walkKinds`: its entries (the ones `enter` lets through) appended to `out`, no `lstat` each. */
const walkKindsDirectory: WalkStep<WalkKindEntry> = (directory, isRoot, options, max, out, queue) =>
  Effect.gen(function*() {
    const listed = yield* readDirectory(directory.absolute).pipe(
      Effect.catchIf((error) => error.reason === "NotFound" && !isRoot, () => Effect.succeed([]))
    )
    const depth = directory.depth + 1
    const descend = options.maxDepth === undefined || depth < options.maxDepth
    // `NodePath.join` of a normalized directory and an entry's name (never `.`, `..` nor holding a separator)
    const base = withSeparator(NodePath.normalize(directory.absolute))
    for (let i = 0; i < listed.length && out.length < max; i++) {
      if (i > 0 && i % WALK_BATCH === 0) yield* Effect.yieldNow
      const entry = listed[i]!
      const relative = directory.relative === "" ? entry.name : `${directory.relative}/${entry.name}`
      const absolute = base + entry.name
      const kind = listedKind(absolute, entry.kind)
      if (kind instanceof MemoryFsError) return yield* Effect.fail(kind)
      if (kind === undefined) continue
      if (kind === "Directory" && options.enter !== undefined && !options.enter(relative, entry.name)) continue
      out.push({ relative, absolute, kind })
      if (descend && kind === "Directory") queue.push({ absolute, relative, depth })
    }
  })

const walkKinds = breadthFirst<WalkKindEntry>(walkKindsDirectory)

/**
 * `mkdir -p`, one level at a time: Node's `recursive` mkdir answers ENOENT where the system said EROFS or EACCES,
 * and the error must name the real cause. An existing directory (or a link to one) is fine, as with `mkdir -p`.
 */
const makeParentsSync = (path: string): void => {
  try {
    mkdirSync(path, { mode: DIR_MODE })
    return
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "EEXIST") {
      if (statSync(path).isDirectory()) return
      throw error
    }
    const parent = NodePath.dirname(path)
    if (code !== "ENOENT" || parent === path) throw error
  }
  makeParentsSync(NodePath.dirname(path))
  try {
    mkdirSync(path, { mode: DIR_MODE })
  } catch (error) {
    // made meanwhile by someone else: fine, as above
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(path).isDirectory()) throw error
  }
}

/**
 * Synchronously, like the path lookups: a directory that exists (nearly every call: the memory directory before
 * each tool command) costs one system call, not a round trip through the thread pool.
 */
const makeDirectory = (path: string, options: { readonly within?: string | undefined } = {}) =>
  Effect.gen(function*() {
    const within = options.within
    if (within === undefined) {
      yield* sysSync("create directory", path, () => makeParentsSync(NodePath.resolve(path)))
      return
    }
    // one level at a time, checking before each step that what exists so far resolves inside `within`
    const missing: Array<string> = []
    let current = NodePath.resolve(path)
    while (!(yield* exists(current))) {
      missing.push(current)
      const parent = NodePath.dirname(current)
      if (parent === current) break
      current = parent
    }
    for (const directory of missing.reverse()) {
      const realParent = yield* realPathOfDeepestExisting(NodePath.dirname(directory))
      if (!isInside(within, realParent, ROOT_INCLUDED) && !isInside(realParent, within, ROOT_INCLUDED)) {
        return yield* fail("create directory", directory, "Escapes", `${realParent} is outside ${within}`)
      }
      // mkdir never follows a symlink in its last component: an existing link makes it fail with EEXIST
      yield* sysSync("create directory", directory, () => mkdirSync(directory, { mode: DIR_MODE })).pipe(
        Effect.catchIf((error) => error.reason === "AlreadyExists", () => Effect.void)
      )
    }
    const real = yield* realPathOfDeepestExisting(path)
    if (!isInside(within, real, ROOT_INCLUDED)) {
      return yield* fail("create directory", path, "Escapes", `resolves to ${real}, outside ${within}`)
    }
    const stats = yield* sysSync("lstat", real, () => lstatSync(real))
    if (!stats.isDirectory()) return yield* fail("create directory", path, "NotDirectory", describeKind(kindOf(stats)))
  })

/** Best effort: some file systems cannot fsync a directory; the data is already durable. */
const syncDirectory = (directory: string) =>
  Effect.acquireUseRelease(
    sys("open", directory, () => fsp.open(directory, constants.O_RDONLY | constants.O_DIRECTORY)),
    (handle) => sys("sync", directory, () => handle.sync()),
    closeQuietly
  ).pipe(Effect.ignore)

const writeFileAtomic = (path: string, data: string | Uint8Array, options: WriteOptions = {}) =>
  Effect.gen(function*() {
    const target = NodePath.resolve(path)
    const parent = NodePath.dirname(target)
    const within = options.within
    const hooks = options.hooks ?? {}
    const durable = options.durable !== false
    yield* makeDirectory(parent, { within })
    const realParent = within === undefined ? parent : yield* realPathOfDeepestExisting(parent)
    const name = NodePath.basename(target)
    const temp = NodePath.join(realParent, tempFileName(name, yield* uniqueToken))
    const finalTarget = NodePath.join(realParent, name)
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data

    hooks.beforeTempOpen?.(temp)
    // The temp file stays open until after the rename: while we hold it, its inode cannot be freed and handed to
    // a file planted under the same name, so comparing inode numbers below is sound.
    yield* Effect.acquireUseRelease(
      sys("create", temp, () =>
        fsp.open(
          temp,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          options.mode ?? FILE_MODE
        )),
      (handle) =>
        Effect.gen(function*() {
          // Who the temp file is, taken first: whatever fails after this (a full disk while writing or syncing, a
          // check before the rename, an interruption), the temp file goes, and only if its name still holds this
          // inode (never someone else's file).
          const ours = yield* sys("stat", temp, () => handle.stat()).pipe(
            // created exclusively a moment ago and still open: without its inode, the name is removed as it is
            Effect.tapError(() => Effect.ignore(sys("remove", temp, () => fsp.unlink(temp))))
          )
          const isOurs = (now: Stats) => now.isFile() && now.ino === ours.ino && now.dev === ours.dev
          const removeOurTemp = sysSync("lstat", temp, () => lstatSync(temp)).pipe(
            Effect.flatMap((now) => isOurs(now) ? sys("remove", temp, () => fsp.unlink(temp)) : Effect.void),
            Effect.ignore
          )
          const writeVerifyAndRename = Effect.gen(function*() {
            if (bytes.length > 0) yield* sys("write", temp, () => handle.writeFile(bytes))
            if (durable) yield* sys("sync", temp, () => handle.sync())
            hooks.beforeRename?.(target, temp)
            if (within !== undefined) {
              const parentNow = yield* realPathOfDeepestExisting(parent)
              if (parentNow !== realParent) {
                return yield* fail("rename", target, "Escapes", `${parent} now resolves to ${parentNow}`)
              }
            }
            const tempNow = yield* sys("lstat", temp, () => fsp.lstat(temp))
            if (!isOurs(tempNow)) return yield* fail("rename", temp, "Changed", "the temp file was replaced")
            if (options.exclusive === true) {
              // a hard link never replaces: it fails with EEXIST when something is there; the temp name goes after
              yield* sys("create", finalTarget, () => fsp.link(temp, finalTarget)).pipe(
                // where the file system has no hard links, an exclusive create of the target itself
                Effect.catchIf((error) => error.reason !== "AlreadyExists", () =>
                  createExclusive(finalTarget, bytes, options.mode, durable))
              )
              yield* removeOurTemp
            } else {
              yield* sys("rename", finalTarget, () =>
                fsp.rename(temp, finalTarget))
            }
          })
          yield* writeVerifyAndRename.pipe(Effect.onError(() => removeOurTemp))
        }),
      closeQuietly
    )
    if (durable) yield* syncDirectory(realParent)
  })

/** The target created with `O_EXCL` and written in place: `writeFileAtomic`'s exclusive fallback. */
const createExclusive = (path: string, bytes: Uint8Array, mode: number | undefined, durable: boolean) =>
  Effect.acquireUseRelease(
    sys("create", path, () =>
      fsp.open(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        mode ?? FILE_MODE
      )),
    (handle) =>
      Effect.gen(function*() {
        if (bytes.length > 0) {
          yield* sys("write", path, () => handle.writeFile(bytes))
        }
        if (durable) yield* sys("sync", path, () => handle.sync())
      }).pipe(Effect.onError(() => Effect.ignore(sys("remove", path, () => fsp.unlink(path))))),
    closeQuietly
  )

const append = (path: string, data: string) =>
  Effect.acquireUseRelease(
    sys("open", path, () =>
      fsp.open(
        path,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        FILE_MODE
      )),
    (handle) =>
      Effect.gen(function*() {
        const stats = yield* sys("stat", path, () => handle.stat())
        if (!stats.isFile()) return yield* fail("append", path, "NotRegularFile", describeKind(kindOf(stats)))
        yield* sys("append", path, () => handle.appendFile(data, "utf8"))
        yield* sys("sync", path, () => handle.sync())
      }),
    closeQuietly
  )

const remove = (path: string, options: { readonly recursive?: boolean | undefined } = {}) =>
  options.recursive === true ?
    Effect.flatMap(
      lstat(path),
      // `rm` never follows a link it meets; `force` stays off so a missing path is `NotFound`
      () => sys("remove", path, () => fsp.rm(path, { recursive: true }))
    ) :
    sys("remove", path, () => fsp.unlink(path))

const setModified = (path: string, mtimeMs: number) =>
  sys("set time of", path, () => fsp.lutimes(path, mtimeMs / 1000, mtimeMs / 1000))

const rename = (from: string, to: string) => sys("rename", to, () => fsp.rename(from, to))

const readLink = (path: string) => sys("readlink", path, () => fsp.readlink(path))

export const makeMemoryFsNode = (): MemoryFs["Service"] => ({
  lstat: (path) => lstat(path).pipe(Effect.withSpan("MemoryFs.lstat")),
  exists: (path) => exists(path).pipe(Effect.withSpan("MemoryFs.exists")),
  readFile: (path, options) => readFile(path, options).pipe(Effect.withSpan("MemoryFs.readFile")),
  readBytes: (path, options) => readBytes(path, options).pipe(Effect.withSpan("MemoryFs.readBytes")),
  readHead: (path, maxBytes) => readHead(path, maxBytes).pipe(Effect.withSpan("MemoryFs.readHead")),
  readDirectory: (path, options) => readDirectory(path, options).pipe(Effect.withSpan("MemoryFs.readDirectory")),
  // The scan's batch calls have no span of their own: a span per batch (a stack captured, fiber refs set) cost a
  // small scan more than its reads; the caller's span (`Scanner.scan`) covers them.
  readDirectoryChunks,
  mtimeMany,
  lstatMany: (paths) => lstatMany(paths).pipe(Effect.withSpan("MemoryFs.lstatMany")),
  readFileMany: (paths, options) => readFileMany(paths, options).pipe(Effect.withSpan("MemoryFs.readFileMany")),
  visitHeads,
  realPath: (path) => realPath(path).pipe(Effect.withSpan("MemoryFs.realPath")),
  walk: (root, options) => walk(root, options).pipe(Effect.withSpan("MemoryFs.walk")),
  walkKinds: (root, options) => walkKinds(root, options).pipe(Effect.withSpan("MemoryFs.walkKinds")),
  makeDirectory: (path, options) => makeDirectory(path, options).pipe(Effect.withSpan("MemoryFs.makeDirectory")),
  writeFileAtomic: (path, data, options) =>
    writeFileAtomic(path, data, options).pipe(Effect.withSpan("MemoryFs.writeFileAtomic")),
  append: (path, data) => append(path, data).pipe(Effect.withSpan("MemoryFs.append")),
  remove: (path, options) => remove(path, options).pipe(Effect.withSpan("MemoryFs.remove")),
  setModified: (path, mtimeMs) => setModified(path, mtimeMs).pipe(Effect.withSpan("MemoryFs.setModified")),
  rename: (from, to) => rename(from, to).pipe(Effect.withSpan("MemoryFs.rename")),
  readLink: (path) => readLink(path).pipe(Effect.withSpan("MemoryFs.readLink")),
  realPathOfDeepestExisting: (path) =>
    realPathOfDeepestExisting(NodePath.resolve(path)).pipe(Effect.withSpan("MemoryFs.realPathOfDeepestExisting"))
})
