/**
 * Scanner: the frontmatter of every memory file, first 30 lines only, newest first
 * (docs/architecture.md#how-a-recall-flows).
 *
 * Every `*.md` under the memory directory except the `MEMORY.md` indexes, skipping `logs/` and dot-dirs, never
 * leaving the tree through a symlink. Bodies are never read: each file read gets one open, one fstat (for the
 * mtime, no second path lookup), a read of its first 4 KiB (more only while 30 lines are incomplete, at most
 * 64 KiB) and one close. Bad files become `problems`; the scan itself never fails.
 *
 * Per file, only the header block between the fences is decoded while it is open, and read by the fast path for
 * flat `key: value` headers when it can (internal/scan/yaml.ts), by the YAML parser otherwise.
 *
 * With a `limit` (recall), the scan reads only what it keeps: it lists and stats every file, picks the newest by
 * mtime with a bounded heap, and reads only their heads, one further for each head that is not a valid memory.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import type { InvalidFrontmatterError } from "./Errors.js"
import { FRONTMATTER_MAX_BYTES, type ParsedFrontmatter, parseFrontmatter } from "./Frontmatter.js"
import { GitAges } from "./GitAges.js"
import { type CachedHead, HeaderCache, type HeaderCacheTable } from "./HeaderCache.js"
import { isInside, withSeparator } from "./internal/containment/inside.js"
import { bodyHeadOf, headerlessMemory } from "./internal/scan/body.js"
import { parseLocatedHead, readHeadLocation } from "./internal/scan/head.js"
import {
  isCandidatePath,
  isMemoryFileName,
  isSkippedDirName,
  isUnderSkippedDir,
  isWalkedDir,
  normalizeLimit,
  normalizeRelativePath,
  sortNewestFirst
} from "./internal/scan/paths.js"
import { type HeadKind, newest, newestSelection, readNewest, readNewestBatched } from "./internal/scan/select.js"
import type { MemoryHeader, ScanProblem } from "./Memory.js"
import { type AgeBasis, ageBasis, stampHeader, withWrittenWarning, writtenAtIn } from "./MemoryAge.js"
// The scan is memdir's one hot path, measured against merely reading the files' heads with plain fs
// (bench/scan.bench.ts): its I/O is `MemoryFs`'s batch calls (`mtimeMany`, `visitHeads`), one synchronous
// call per batch of files rather than an async round trip per file.
import {
  type DirectoryEntry,
  type FileInfo,
  layer as MemoryFsLayer,
  MemoryFs,
  MemoryFsError,
  type ReadAt
} from "./MemoryFs.js"

export { FRONTMATTER_MAX_BYTES, FRONTMATTER_MAX_LINES } from "./Frontmatter.js"
/** Reference: 200 candidates for the selector. */
export const DEFAULT_CANDIDATE_CAP = 200
export { FIRST_READ_BYTES } from "./internal/scan/head.js"

export interface ScanOptions {
  /**
   * Keep only the newest `limit` memories (default: all). Only the newest files' heads are read: problems and
   * headerless files are those among them (older files are not opened).
   */
  readonly limit?: number | undefined
  /** Relative paths to leave out (already surfaced / already read). They are not read at all. */
  readonly exclude?: ReadonlySet<string> | undefined
  /** Sub-directories to skip, relative (default: none; `logs/` is never a memory). */
  readonly skipDirs?: ReadonlyArray<string> | undefined
  /** `false`: the header cache is read but never written (a dry run writes nothing). Default true. */
  readonly writeCache?: boolean | undefined
}

export interface ScanResult {
  /** Newest mtime first. */
  readonly memories: ReadonlyArray<MemoryHeader>
  /** Files that are not readable memories (bad frontmatter, unreadable, symlink out of the tree), by path. */
  readonly problems: ReadonlyArray<ScanProblem>
  /**
   * Number of memories found before the cap (excluded paths and problems not counted). With a `limit`, files
   * whose heads were not read count as memories: every memory file is counted, only the problems among the heads
   * read are known.
   */
  readonly total: number
  /**
   * Text files among `problems` whose header cannot be read (no frontmatter, broken YAML): still offered to the
   * selector by their file name and first lines. Newest first, capped like `memories`; absent when there are none.
   */
  readonly headerless?: ReadonlyArray<MemoryHeader> | undefined
}

