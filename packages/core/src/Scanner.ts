/**
 * Scanner: the frontmatter of every memory file, first 30 lines only, newest first
 * (docs/architecture.md#how-a-recall-flows).
 *
 * Every `*.md` under the memory directory except the `MEMORY.md` indexes, skipping `logs/` and dot-dirs, never
 * leaving the tree through a symlink. Bodies are never read: each file read gets one open, one fstat (for the
 * mtime, no second path lookup), a read of its first 4 KiB (more only while 30 lines are incomplete, at most
 * 64 KiB) and one close. Bad files become `problems`; the scan itself never fails.
 *
 * With a `limit` (recall), the scan reads only what it keeps: it lists and stats every file, picks the newest by
 * mtime with a bounded heap, and reads only their heads, one further for each head that is not a valid memory.
 */
import { Path } from "@effect/platform"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
// The scan is memdir's one hot path, measured against merely reading the files' heads with plain fs
// (bench/scan.bench.ts). Batched synchronous node:fs calls are the fastest way to do it; the platform
// FileSystem and fs.promises pay an async round trip per call, so this module reads node:fs directly.
import * as NodeFs from "node:fs"
import type { InvalidFrontmatterError } from "./Errors.js"
import { FRONTMATTER_MAX_BYTES, type ParsedFrontmatter, parseFrontmatter } from "./Frontmatter.js"
import { GitAges } from "./GitAges.js"
import { bodyHeadOf, headerlessMemory } from "./internal/scanBody.js"
import { readHead } from "./internal/scanHead.js"
import {
  compareNewestFirst,
  isCandidatePath,
  isMemoryFileName,
  isSkippedDirName,
  isUnderSkippedDir,
  normalizeLimit,
  normalizeRelativePath
} from "./internal/scanPaths.js"
import { type HeadKind, newest, newestSelection, readNewest } from "./internal/scanSelect.js"
import type { MemoryHeader, ScanProblem } from "./Memory.js"
import { stampScan } from "./MemoryAge.js"

export { FRONTMATTER_MAX_BYTES, FRONTMATTER_MAX_LINES } from "./Frontmatter.js"
/** Reference: 200 candidates for the selector. */
export const DEFAULT_CANDIDATE_CAP = 200
export { FIRST_READ_BYTES } from "./internal/scanHead.js"

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

export class Scanner extends Context.Tag("@memdir/core/Scanner")<Scanner, {
  /** Never fails: an absent directory is an empty scan, bad files are problems. */
  readonly scan: (memoryDir: string, options?: ScanOptions) => Effect.Effect<ScanResult>
}>() {}

// ---------------------------------------------------------------------------------------------------------------
// Shared by the live and the in-memory scanner
// ---------------------------------------------------------------------------------------------------------------

interface ResolvedOptions {
  readonly limit: number | undefined
  readonly exclude: ReadonlySet<string>
  readonly skipDirs: ReadonlyArray<string>
}

const resolveOptions = (options: ScanOptions | undefined): ResolvedOptions => ({
  limit: normalizeLimit(options?.limit),
  exclude: options?.exclude === undefined || options.exclude.size === 0
    ? new Set()
    : new Set([...options.exclude].map(normalizeRelativePath)),
  skipDirs: (options?.skipDirs ?? []).map(normalizeRelativePath)
})

/**
 * Files a parsed header as a memory, or its failure as a problem (and, for a text file, as a headerless memory).
 * `head` holds the first `length` bytes of the file, as the header scan read them.
 */
const collect = (
  parsed: Either.Either<ParsedFrontmatter, InvalidFrontmatterError>,
  relativePath: string,
  absolutePath: string,
  mtime: number,
  head: Buffer,
  length: number,
  found: Found
): HeadKind => {
  if (Either.isLeft(parsed)) {
    const error = parsed.left
    const problem = { path: relativePath, code: error.reason, message: error.message, line: error.line }
    found.problems.push(problem)
    const headerless = headerlessMemory(problem, relativePath, absolutePath, mtime, bodyHeadOf(head, length, 0))
    if (headerless === undefined) return "none"
    found.headerless.push(headerless)
    return "headerless"
  }
  const { description, endLine, extra, name, type, warning } = parsed.right
  const bodyHead = bodyHeadOf(head, length, endLine)
  found.memories.push({ path: relativePath, absolutePath, name, description, type, mtime, extra, warning, bodyHead })
  return "memory"
}

