/**
 * GitAges: the last commit time of each memory in a memory directory that git tracks (a directory kept in its own
 * repository, or `.claude/memory/` committed inside a project), so a clone keeps its memories' ages
 * (docs/file-format.md#age-and-staleness).
 *
 * No git process on the hot path: the work tree is found by reading for `.git` upwards, HEAD by reading git's own
 * files, and the times are cached under the memory directory (`.memdir-cache/commit-times.json`) keyed by HEAD.
 * Only when HEAD moved does one `git log` (and one `git diff` for the files changed since) rebuild the cache. A file
 * whose mtime differs from the one cached (edited since) or that differed from HEAD counts from its own mtime.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import * as Schema from "effect/Schema"
import * as Git from "./Git.js"
import { commitTimesArgs, parseCommitTimes } from "./internal/git/commitTimes.js"
import { parseDotGitFile, parsePointerFile } from "./internal/git/files.js"
import type { CommitTimes } from "./MemoryAge.js"
import { layer as MemoryFsLayer, MemoryFs } from "./MemoryFs.js"

/** The cache, under the memory directory (a dot-directory: never a memory, never listed). */
export const CACHE_DIR = ".memdir-cache"
export const CACHE_FILE = "commit-times.json"
const MAX_GIT_FILE_BYTES = 64 * 1024
const MAX_CACHE_BYTES = 16 * 1024 * 1024
/** How far up from the memory directory a `.git` is looked for. */
const MAX_LEVELS = 64

const CacheSchema = Schema.Struct({
  head: Schema.String,
  /** relative path → [commit ms, mtime ms when cached]. */
  files: Schema.Record(Schema.String, Schema.Tuple([Schema.Number, Schema.Number]))
})
type Cache = typeof CacheSchema.Type
const decodeCache = Schema.decodeUnknownOption(Schema.fromJsonString(CacheSchema))

export class GitAges extends Context.Service<GitAges, {
  /**
   * The commit times of the memories under `memoryDir` (a real, absolute path), or `undefined` when git does not
   * track it. Never fails: whatever cannot be read means "no commit times" (ages then come from mtimes).
   */
  readonly commitTimes: (memoryDir: string) => Effect.Effect<CommitTimes | undefined>
}>()("@memdir/core/GitAges") {}

const SHA = /^[0-9a-f]{40,64}$/