export class Scanner extends Context.Service<Scanner, {
  /** Never fails: an absent directory is an empty scan, bad files are problems. */
  readonly scan: (memoryDir: string, options?: ScanOptions) => Effect.Effect<ScanResult>
}>()("@memdir/core/Scanner") {}

// ---------------------------------------------------------------------------------------------------------------
// Shared by the live and the in-memory scanner
// ---------------------------------------------------------------------------------------------------------------

interface ResolvedOptions {
  readonly limit: number | undefined
  readonly exclude: ReadonlySet<string>
  readonly skipDirs: ReadonlyArray<string>
  readonly writeCache: boolean
}

const resolveOptions = (options: ScanOptions | undefined): ResolvedOptions => ({
  limit: normalizeLimit(options?.limit),
  exclude: options?.exclude === undefined || options.exclude.size === 0
    ? new Set()
    : new Set([...options.exclude].map(normalizeRelativePath)),
  skipDirs: (options?.skipDirs ?? []).map(normalizeRelativePath),
  writeCache: options?.writeCache !== false
})

/**
 * Files a header that cannot be read as a problem (and, for a text file, as a headerless memory); `headText` is the
 * first lines of the file.
 */
const collectProblem = (
  error: Pick<InvalidFrontmatterError, "reason" | "message" | "line">,
  relativePath: string,
  absolutePath: string,
  mtime: number,
  headText: string,
  found: Found,
  basis: AgeBasis
): HeadKind => {
  const problem = { path: relativePath, code: error.reason, message: error.message, line: error.line }
  found.problems.push(problem)
  found.filed?.(relativePath, {
    kind: "problem",
    code: error.reason,
    message: error.message,
    line: error.line,
    headText
  })
  const headerless = headerlessMemory(problem, relativePath, absolutePath, mtime, headText)
  if (headerless === undefined) return "none"
  found.headerless.push(stampHeader(headerless, basis.nowMs, basis.commitTimes?.(relativePath, mtime)))
  return "headerless"
}

/** Files a parsed header as a memory, built once with its written time (MemoryAge) already in it. */
const collectMemory = (
  parsed: Pick<ParsedFrontmatter, "description" | "extra" | "name" | "type" | "warning">,
  relativePath: string,
  absolutePath: string,
  mtime: number,
  bodyHead: string,
  found: Found,
  basis: AgeBasis
): HeadKind => {
  const { description, extra, name, type, warning } = parsed
  found.filed?.(relativePath, { kind: "memory", name, description, type, extra, warning, bodyHead })
  const written = writtenAtIn(basis, relativePath, extra, mtime)
  found.mtimes.push(mtime)
  found.memories.push({
    path: relativePath,
    absolutePath,
    name,
    description,
    type,
    mtime,
    extra,
    warning: withWrittenWarning(warning, written),
    bodyHead,
    writtenAt: written.at,
    writtenFrom: written.from
  })
  return "memory"
}

/** Files a parsed head held in `head` (its first `length` bytes, as the header scan read them). */
const collectHead = (
  parsed: Result.Result<ParsedFrontmatter, InvalidFrontmatterError>,
  relativePath: string,
  absolutePath: string,
  mtime: number,
  head: Buffer,
  length: number,
  found: Found,
  basis: AgeBasis
): HeadKind =>
  Result.isFailure(parsed)
    ? collectProblem(parsed.failure, relativePath, absolutePath, mtime, bodyHeadOf(head, length, 0), found, basis)
    : collectMemory(
      parsed.success,
      relativePath,
      absolutePath,
      mtime,
      bodyHeadOf(head, length, parsed.success.endLine),
      found,
      basis
    )

interface Found {
  readonly memories: Array<MemoryHeader>
  /** The mtime of each of `memories`, in the same order: what the sort reads. */
  readonly mtimes: Array<number>
  readonly problems: Array<ScanProblem>
  readonly headerless: Array<MemoryHeader>
  /** Told what each head read was made into, for the header cache (`HeaderCache`). */
  filed?: ((relativePath: string, head: CachedHead) => void) | undefined
}