interface Found {
  readonly memories: Array<MemoryHeader>
  readonly problems: Array<ScanProblem>
  readonly headerless: Array<MemoryHeader>
}

/** `total`: the memory count when not every file was read (a capped scan); all memories read otherwise. */
const finish = (
  { headerless, memories, problems }: Found,
  limit: number | undefined,
  total: number = memories.length
): ScanResult => {
  memories.sort(compareNewestFirst)
  headerless.sort(compareNewestFirst)
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

/** Files read per synchronous batch; between batches the fiber yields so others (e.g. the main turn) run. */
const BATCH_SIZE = 512

interface Candidate {
  readonly relativePath: string
  readonly absolutePath: string
  /** For a symlinked file: the real path it resolves to (inside the tree). */
  readonly realPath?: string | undefined
}

const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : String(error)

// O_NONBLOCK: a FIFO swapped in after the directory listing must not block the scan (no effect on files).
const OPEN_FLAGS = NodeFs.constants.O_RDONLY | (NodeFs.constants.O_NONBLOCK ?? 0)

/**
 * Lists the candidate files, handing each to `onCandidate` as the walk finds it (nothing is kept here), and
 * returns the problems met on the way. Symlinks are followed only when they resolve inside the tree; a directory
 * reached twice (through a link, or a link loop) is walked once; a symlinked file that points at a memory the
 * walk lists anyway is dropped as a duplicate.
 */
const walkTree = (
  root: string,
  separator: string,
  options: ResolvedOptions,
  onCandidate: (candidate: Candidate) => void
): Array<ScanProblem> => {
  const problems: Array<ScanProblem> = []
  let realRoot: string
  try {
    realRoot = NodeFs.realpathSync(root)
  } catch (error) {
    if (errorCode(error) !== "ENOENT") problems.push(unreadable(".", errorCode(error)))
    return problems
  }
  const insideRoot = (real: string) => real === realRoot || real.startsWith(realRoot + separator)
  // A file's real path inside the tree, relative and `/`-separated: the walk lists it there when it is a
  // candidate path (its real directories are all walked unless skipped), so a link to it is a duplicate.
  const listedAnyway = (real: string) => {
    const relative = real.slice(realRoot.length + 1).split(separator).join("/")
    return isCandidatePath(relative, options.skipDirs) && !options.exclude.has(relative)
  }
  const visitedDirs = new Set<string>()

  const visit = (absoluteDir: string, realDir: string, relativeDir: string): void => {
    if (visitedDirs.has(realDir)) return
    visitedDirs.add(realDir)
    let entries: Array<NodeFs.Dirent>
    try {
      entries = NodeFs.readdirSync(absoluteDir, { withFileTypes: true })
    } catch (error) {
      const code = errorCode(error)
      if (code === "ENOTDIR" && relativeDir === "") problems.push(unreadable(".", "not a directory"))
      else if (code !== "ENOENT") problems.push(unreadable(relativeDir === "" ? "." : relativeDir, code))
      return
    }
    const prefix = relativeDir === "" ? "" : relativeDir + "/"
    for (const entry of entries) {
      const name = entry.name
      const absolutePath = absoluteDir + separator + name
      const relativePath = prefix + name
      if (entry.isDirectory()) {
        if (!isSkippedDirName(name) && !isUnderSkippedDir(relativePath, options.skipDirs)) {
          visit(absolutePath, realDir + separator + name, relativePath)
        }
      } else if (entry.isFile()) {
        if (isMemoryFileName(name) && !options.exclude.has(relativePath)) {
          onCandidate({ relativePath, absolutePath })
        }
      } else if (entry.isSymbolicLink()) {
        if (isSkippedDirName(name) || options.exclude.has(relativePath)) continue
        let real: string
        let stats: NodeFs.Stats
        try {
          real = NodeFs.realpathSync(absolutePath)
          stats = NodeFs.statSync(real)
        } catch (error) {
          if (isMemoryFileName(name)) problems.push(unreadable(relativePath, `broken symlink: ${errorCode(error)}`))
          continue
        }
        if (!insideRoot(real)) {
          if (stats.isDirectory() || isMemoryFileName(name)) {
            problems.push({
              path: relativePath,
              code: "symlink-escape",
              message: `${relativePath}: symlink leads outside the memory directory; skipped.`
            })
          }
        } else if (stats.isDirectory()) {
          if (!isUnderSkippedDir(relativePath, options.skipDirs)) visit(absolutePath, real, relativePath)
        } else if (stats.isFile() && isMemoryFileName(name) && !listedAnyway(real)) {
          onCandidate({ relativePath, absolutePath, realPath: real })
        }
      }
    }
  }

  visit(root, realRoot, "")
  return problems
}

/**
 * One file: open, fstat (the mtime, from the open descriptor: no second path lookup), the head, close.
 * `undefined` when the path is no longer a regular file.
 */
const readFile = (
  buffer: Buffer,
  candidate: Candidate
):
  | {
    readonly mtime: number
    readonly parsed: Either.Either<ParsedFrontmatter, InvalidFrontmatterError>
    /** Bytes of the file now at the start of `buffer`. */
    readonly length: number
  }
  | undefined =>
{
  const fd = NodeFs.openSync(candidate.absolutePath, OPEN_FLAGS)
  try {
    const stats = NodeFs.fstatSync(fd)
    if (!stats.isFile()) return undefined
    let length = 0
    const parsed = readHead(
      buffer,
      (offset, size) => {
        const read = NodeFs.readSync(fd, buffer, offset, size, offset)
        length = Math.max(length, offset + read)
        return read
      },
      candidate.relativePath
    )
    return { mtime: stats.mtimeMs, parsed, length }
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** Reads one candidate's head and files it as a memory or a problem. */
const readOne = (buffer: Buffer, candidate: Candidate, found: Found): HeadKind => {
  // node:fs reports failure by throwing; this is the boundary where that becomes a problem entry.
  let file: ReturnType<typeof readFile>
  try {
    file = readFile(buffer, candidate)
  } catch (error) {
    const code = errorCode(error)
    // Deleted between listing and reading: no longer a memory, nothing to report.
    if (code !== "ENOENT") found.problems.push(unreadable(candidate.relativePath, code))
    return "none"
  }
  if (file === undefined) return "none"
  const { length, mtime, parsed } = file
  return collect(parsed, candidate.relativePath, candidate.absolutePath, mtime, buffer, length, found)
}

/** A listed file with the mtime its stat gave, for the newest-first selection of a capped scan. */
interface DatedCandidate {
  readonly path: string
  readonly mtime: number
  readonly candidate: Candidate
}

/** The mtime of a listed file by one stat (no open), `undefined` when it is gone since the listing. */
const statMtime = (candidate: Candidate): number | undefined => {
  try {
    return NodeFs.statSync(candidate.realPath ?? candidate.absolutePath, { throwIfNoEntry: false })?.mtimeMs
  } catch {
    // Listed but not stat-able (e.g. a permission change under way): still a candidate; reading it reports why.
    return Number.NEGATIVE_INFINITY
  }
}

/**
 * A capped scan: one walk that stats every file and keeps the newest in a bounded heap, then the heads of those
 * only, newest first. Only when heads turn out not to be memories is the tree listed again for the next page.
 */
const scanNewest = (
  buffer: Buffer,
  root: string,
  separator: string,
  options: ResolvedOptions,
  limit: number
): ScanResult => {
  const found: Found = { memories: [], problems: [], headerless: [] }
  let listed = 0
  let first = true
  const select = (count: number, olderThan: DatedCandidate | undefined): Array<DatedCandidate> => {
    const selection = newestSelection<DatedCandidate>(count, olderThan)
    const walkProblems = walkTree(root, separator, options, (candidate) => {
      const mtime = statMtime(candidate)
      if (mtime === undefined) return
      if (first) listed++
      selection.offer({ path: candidate.relativePath, mtime, candidate })
    })
    // Later pages walk the same tree again: its problems are reported once.
    if (first) found.problems.push(...walkProblems)
    first = false
    return selection.take()
  }
  // Nothing to read, but the total and the tree's problems are still reported.
  if (limit === 0) select(0, undefined)
  const read = new Set<string>()
  let notMemories = 0
  readNewest(limit, select, (item) => {
    // A file whose mtime changed between two pages can come up twice: read once.
    if (read.has(item.path)) return "none"
    read.add(item.path)
    const kind = readOne(buffer, item.candidate, found)
    if (kind !== "memory") notMemories++
    return kind
  })
  return finish(found, limit, Math.max(0, listed - notMemories))
}

/** The live scanner over the real file system. */
export const make: Effect.Effect<Context.Tag.Service<Scanner>, never, Path.Path> = Effect.gen(function*() {
  const path = yield* Path.Path
  // Commit times of a git-tracked memory directory, when the layer is given them (`Memdir.layer` with `gitAges`).
  const gitAges = yield* Effect.serviceOption(GitAges)
  // One buffer per scanner: each batch uses it synchronously, so concurrent scans never interleave on it.
  const buffer = Buffer.allocUnsafe(FRONTMATTER_MAX_BYTES + 1)

  const scanFiles = Effect.fn("Scanner.scanFiles")(function*(memoryDir: string, options?: ScanOptions) {
    const resolved = resolveOptions(options)
    const root = path.resolve(memoryDir)
    const limit = resolved.limit
    if (limit !== undefined) return yield* Effect.sync(() => scanNewest(buffer, root, path.sep, resolved, limit))
    const candidates: Array<Candidate> = []
    const problems = yield* Effect.sync(() => walkTree(root, path.sep, resolved, (c) => candidates.push(c)))
    const found: Found = { memories: [], problems, headerless: [] }
    for (let start = 0; start < candidates.length; start += BATCH_SIZE) {
      if (start > 0) yield* Effect.yieldNow()
      const end = Math.min(start + BATCH_SIZE, candidates.length)
      yield* Effect.sync(() => {
        for (let i = start; i < end; i++) readOne(buffer, candidates[i]!, found)
      })
    }
    return finish(found, undefined)
  })
  // Each header's age counts from the memory's own time (MemoryAge): one stamp per scan.
  const scan = (memoryDir: string, options?: ScanOptions) =>
    Effect.flatMap(scanFiles(memoryDir, options), (result) =>
      Option.isNone(gitAges) ?
        stampScan(result) :
        Effect.flatMap(gitAges.value.commitTimes(path.resolve(memoryDir)), (times) => stampScan(result, times)))

  return Scanner.of({ scan })
})

export const layer: Layer.Layer<Scanner, never, Path.Path> = Layer.effect(Scanner, make)

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
        Effect.flatMap(
          Effect.sync(() => {
            const resolved = resolveOptions(options)
            const base = memoryDir.replace(/[\\/]+$/, "")
            const found: Found = { memories: [], problems: [], headerless: [] }
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
              return collect(parsed, file.path, `${base}/${file.path}`, file.mtime, head, head.length, found)
            }
            const limit = resolved.limit
            if (limit === undefined) {
              for (const file of listed) readOne(file)
              return finish(found, undefined)
            }
            // As the live scanner: only the newest heads are read, one further for each that is not a memory.
            let notMemories = 0
            readNewest<(typeof listed)[number]>(
              limit,
              (count, olderThan) => newest(listed, count, olderThan),
              (file) => {
                const kind = readOne(file)
                if (kind !== "memory") notMemories++
                return kind
              }
            )
            return finish(found, limit, listed.length - notMemories)
          }),
          (result) => stampScan(result)
        )
    })
  )