export const make: Effect.Effect<GitAges["Service"], never, Git.Git | MemoryFs | Path.Path> = Effect.gen(
  function*() {
    const git = yield* Git.Git
    const fs = yield* MemoryFs
    const path = yield* Path.Path

    const readSmall = (file: string, maxBytes = MAX_GIT_FILE_BYTES) =>
      fs.readFile(file, { maxBytes }).pipe(Effect.map((read) => read.text), Effect.option)

    /** The git dir of the work tree holding `dir`, and the common dir (where shared refs live). */
    const findGitDir = Effect.fn("GitAges.findGitDir")(function*(dir: string) {
      let at = dir
      for (let level = 0; level < MAX_LEVELS; level++) {
        const dotGit = path.join(at, ".git")
        const info = yield* Effect.option(fs.lstat(dotGit))
        if (info._tag === "Some" && info.value.kind === "Directory") return { gitDir: dotGit, commonDir: dotGit }
        if (info._tag === "Some" && info.value.kind === "File") {
          const text = yield* readSmall(dotGit)
          const target = text._tag === "Some" ? parseDotGitFile(text.value) : undefined
          if (target === undefined) return undefined
          const gitDir = path.resolve(at, target)
          const common = yield* readSmall(path.join(gitDir, "commondir"))
          const commonDir = common._tag === "Some" ? parsePointerFile(common.value) : undefined
          return { gitDir, commonDir: commonDir === undefined ? gitDir : path.resolve(gitDir, commonDir) }
        }
        const parent = path.dirname(at)
        if (parent === at) return undefined
        at = parent
      }
      return undefined
    })

    /** HEAD's commit, read from git's files (loose ref, then packed-refs); `undefined` when it cannot be told. */
    const readHead = Effect.fn("GitAges.readHead")(function*(where: { gitDir: string; commonDir: string }) {
      const head = yield* readSmall(path.join(where.gitDir, "HEAD"))
      if (head._tag === "None") return undefined
      const text = head.value.trim()
      if (SHA.test(text)) return text
      const ref = /^ref:\s*(refs\/[^\s]+)$/.exec(text)?.[1]
      if (ref === undefined || ref.split("/").includes("..")) return undefined
      for (const base of [where.gitDir, where.commonDir]) {
        const loose = yield* readSmall(path.join(base, ...ref.split("/")))
        if (loose._tag === "Some" && SHA.test(loose.value.trim())) return loose.value.trim()
      }
      const packed = yield* readSmall(path.join(where.commonDir, "packed-refs"), MAX_CACHE_BYTES)
      if (packed._tag === "None") return undefined
      for (const line of packed.value.split("\n")) {
        const [sha, name] = line.trim().split(" ")
        if (name === ref && sha !== undefined && SHA.test(sha)) return sha
      }
      return undefined
    })

    /** One `git log` (and one `git diff`) in the memory directory: the cache for `head`. */
    const build = Effect.fn("GitAges.build")(function*(memoryDir: string, head: string) {
      // `--relative`: paths relative to the memory directory, and only the commits that touched it.
      const log = yield* git.exec(commitTimesArgs(true), { cwd: memoryDir })
      const changed = yield* git.exec(["diff", "-z", "--name-only", "--relative", "HEAD", "--", "."], {
        cwd: memoryDir
      })
      const dirty = new Set(changed.stdout.split("\0").filter((name) => name.length > 0))
      const files: Record<string, readonly [number, number]> = {}
      for (const [relative, ms] of parseCommitTimes(log.stdout)) {
        if (!relative.endsWith(".md") || dirty.has(relative)) continue
        const info = yield* Effect.option(fs.lstat(path.join(memoryDir, ...relative.split("/"))))
        if (info._tag === "Some" && info.value.kind === "File") files[relative] = [ms, info.value.mtimeMs]
      }
      const cache: Cache = { head, files }
      const cacheDir = path.join(memoryDir, CACHE_DIR)
      yield* fs.makeDirectory(cacheDir, { within: memoryDir })
      yield* fs.writeFileAtomic(path.join(cacheDir, CACHE_FILE), JSON.stringify(cache), { within: memoryDir })
      return cache
    })

    const commitTimes = Effect.fn("GitAges.commitTimes")(function*(memoryDir: string) {
      const where = yield* findGitDir(memoryDir)
      if (where === undefined) return undefined
      const head = yield* readHead(where)
      if (head === undefined) return undefined
      const cachePath = path.join(memoryDir, CACHE_DIR, CACHE_FILE)
      const cached = yield* readSmall(cachePath, MAX_CACHE_BYTES)
      const hit = cached._tag === "Some" ? decodeCache(cached.value) : undefined
      const cache = hit !== undefined && hit._tag === "Some" && hit.value.head === head ?
        hit.value :
        // A failed rebuild (git missing, a timeout, an unwritable cache) leaves ages to mtimes, never a failed scan.
        yield* build(memoryDir, head).pipe(Effect.orElseSucceed(() => undefined))
      if (cache === undefined) return undefined
      const times: CommitTimes = (relative, mtime) => {
        const entry = Object.hasOwn(cache.files, relative) ? cache.files[relative] : undefined
        return entry !== undefined && entry[1] === mtime ? entry[0] : undefined
      }
      return times
    })

    return GitAges.of({ commitTimes })
  }
)

/** Over the `Git` and `MemoryFs` given (the CLI gives `Git.layer`, which runs git as a child process). */
export const layer: Layer.Layer<GitAges, never, Git.Git | MemoryFs | Path.Path> = Layer.effect(GitAges, make)

/**
 * With git as a child process (`Git.layer`) and the live `MemoryFs`: what the CLI gives `Memdir.layer`. The two are
 * provided one after the other, not merged: a merge builds them on forked fibers, costly in a process that has just
 * started (docs/architecture.md#start-up).
 */
export const layerLive: Layer.Layer<GitAges, never, ChildProcessSpawner | Path.Path> = layer.pipe(
  Layer.provide(Git.layer),
  Layer.provide(MemoryFsLayer)
)