/** `total`: the memory count when not every file was read (a capped scan); all memories read otherwise. */
const finish = (
  { headerless, memories, mtimes, problems }: Found,
  limit: number | undefined,
  total: number = memories.length
): ScanResult => {
  sortNewestFirst(memories, mtimes)
  sortNewestFirst(headerless)
  problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const cap = <A>(list: Array<A>) => limit === undefined || limit >= list.length ? list : list.slice(0, limit)
  const result = { memories: cap(memories), problems, total }
  return headerless.length === 0 ? result : { ...result, headerless: cap(headerless) }
}

const unreadable = (relativePath: string, detail: string): ScanProblem => ({
  path: relativePath,
  code: "unreadable",
  message: `${relativePath}: cannot be read (${detail}). Check its permissions, or remove it.`
})

// ---------------------------------------------------------------------------------------------------------------
// Live
// ---------------------------------------------------------------------------------------------------------------

/**
 * Files read (or stat-ed) per batch: one synchronous `MemoryFs` call each; between batches the fiber yields so
 * others (e.g. the main turn) run.
 */
const BATCH_SIZE = 512

/**
 * Listed files, in parallel arrays (no object per file): a full scan reads each batch as the walk lists it and
 * keeps nothing of it but the headers.
 */
interface Listing {
  readonly relativePaths: Array<string>
  readonly absolutePaths: Array<string>
  /**
   * Where each file's bytes are: for a symlinked file the real path it resolves to (inside the tree; the read
   * never follows a link), else its own path.
   */
  readonly sources: Array<string>
}

const emptyListing = (): Listing => ({ relativePaths: [], absolutePaths: [], sources: [] })

const symlinkEscape = (relativePath: string): ScanProblem => ({
  path: relativePath,
  code: "symlink-escape",
  message: `${relativePath}: symlink leads outside the memory directory; skipped.`
})

type Fs = MemoryFs["Service"]

/**
 * Lists the candidate files, handing them to `onBatch` in batches of at most `BATCH_SIZE` as the walk finds them
 * (a batch is not kept here, nor touched after `onBatch`), and returns the problems met on the way. Symlinks are
 * followed only when they resolve inside the tree; a symlinked file or directory that points at what the walk
 * lists anyway (by its real path) is dropped as a duplicate, so the result does not depend on the order the system
 * lists a directory in; a directory reached twice through links (or a link loop) is walked once.
 */
const walkTree = (
  fs: Fs,
  root: string,
  separator: string,
  options: ResolvedOptions,
  onBatch: (batch: Listing) => Effect.Effect<void>
): Effect.Effect<Array<ScanProblem>> =>
  Effect.gen(function*() {
    const problems: Array<ScanProblem> = []
    // The root's real path is needed only to follow a link: it is resolved at the first one (most trees have none).
    let realRoot: string | undefined
    let rootUnresolved = false
    const resolveRoot = Effect.suspend(() =>
      realRoot !== undefined ? Effect.succeed(realRoot) : Effect.map(fs.realPath(root), (real) => (realRoot = real))
    )
    /** Where a real path inside the tree is, relative to the real root (`""` for the root itself). */
    const underRoot = (realRoot: string, real: string) => real === realRoot ? "" : real.slice(realRoot.length + 1)
    // A file's real path inside the tree, relative and `/`-separated: the walk lists it there when it is a
    // candidate path (its real directories are all walked unless skipped), so a link to it is a duplicate.
    const listedAnyway = (realRoot: string, real: string) => {
      const relative = underRoot(realRoot, real).split(separator).join("/")
      return isCandidatePath(relative, options.skipDirs) && !options.exclude.has(relative)
    }
    const visitedDirs = new Set<string>()
    let batch = emptyListing()
    /** Adds a file to the batch; true when the batch is full and must be flushed. */
    const push = (relativePath: string, absolutePath: string, source: string): boolean => {
      batch.relativePaths.push(relativePath)
      batch.absolutePaths.push(absolutePath)
      return batch.sources.push(source) >= BATCH_SIZE
    }
    const flush = Effect.suspend(() => {
      const full = batch
      batch = emptyListing()
      return full.sources.length === 0 ? Effect.void : onBatch(full)
    })

    /** A symbolic link in the tree: followed when it stays inside, else a problem (for a memory or a directory). */
    const visitLink = (absolutePath: string, relativePath: string, name: string) =>
      Effect.gen(function*() {
        const rootReal = yield* Effect.result(resolveRoot)
        if (Result.isFailure(rootReal)) {
          // The root was listed, yet cannot be resolved now: no link can be checked, reported once.
          if (!rootUnresolved) problems.push(unreadable(".", rootReal.failure.detail))
          rootUnresolved = true
          return
        }
        const resolved = yield* Effect.result(
          Effect.flatMap(fs.realPath(absolutePath), (real) => Effect.map(fs.lstat(real), (info) => ({ real, info })))
        )
        if (Result.isFailure(resolved)) {
          const detail = resolved.failure.detail
          if (isMemoryFileName(name)) problems.push(unreadable(relativePath, `broken symlink: ${detail}`))
          return
        }
        const { info, real } = resolved.success
        if (!isInside(rootReal.success, real, { allowRoot: true, sep: separator })) {
          if (info.kind === "Directory" || isMemoryFileName(name)) problems.push(symlinkEscape(relativePath))
        } else if (info.kind === "Directory") {
          const realDir = underRoot(rootReal.success, real)
          // A directory the walk enters anyway is listed there, whichever the system lists first (the link is a
          // duplicate); one it does not enter (a dot-directory, say) is listed through the link.
          const walkedAnyway = isWalkedDir(realDir.split(separator).join("/"), options.skipDirs)
          if (!walkedAnyway && !isUnderSkippedDir(relativePath, options.skipDirs)) {
            yield* visit(absolutePath, realDir, relativePath)
          }
        } else if (info.kind === "File" && isMemoryFileName(name) && !listedAnyway(rootReal.success, real)) {
          if (push(relativePath, absolutePath, real)) yield* flush
        }
      })

    /**
     * Lists a directory a chunk at a time (never its whole listing at once), entering sub-directories in turn.
     * `realDir` is where the directory really is, relative to the real root: a directory is walked once.
     */
    const visit = (absoluteDir: string, realDir: string, relativeDir: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (visitedDirs.has(realDir)) return Effect.void
        visitedDirs.add(realDir)
        const realPrefix = realDir === "" ? "" : realDir + separator
        const prefix = relativeDir === "" ? "" : relativeDir + "/"
        const dirPrefix = absoluteDir + separator
        const onChunk = (entries: ReadonlyArray<DirectoryEntry>) =>
          Effect.gen(function*() {
            for (let i = 0; i < entries.length; i++) {
              const { kind, name } = entries[i]!
              if (kind === "File") {
                if (!isMemoryFileName(name)) continue
                const relativePath = prefix + name
                if (options.exclude.has(relativePath)) continue
                const absolutePath = dirPrefix + name
                if (push(relativePath, absolutePath, absolutePath)) yield* flush
              } else if (kind === "Directory") {
                const relativePath = prefix + name
                if (!isSkippedDirName(name) && !isUnderSkippedDir(relativePath, options.skipDirs)) {
                  yield* visit(dirPrefix + name, realPrefix + name, relativePath)
                }
              } else if (kind === "SymbolicLink" && !isSkippedDirName(name)) {
                const relativePath = prefix + name
                if (!options.exclude.has(relativePath)) yield* visitLink(dirPrefix + name, relativePath, name)
              }
            }
          })
        return fs.readDirectoryChunks(absoluteDir, BATCH_SIZE, onChunk).pipe(
          Effect.catch((error) =>
            Effect.sync(() => {
              if (error.reason === "NotDirectory" && relativeDir === "") {
                problems.push(unreadable(".", "not a directory"))
              } else if (error.reason !== "NotFound") {
                problems.push(unreadable(relativeDir === "" ? "." : relativeDir, error.detail))
              }
            })
          )
        )
      })

    yield* visit(root, "", "")
    yield* flush
    return problems
  })

/**
 * Reads the heads of `batch` and files each as a memory or a problem; `kinds[i]` says which. Each head is parsed
 * while its file is open (only its header block decoded when the fences are clean). One reader closure per batch,
 * none per file.
 */
const readBatch = (
  fs: Fs,
  buffer: Buffer,
  batch: Listing,
  found: Found,
  basis: AgeBasis
): Effect.Effect<Array<HeadKind>> => {
  const kinds: Array<HeadKind> = new Array(batch.sources.length).fill("none")
  let readFile: ReadAt | undefined
  let length = 0
  const readAt = (offset: number, size: number) => {
    const got = readFile!(buffer, offset, size)
    if (offset + got > length) length = offset + got
    return got
  }
  return Effect.as(
    fs.visitHeads(batch.sources, {
      file: (index, mtime, read) => {
        readFile = read
        length = 0
        const relativePath = batch.relativePaths[index]!
        const parsed = parseLocatedHead(buffer, readHeadLocation(buffer, readAt), relativePath)
        kinds[index] = collectHead(
          parsed,
          relativePath,
          batch.absolutePaths[index]!,
          mtime,
          buffer,
          length,
          found,
          basis
        )
      },
      failed: (index, error) => {
        // Deleted, or no longer a regular file, between listing and reading: no longer a memory, nothing to report.
        if (error.reason === "NotFound" || error.reason === "NotRegularFile") return
        found.problems.push(unreadable(batch.relativePaths[index]!, error.detail))
      }
    }),
    kinds
  )
}

/**
 * A batch through the header cache: one `lstat` per file; a file whose size and mtime match its entry is filed from
 * the cache without being opened, the others are read as without a cache and their heads recorded. Every memory
 * whose bytes are its own path (not a link's target) carries the size, so later readers need no second `lstat`.
 */
const readBatchCached = (
  fs: Fs,
  buffer: Buffer,
  batch: Listing,
  found: Found,
  basis: AgeBasis,
  cache: HeaderCacheTable
): Effect.Effect<void> =>
  Effect.flatMap(fs.lstatMany(batch.sources), (infos) => {
    const start = found.memories.length
    const misses = emptyListing()
    const missInfos: Array<FileInfo> = []
    const sizes = new Map<string, number>()
    for (let i = 0; i < infos.length; i++) {
      const info = infos[i]!
      // Gone since the listing: not a memory, nothing to report (as the reader says of it).
      if (info instanceof MemoryFsError && info.reason === "NotFound") continue
      const relativePath = batch.relativePaths[i]!
      const absolutePath = batch.absolutePaths[i]!
      const source = batch.sources[i]!
      const head = info instanceof MemoryFsError || info.kind !== "File"
        ? undefined
        : cache.get(source, info.size, info.mtimeMs)
      if (!(info instanceof MemoryFsError) && info.kind === "File" && source === absolutePath) {
        sizes.set(relativePath, info.size)
      }
      if (head === undefined) {
        misses.relativePaths.push(relativePath)
        misses.absolutePaths.push(absolutePath)
        misses.sources.push(source)
        // a link, a FIFO or a file that cannot be stat-ed is read (and refused) by the reader, never recorded
        if (!(info instanceof MemoryFsError) && info.kind === "File") missInfos[misses.sources.length - 1] = info
        continue
      }
      const mtime = (info as FileInfo).mtimeMs
      if (head.kind === "memory") {
        collectMemory(head, relativePath, absolutePath, mtime, head.bodyHead, found, basis)
      } else {
        const error = { reason: head.code as InvalidFrontmatterError["reason"], message: head.message, line: head.line }
        collectProblem(error, relativePath, absolutePath, mtime, head.headText, found, basis)
      }
    }
    // the batch's headers are fresh objects, not handed out yet
    const withSizes = () => {
      for (let i = start; i < found.memories.length; i++) {
        const size = sizes.get(found.memories[i]!.path)
        if (size !== undefined) (found.memories[i] as { size?: number }).size = size
      }
    }
    if (misses.sources.length === 0) return Effect.sync(withSizes)
    const indexOf = new Map<string, number>()
    for (let j = 0; j < misses.relativePaths.length; j++) indexOf.set(misses.relativePaths[j]!, j)
    found.filed = (relativePath, head) => {
      const j = indexOf.get(relativePath)
      const info = j === undefined ? undefined : missInfos[j]
      if (info !== undefined) cache.set(misses.sources[j!]!, info.size, info.mtimeMs, head)
    }
    return Effect.map(readBatch(fs, buffer, misses, found, basis), () => {
      found.filed = undefined
      withSizes()
    })
  })

/** A full scan: each batch's heads read as the walk lists it, the fiber yielding between batches. */
const scanAll = (
  fs: Fs,
  buffer: Buffer,
  root: string,
  separator: string,
  options: ResolvedOptions,
  basis: AgeBasis,
  cache?: HeaderCacheTable | undefined
): Effect.Effect<ScanResult> =>
  Effect.gen(function*() {
    const found: Found = { memories: [], mtimes: [], problems: [], headerless: [] }
    let batches = 0
    const walkProblems = yield* walkTree(fs, root, separator, options, (batch) => {
      const read = cache === undefined ?
        readBatch(fs, buffer, batch, found, basis) :
        readBatchCached(fs, buffer, batch, found, basis, cache)
      return batches++ === 0 ? read : Effect.andThen(Effect.yieldNow, read)
    })
    for (const problem of walkProblems) found.problems.push(problem)
    if (cache !== undefined && options.writeCache) {
      // entries of files the walk did not look for stay (a skipped `team/`, an excluded file); of the rest, only
      // the files it found
      yield* cache.save((path) => {
        const relative = isInside(root, path, { sep: separator }) ?
          path.slice(withSeparator(root, separator).length).split(separator).join("/") :
          ""
        return relative !== "" && (options.exclude.has(relative) || isUnderSkippedDir(relative, options.skipDirs))
      })
    }
    return finish(found, undefined)
  })

/** A listed file with the mtime its stat gave, for the newest-first selection of a capped scan. */
interface DatedCandidate {
  readonly path: string
  readonly mtime: number
  readonly absolutePath: string
  readonly source: string
}

/**
 * A capped scan: one walk that stats every file (a batch per listed batch) and keeps the newest in a bounded
 * heap, then the heads of those only, newest first. Only when heads turn out not to be memories is the tree
 * listed again for the next page.
 */
const scanNewest = (
  fs: Fs,
  buffer: Buffer,
  root: string,
  separator: string,
  options: ResolvedOptions,
  limit: number,
  basis: AgeBasis
): Effect.Effect<ScanResult> =>
  Effect.gen(function*() {
    const found: Found = { memories: [], mtimes: [], problems: [], headerless: [] }
    let listed = 0
    let first = true
    const select = (count: number, olderThan: DatedCandidate | undefined) =>
      Effect.gen(function*() {
        const selection = newestSelection<DatedCandidate>(count, olderThan)
        const walkProblems = yield* walkTree(fs, root, separator, options, (batch) =>
          Effect.map(fs.mtimeMany(batch.sources), (mtimes) => {
            for (let i = 0; i < mtimes.length; i++) {
              const info = mtimes[i]!
              // Gone since the listing: not a candidate. Not stat-able (e.g. a permission change under way):
              // still a candidate; reading it reports why.
              if (info instanceof MemoryFsError && info.reason === "NotFound") continue
              if (first) {
                listed++
              }
              const mtime = info instanceof MemoryFsError ? Number.NEGATIVE_INFINITY : info
              const path = batch.relativePaths[i]!
              if (selection.admits(mtime, path)) {
                selection.offer({ path, mtime, absolutePath: batch.absolutePaths[i]!, source: batch.sources[i]! })
              }
            }
          }))
        // Later pages walk the same tree again: its problems are reported once.
        if (first) {
          found.problems.push(...walkProblems)
        }
        first = false
        return selection.take()
      })
    // Nothing to read, but the total and the tree's problems are still reported.
    if (limit === 0) {
      yield* select(0, undefined)
    }
    const read = new Set<string>()
    let notMemories = 0
    yield* readNewestBatched(limit, select, (items) => {
      const kinds: Array<HeadKind> = new Array(items.length).fill("none")
      // A file whose mtime changed between two pages can come up twice: read once.
      const batch = emptyListing()
      const at: Array<number> = []
      for (let i = 0; i < items.length; i++) {
        const item = items[i]!
        if (read.has(item.path)) {
          continue
        }
        read.add(item.path)
        at.push(i)
        batch.relativePaths.push(item.path)
        batch.absolutePaths.push(item.absolutePath)
        batch.sources.push(item.source)
      }
      return Effect.map(readBatch(fs, buffer, batch, found, basis), (readKinds) => {
        for (let j = 0; j < readKinds.length; j++) {
          kinds[at[j]!] = readKinds[j]!
          if (readKinds[j] !== "memory") {
            notMemories++
          }
        }
        return kinds
      })
    })
    return finish(found, limit, Math.max(0, listed - notMemories))
  })

/** The live scanner over a `MemoryFs` (the real file system with `MemoryFs.layer`). */
export const make: Effect.Effect<Scanner["Service"], never, MemoryFs | Path.Path> = Effect.gen(function*() {
  const fs = yield* MemoryFs
  const path = yield* Path.Path
  // Commit times of a git-tracked memory directory, when the layer is given them (`Memdir.layer` with `gitAges`).
  const gitAges = yield* Effect.serviceOption(GitAges)
  // What earlier scans made of unchanged heads, when the layer is given a cache (`Memdir.layer`): full scans use it.
  const headerCache = yield* Effect.serviceOption(HeaderCache)
  // One buffer per scanner: each batch uses it synchronously, so concurrent scans never interleave on it.
  const buffer = Buffer.allocUnsafe(FRONTMATTER_MAX_BYTES + 1)

  const scan = Effect.fn("Scanner.scan")(function*(memoryDir: string, options?: ScanOptions) {
    const resolved = resolveOptions(options)
    const root = path.resolve(memoryDir)
    // Each header's age counts from the memory's own time (MemoryAge), stamped as the header is built.
    const basis = yield* ageBasis(Option.isNone(gitAges) ? undefined : yield* gitAges.value.commitTimes(root))
    const limit = resolved.limit
    const cache = limit === undefined && Option.isSome(headerCache) ? yield* headerCache.value.open(root) : undefined
    const result = limit === undefined ?
      yield* scanAll(fs, buffer, root, path.sep, resolved, basis, cache) :
      yield* scanNewest(fs, buffer, root, path.sep, resolved, limit, basis)
    return result
  })

  return Scanner.of({ scan })
})

/** The live scanner; its file access is the `MemoryFs` it is given (live or in memory). */
export const layer: Layer.Layer<Scanner, never, MemoryFs | Path.Path> = Layer.effect(Scanner, make)

/** The live scanner over the real file system. */
export const layerNode: Layer.Layer<Scanner, never, Path.Path> = layer.pipe(Layer.provide(MemoryFsLayer))

// ---------------------------------------------------------------------------------------------------------------
// In memory
// ---------------------------------------------------------------------------------------------------------------

/** One file of the in-memory scanner: its full content (only the head is parsed) and its mtime. */
export interface TestFile {
  readonly content: string
  /** Epoch milliseconds. */
  readonly mtime: number
}

/**
 * A scanner over files held in memory, keyed by path relative to the memory directory, with the same rules,
 * parser and order as the live one. Whatever directory `scan` is given, it sees these files.
 */
export const layerTest = (files: Readonly<Record<string, TestFile>>): Layer.Layer<Scanner> =>
  Layer.succeed(
    Scanner,
    Scanner.of({
      scan: (memoryDir, options) =>
        Effect.gen(function*() {
          const basis = yield* ageBasis()
          const resolved = resolveOptions(options)
          const base = memoryDir.replace(/[\\/]+$/, "")
          const found: Found = { memories: [], mtimes: [], problems: [], headerless: [] }
          const listed: Array<{ readonly path: string; readonly mtime: number; readonly content: string }> = []
          for (const [key, file] of Object.entries(files)) {
            const relativePath = normalizeRelativePath(key)
            if (!isCandidatePath(relativePath, resolved.skipDirs) || resolved.exclude.has(relativePath)) continue
            listed.push({ path: relativePath, mtime: file.mtime, content: file.content })
          }
          const readOne = (file: (typeof listed)[number]): HeadKind => {
            const parsed = parseFrontmatter(file.content, file.path)
            // The live scanner's view of the file: its head, as far as the header scan would read it.
            const head = Buffer.from(file.content.slice(0, FRONTMATTER_MAX_BYTES), "utf8")
            return collectHead(parsed, file.path, `${base}/${file.path}`, file.mtime, head, head.length, found, basis)
          }
          const limit = resolved.limit
          if (limit === undefined) {
            for (const file of listed) readOne(file)
            return finish(found, undefined)
          }
          // As the live scanner: only the newest heads are read, one further for each that is not a memory.
          let notMemories = 0
          yield* readNewest<(typeof listed)[number], never>(
            limit,
            (count, olderThan) => Effect.sync(() => newest(listed, count, olderThan)),
            (file) =>
              Effect.sync(() => {
                const kind = readOne(file)
                if (kind !== "memory") notMemories++
                return kind
              })
          )
          return finish(found, limit, listed.length - notMemories)
        })
    })
  )
