/**
 * Team sync through git (SPEC §8): an existing distributed engine, no home-made server. `memdir team sync`
 * commits local team changes, fetches the remote's `main`, inspects what came in BEFORE it reaches the working
 * tree, merges (keeping both versions of a memory two people edited at once) and pushes.
 *
 * Layout: memdir manages the clone. Its git directory is `<memdir>/.team.git` (outside `team/`, so the scanner,
 * the audit and the agent never see git's files), its working tree is `<memdir>/team/`. Every git call names both
 * explicitly and runs with hooks off, symlinks checked out as plain files, NTFS/HFS path protection on and the
 * `ext::` transport refused. Dot-files in `team/` (editor swap files, memdir's temp files) are never committed.
 *
 * Incoming: the fetched tree is listed (`git ls-tree -r -z --long`) and refused WHOLE, with a report, when any
 * entry is a symlink (120000), a submodule (160000) or another special mode, a dot-file, a name TeamGuard's
 * layers 1+2 refuse, a blob over 250,000 bytes, or a blob holding a likely secret (SecretScan). Nothing is merged
 * then and the working tree is untouched: the merge itself is computed without a working tree
 * (`git merge-tree --write-tree`, git ≥ 2.38), the result tree is inspected again, committed, and only then
 * checked out, as a fast-forward of the local branch.
 *
 * Concurrent edits: `team/MEMORY.md` merges as the union of both sides' lines (`merge=union` in the clone's
 * `info/attributes`); any other conflicted memory keeps our version at its path and theirs beside it as
 * `<name>.conflict-<sha>.md`, both complete memories, until someone merges them (`memdir doctor` reports each
 * pair as `team-conflict`).
 *
 * Outgoing: `TeamGuard.audit` first (a likely secret is a `SecretDetectedError` naming the file and the pattern,
 * any other violation a `TeamSyncRejectedError`), then the staged tree gets the same inspection as incoming
 * trees. The commit's author is the user's git identity, else `memdir <memdir@host.invalid>`.
 *
 * One sync at a time per memory directory (the team lock, shared with team writes); a push that loses a race
 * with a teammate is retried after a new fetch and merge (at most three rounds).
 */
import { Command, CommandExecutor, FileSystem, Path } from "@effect/platform"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { hostname } from "node:os"
import {
  type LockTimeoutError,
  MemoryDisabledError,
  type MemoryIoError,
  type PathTraversalError,
  SecretDetectedError,
  TeamMemoryDisabledError,
  TeamSyncError,
  TeamSyncRejectedError
} from "./Errors.js"
import { currentPid, toMemoryIoError } from "./internal/atomicFile.js"
import { conflictCopyPath } from "./internal/teamConflict.js"
import { scanSecrets } from "./SecretScan.js"
import { checkKey, TEAM_DIR, TEAM_FILE_MAX_BYTES, TeamGuard } from "./TeamGuard.js"
import { ensureTeamDir, type TeamLocation, withTeamLock } from "./TeamMemory.js"

/** The clone's git directory, beside `team/` in the memory directory. */
export const TEAM_GIT_DIR = ".team.git"
/** The remote branch team memory lives on. */
export const TEAM_BRANCH = "main"
/** An incoming tree with more entries than this is refused (a team memory holds a few hundred files). */
export const TEAM_SYNC_MAX_ENTRIES = 10_000
/** Fetch-merge-push rounds before a push that keeps losing races gives up. */
export const TEAM_SYNC_MAX_ROUNDS = 3
/** `git merge-tree --write-tree` appeared in git 2.38. */
export const MIN_GIT_VERSION: readonly [number, number] = [2, 38]

/** One refused entry of a tree (incoming or outgoing). */
export interface SyncViolation {
  /** Relative to team/, as git names it. */
  readonly path: string
  /** `symlink`, `submodule`, `special-mode`, `hidden-file`, `oversized`, `secret`, `too-many-files`, or a `PathTraversalError` reason. */
  readonly reason: string
  readonly detail: string
}

export interface SyncConflict {
  /** The memory both sides changed (`team/…`): it keeps our version (or theirs, when we deleted it). */
  readonly path: string
  /** Where their version was saved (`team/….conflict-<sha>.md`) when both versions exist. */
  readonly copy?: string | undefined
  readonly kept: "both" | "ours" | "theirs"
}

export interface TeamSyncResult {
  readonly remote: string
  readonly branch: string
  /** The commit made from local team changes, when there were any. */
  readonly committed?: string | undefined
  /** The remote's commit that was fetched (last round), when the remote branch exists. */
  readonly incoming?: string | undefined
  /** `up-to-date`: nothing new came in; `fast-forward`: their commits were taken as they are; `merged`: a merge commit. */
  readonly merge: "none" | "up-to-date" | "fast-forward" | "merged"
  readonly pushed: boolean
  /** The local branch after the sync. */
  readonly head?: string | undefined
  readonly conflicts: ReadonlyArray<SyncConflict>
  /** Fetch-merge-push rounds it took (a push that lost a race is retried). */
  readonly rounds: number
}

export type TeamSyncFailure =
  | MemoryDisabledError
  | TeamMemoryDisabledError
  | TeamSyncError
  | TeamSyncRejectedError
  | SecretDetectedError
  | PathTraversalError
  | LockTimeoutError
  | MemoryIoError

export class TeamSync extends Context.Tag("@memdir/core/TeamSync")<TeamSync, {
  /** Commit, fetch, inspect, merge and push the team memory of a resolved location. */
  readonly sync: (team: TeamLocation) => Effect.Effect<TeamSyncResult, TeamSyncFailure>
}>() {}

// ---------------------------------------------------------------------------------------------------------------
// Pure parts: git's output, the inspection, conflict resolution
// ---------------------------------------------------------------------------------------------------------------

/** One entry of `git ls-tree -r -z --long`. */
export interface TreeEntry {
  readonly mode: string
  readonly type: string
  readonly sha: string
  /** Bytes; undefined for submodules (git prints `-`). */
  readonly size: number | undefined
  readonly path: string
}

const decoder = new TextDecoder()

/** Parses `git ls-tree -r -z --long` output. */
export const parseLsTree = (output: string): Array<TreeEntry> =>
  output.split("\0").filter((record) => record.length > 0).map((record) => {
    const tab = record.indexOf("\t")
    const [mode, type, sha, size] = record.slice(0, tab).split(/ +/)
    return {
      mode: mode!,
      type: type!,
      sha: sha!,
      size: size === undefined || size === "-" ? undefined : Number(size),
      path: record.slice(tab + 1)
    }
  })

/** `git merge-tree --write-tree -z`: the result tree and the conflicted entries (stage 1 base, 2 ours, 3 theirs). */
export const parseMergeTree = (output: string): {
  readonly tree: string
  readonly conflicted: ReadonlyArray<
    { readonly mode: string; readonly sha: string; readonly stage: number; readonly path: string }
  >
} => {
  const records = output.split("\0")
  const conflicted: Array<{ mode: string; sha: string; stage: number; path: string }> = []
  for (let i = 1; i < records.length && records[i] !== ""; i++) {
    const record = records[i]!
    const tab = record.indexOf("\t")
    const [mode, sha, stage] = record.slice(0, tab).split(" ")
    conflicted.push({ mode: mode!, sha: sha!, stage: Number(stage), path: record.slice(tab + 1) })
  }
  return { tree: records[0]!.trim(), conflicted }
}

/**
 * How conflicted paths are resolved without losing a version: ours stays at the path and theirs goes to
 * `<name>.conflict-<sha>.md`; a side that deleted the memory loses to the side that changed it.
 */
export const resolveConflicts = (
  conflicted: ReturnType<typeof parseMergeTree>["conflicted"]
): {
  readonly entries: ReadonlyArray<{ readonly mode: string; readonly sha: string; readonly path: string }>
  readonly conflicts: ReadonlyArray<SyncConflict>
} => {
  const byPath = new Map<string, { ours?: { mode: string; sha: string }; theirs?: { mode: string; sha: string } }>()
  for (const entry of conflicted) {
    const sides = byPath.get(entry.path) ?? {}
    if (entry.stage === 2) sides.ours = { mode: entry.mode, sha: entry.sha }
    if (entry.stage === 3) sides.theirs = { mode: entry.mode, sha: entry.sha }
    byPath.set(entry.path, sides)
  }
  const entries: Array<{ mode: string; sha: string; path: string }> = []
  const conflicts: Array<SyncConflict> = []
  for (const [path, { ours, theirs }] of [...byPath].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (ours !== undefined && theirs !== undefined && ours.sha !== theirs.sha) {
      const copy = conflictCopyPath(path, theirs.sha)
      entries.push({ ...ours, path }, { ...theirs, path: copy })
      conflicts.push({ path: `${TEAM_DIR}/${path}`, copy: `${TEAM_DIR}/${copy}`, kept: "both" })
    } else if (ours !== undefined) {
      entries.push({ ...ours, path })
      conflicts.push({ path: `${TEAM_DIR}/${path}`, kept: "ours" })
    } else if (theirs !== undefined) {
      entries.push({ ...theirs, path })
      conflicts.push({ path: `${TEAM_DIR}/${path}`, kept: "theirs" })
    }
  }
  return { entries, conflicts }
}

/** git's empty tree (SHA-1): what an unborn branch has. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

const REGULAR_MODES: ReadonlySet<string> = new Set(["100644", "100755"])

/**
 * Everything wrong with a tree's entries that can be told from the listing alone: link and submodule modes,
 * dot-files, names refused by TeamGuard layers 1+2, sizes, and the number of entries. `teamDir` anchors the
 * containment check. Blob contents (secrets) are checked by `contentViolations`.
 */
export const entryViolations = (teamDir: string, entries: ReadonlyArray<TreeEntry>): Array<SyncViolation> => {
  if (entries.length > TEAM_SYNC_MAX_ENTRIES) {
    return [{
      path: ".",
      reason: "too-many-files",
      detail: `${entries.length} entries (limit ${TEAM_SYNC_MAX_ENTRIES})`
    }]
  }
  const violations: Array<SyncViolation> = []
  for (const entry of entries) {
    const refuse = (reason: string, detail: string) => violations.push({ path: entry.path, reason, detail })
    if (entry.mode === "120000") refuse("symlink", "a symbolic link (mode 120000)")
    else if (entry.mode === "160000") refuse("submodule", `a submodule pointing at commit ${entry.sha}`)
    else if (!REGULAR_MODES.has(entry.mode) || entry.type !== "blob") {
      refuse("special-mode", `mode ${entry.mode} ${entry.type}`)
    }
    const named = checkKey(teamDir, entry.path)
    if (Either.isLeft(named)) refuse(named.left.reason, named.left.detail ?? named.left.message)
    else if (entry.path.split("/").some((segment) => segment.startsWith("."))) {
      refuse("hidden-file", "dot-files (.gitattributes, .gitmodules, …) are never synced")
    }
    if (entry.size !== undefined && entry.size > TEAM_FILE_MAX_BYTES) {
      refuse("oversized", `${entry.size} bytes (limit ${TEAM_FILE_MAX_BYTES})`)
    }
  }
  return violations
}

/** Likely secrets in the given blobs (path → text). */
export const contentViolations = (blobs: ReadonlyArray<{ readonly path: string; readonly text: string }>) =>
  blobs.flatMap(({ path, text }) =>
    scanSecrets(text).slice(0, 1).map((finding): SyncViolation => ({
      path,
      reason: "secret",
      detail: `${finding.description} (${finding.pattern}) at line ${finding.line}`
    }))
  )

/** `git version 2.39.5` → [2, 39]. */
export const parseGitVersion = (output: string): readonly [number, number] | undefined => {
  const match = /(\d+)\.(\d+)/.exec(output)
  return match === null ? undefined : [Number(match[1]), Number(match[2])]
}

// ---------------------------------------------------------------------------------------------------------------
// Running git
// ---------------------------------------------------------------------------------------------------------------

/** Settings on every git call: no hooks, no symlinks on checkout, path protection, no ext:: transport. */
const SAFE_CONFIG: ReadonlyArray<string> = [
  "core.symlinks=false",
  "core.protectNTFS=true",
  "core.protectHFS=true",
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.autocrlf=false",
  "core.quotePath=false",
  "protocol.ext.allow=never",
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
  "commit.gpgSign=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "advice.detachedHead=false"
].flatMap((setting) => ["-c", setting])

/** `team/MEMORY.md` merges as the union of both sides; nothing else in the tree may set git attributes. */
const INFO_ATTRIBUTES = "/MEMORY.md merge=union\n"
/** Never committed: dot-files (editor swap files, memdir temp files) and backups. */
const INFO_EXCLUDE = ".*\n*~\n"

/**
 * The environment of every git call: no credential prompt (a sync must never hang), C locale (parseable
 * messages), and none of the variables by which a calling git (a hook, say) would redirect ours elsewhere.
 */
const GIT_ENV: Record<string, string | undefined> = {
  GIT_TERMINAL_PROMPT: "0",
  LC_ALL: "C",
  GIT_DIR: undefined,
  GIT_WORK_TREE: undefined,
  GIT_INDEX_FILE: undefined,
  GIT_OBJECT_DIRECTORY: undefined,
  GIT_ALTERNATE_OBJECT_DIRECTORIES: undefined,
  GIT_COMMON_DIR: undefined,
  GIT_NAMESPACE: undefined,
  GIT_CONFIG_PARAMETERS: undefined
}

interface GitOutput {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

interface Repo {
  readonly gitDir: string
  readonly teamDir: string
  readonly remote: string
}

const collect = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  Stream.runCollect(stream).pipe(Effect.map((chunks) => {
    const all = new Uint8Array(Chunk.reduce(chunks, 0, (n, c) => n + c.length))
    let offset = 0
    for (const chunk of chunks) {
      all.set(chunk, offset)
      offset += chunk.length
    }
    return all
  }))

const lastLines = (text: string): string => text.trim().split("\n").slice(-3).join(" | ")

export const make: Effect.Effect<
  Context.Tag.Service<TeamSync>,
  never,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path | TeamGuard
> = Effect.gen(function*() {
  const executor = yield* CommandExecutor.CommandExecutor
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const guard = yield* TeamGuard
  const services = Context.make(FileSystem.FileSystem, fs).pipe(
    Context.add(Path.Path, path),
    Context.add(TeamGuard, guard)
  )

  const gitRaw = (
    repo: Repo,
    step: string,
    args: ReadonlyArray<string>,
    options: { readonly stdin?: string; readonly env?: Record<string, string>; readonly bare?: boolean } = {}
  ): Effect.Effect<GitOutput, TeamSyncError> => {
    const location = options.bare === true ? [] : [`--git-dir=${repo.gitDir}`, `--work-tree=${repo.teamDir}`]
    let command = Command.make("git", ...SAFE_CONFIG, ...location, ...args).pipe(
      Command.workingDirectory(repo.teamDir),
      Command.env({ ...GIT_ENV, ...options.env })
    )
    if (options.stdin !== undefined) command = Command.feed(command, options.stdin)
    return Effect.scoped(Effect.gen(function*() {
      const child = yield* Command.start(command)
      const [stdout, stderr, exitCode] = yield* Effect.all(
        [collect(child.stdout), collect(child.stderr), child.exitCode],
        { concurrency: "unbounded" }
      )
      return { exitCode: Number(exitCode), stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) }
    })).pipe(
      Effect.provideService(CommandExecutor.CommandExecutor, executor),
      Effect.mapError((error) =>
        new TeamSyncError({ step, remote: repo.remote, detail: `cannot run git (${error.message}); is git installed?` })
      )
    )
  }

  /** A git call that must succeed (exit 0). */
  const git = (repo: Repo, step: string, args: ReadonlyArray<string>, options?: Parameters<typeof gitRaw>[3]) =>
    Effect.flatMap(gitRaw(repo, step, args, options), (out) =>
      out.exitCode === 0 ? Effect.succeed(out) : Effect.fail(
        new TeamSyncError({
          step,
          remote: repo.remote,
          detail: `git ${args[0]} exited with ${out.exitCode}: ${lastLines(out.stderr || out.stdout)}`
        })
      ))

  const ensureRepo = (repo: Repo) =>
    Effect.gen(function*() {
      const exists = yield* fs.exists(path.join(repo.gitDir, "HEAD")).pipe(
        Effect.mapError(toMemoryIoError("stat", repo.gitDir))
      )
      if (!exists) {
        yield* git(repo, "init", ["init", "-q", "--bare", repo.gitDir], { bare: true })
        yield* git(repo, "init", ["config", "core.bare", "false"])
        yield* git(repo, "init", ["symbolic-ref", "HEAD", `refs/heads/${TEAM_BRANCH}`])
      }
      const info = path.join(repo.gitDir, "info")
      yield* fs.makeDirectory(info, { recursive: true }).pipe(Effect.mapError(toMemoryIoError("create", info)))
      yield* fs.writeFileString(path.join(info, "attributes"), INFO_ATTRIBUTES).pipe(
        Effect.mapError(toMemoryIoError("write", info))
      )
      yield* fs.writeFileString(path.join(info, "exclude"), INFO_EXCLUDE).pipe(
        Effect.mapError(toMemoryIoError("write", info))
      )
    })

  /** Called when `git merge-tree --write-tree` fails: a git that is too old gets a clear message. */
  const checkGitVersion = (repo: Repo) =>
    Effect.gen(function*() {
      const version = parseGitVersion((yield* git(repo, "git version", ["version"], { bare: true })).stdout)
      if (
        version === undefined || version[0] < MIN_GIT_VERSION[0] ||
        (version[0] === MIN_GIT_VERSION[0] && version[1] < MIN_GIT_VERSION[1])
      ) {
        return yield* new TeamSyncError({
          step: "git version",
          remote: repo.remote,
          detail: `team sync needs git ${MIN_GIT_VERSION.join(".")} or later (git merge-tree --write-tree)`
        })
      }
    })

  const listTree = (repo: Repo, treeish: string) =>
    Effect.map(
      git(repo, "ls-tree", ["ls-tree", "-r", "-z", "--long", "--full-tree", treeish]),
      (out) => parseLsTree(out.stdout)
    )

  /** Blob contents by sha (`git cat-file --batch`), decoded as UTF-8. */
  const readBlobs = (repo: Repo, shas: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const blobs = new Map<string, string>()
      if (shas.length === 0) return blobs
      const out = yield* Effect.scoped(Effect.gen(function*() {
        const command = Command.make(
          "git",
          ...SAFE_CONFIG,
          `--git-dir=${repo.gitDir}`,
          "cat-file",
          "--batch"
        ).pipe(Command.env(GIT_ENV), Command.feed(shas.join("\n") + "\n"))
        const child = yield* Command.start(command)
        const [stdout] = yield* Effect.all([collect(child.stdout), child.exitCode], { concurrency: "unbounded" })
        return stdout
      })).pipe(
        Effect.provideService(CommandExecutor.CommandExecutor, executor),
        Effect.mapError((error) => new TeamSyncError({ step: "cat-file", remote: repo.remote, detail: error.message }))
      )
      let offset = 0
      while (offset < out.length) {
        const newline = out.indexOf(10, offset)
        if (newline < 0) break
        const [sha, type, size] = decoder.decode(out.subarray(offset, newline)).split(" ")
        offset = newline + 1
        if (type === undefined || size === undefined) continue // "<sha> missing"
        const length = Number(size)
        blobs.set(sha!, decoder.decode(out.subarray(offset, offset + length)))
        offset += length + 1
      }
      return blobs
    })

  /**
   * Every violation of a tree: the listing checks, then secrets in the blobs not already `trusted` (blobs of
   * trees inspected before). Blobs too big to be accepted are not read.
   */
  const inspectTree = (repo: Repo, entries: ReadonlyArray<TreeEntry>, trusted: ReadonlySet<string>) =>
    Effect.gen(function*() {
      const violations = entryViolations(repo.teamDir, entries)
      if (entries.length > TEAM_SYNC_MAX_ENTRIES) return violations
      const unread = entries.filter((e) =>
        e.type === "blob" && REGULAR_MODES.has(e.mode) && !trusted.has(e.sha) &&
        (e.size ?? 0) <= TEAM_FILE_MAX_BYTES
      )
      const blobs = yield* readBlobs(repo, [...new Set(unread.map((e) => e.sha))])
      violations.push(...contentViolations(unread.map((e) => ({ path: e.path, text: blobs.get(e.sha) ?? "" }))))
      return violations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    })

  const blobShas = (entries: ReadonlyArray<TreeEntry>): Set<string> => new Set(entries.map((e) => e.sha))

  /** The author and committer: the user's git identity, else memdir's. */
  const identity = (repo: Repo) =>
    Effect.gen(function*() {
      const configured = yield* gitRaw(repo, "identity", ["config", "--get-regexp", "^user\\.(name|email)$"])
      const keys = configured.stdout.split("\n").map((line) => line.split(" ")[0])
      if (keys.includes("user.name") && keys.includes("user.email")) return {}
      const fallbackName = "memdir"
      const fallbackEmail = `memdir@${hostname().replace(/[^A-Za-z0-9.-]/g, "-") || "localhost"}.invalid`
      return {
        GIT_AUTHOR_NAME: fallbackName,
        GIT_AUTHOR_EMAIL: fallbackEmail,
        GIT_COMMITTER_NAME: fallbackName,
        GIT_COMMITTER_EMAIL: fallbackEmail
      }
    })

  const commitTree = (repo: Repo, tree: string, parents: ReadonlyArray<string>, message: string) =>
    Effect.gen(function*() {
      const env = yield* identity(repo)
      const out = yield* git(
        repo,
        "commit",
        ["commit-tree", tree, ...parents.flatMap((p) => ["-p", p]), "-m", message],
        { env }
      )
      return out.stdout.trim()
    })

  /** Refuses the outgoing side: the first secret by name, anything else as a rejection. */
  const refuseOutgoing = (repo: Repo, commit: string, violations: ReadonlyArray<SyncViolation>) => {
    const secret = violations.find((v) => v.reason === "secret")
    if (secret !== undefined) {
      const line = /at line (\d+)/.exec(secret.detail)
      return Effect.fail(
        new SecretDetectedError({
          path: `${TEAM_DIR}/${secret.path}`,
          pattern: secret.detail.replace(/ at line \d+.*$/, ""),
          ...(line === null ? {} : { line: Number(line[1]) }),
          action: "sync"
        })
      )
    }
    return Effect.fail(new TeamSyncRejectedError({ direction: "outgoing", remote: repo.remote, commit, violations }))
  }

  /** Commits what changed in team/ since the last sync; undefined when nothing did. */
  const commitLocalChanges = (repo: Repo) =>
    Effect.gen(function*() {
      // The files on disk first: links, FIFOs, oversized files and secrets never reach the index.
      // Dot-files are never committed (info/exclude), so only they may stay; "." is team/ itself and counts.
      const onDisk = (yield* guard.audit(repo.teamDir)).filter((v) =>
        v.path === "." || !v.path.split("/").some((segment) => segment.startsWith("."))
      )
      if (onDisk.length > 0) return yield* refuseOutgoing(repo, "working tree", onDisk)
      const headOut = yield* gitRaw(repo, "stage", ["rev-parse", "HEAD", "HEAD^{tree}"])
      const [head, headTree] = headOut.exitCode === 0 ? headOut.stdout.trim().split("\n") : [undefined, EMPTY_TREE]
      yield* git(repo, "stage", ["add", "-A", "--", "."])
      const tree = (yield* git(repo, "stage", ["write-tree"])).stdout.trim()
      if (tree === headTree) return { head, committed: undefined }
      // Every blob of the tree is read again (cheap: a team holds small files), so nothing slips in via the index.
      const violations = yield* inspectTree(repo, yield* listTree(repo, tree), new Set())
      if (violations.length > 0) {
        yield* gitRaw(repo, "unstage", head === undefined ? ["read-tree", "--empty"] : ["read-tree", head])
        return yield* refuseOutgoing(repo, "index", violations)
      }
      const commit = yield* commitTree(
        repo,
        tree,
        head === undefined ? [] : [head],
        "memdir team sync: local changes"
      )
      yield* git(repo, "commit", ["update-ref", "HEAD", commit, ...(head === undefined ? [] : [head])])
      return { head: commit, committed: commit }
    })

  /** Fetches the remote branch; undefined when the remote has no such branch yet (a new, empty remote). */
  const fetchIncoming = (repo: Repo) =>
    Effect.gen(function*() {
      const out = yield* gitRaw(repo, "fetch", [
        "fetch",
        "-q",
        "--no-tags",
        "--no-recurse-submodules",
        repo.remote,
        `refs/heads/${TEAM_BRANCH}`
      ])
      if (out.exitCode !== 0) {
        if (/couldn't find remote ref/i.test(out.stderr)) return undefined
        return yield* new TeamSyncError({
          step: "fetch",
          remote: repo.remote,
          detail: `git fetch exited with ${out.exitCode}: ${lastLines(out.stderr)}`
        })
      }
      const fetchHead = path.join(repo.gitDir, "FETCH_HEAD")
      const text = yield* fs.readFileString(fetchHead).pipe(Effect.mapError(toMemoryIoError("read", fetchHead)))
      const sha = /^[0-9a-f]{40,64}/.exec(text)?.[0]
      if (sha === undefined) {
        return yield* new TeamSyncError({ step: "fetch", remote: repo.remote, detail: "FETCH_HEAD names no commit" })
      }
      return sha
    })

  /** The best common ancestor; undefined for unrelated histories (two teammates who started apart). */
  const mergeBase = (repo: Repo, a: string, b: string) =>
    Effect.flatMap(gitRaw(repo, "merge-base", ["merge-base", a, b]), (out) =>
      out.exitCode === 0
        ? Effect.succeed<string | undefined>(out.stdout.trim())
        : out.exitCode === 1
        ? Effect.succeed(undefined)
        : Effect.fail(
          new TeamSyncError({ step: "merge-base", remote: repo.remote, detail: lastLines(out.stderr) })
        ))

  const rejectIncoming = (repo: Repo, commit: string, violations: ReadonlyArray<SyncViolation>) =>
    violations.length === 0
      ? Effect.void
      : Effect.fail(new TeamSyncRejectedError({ direction: "incoming", remote: repo.remote, commit, violations }))

  /** Moves the working tree and branch to `commit`, a descendant of HEAD whose tree was inspected. */
  const checkout = (repo: Repo, commit: string) =>
    git(repo, "checkout", ["merge", "--ff-only", "-q", commit]).pipe(
      Effect.mapError((error) =>
        new TeamSyncError({
          step: "checkout",
          remote: repo.remote,
          detail: `${error.detail} (a file in team/ changed during the sync? run it again)`
        })
      )
    )

  /** Inspects `incoming` and brings it in: fast-forward, or a merge computed without the working tree. */
  const integrate = (repo: Repo, head: string | undefined, incoming: string) =>
    Effect.gen(function*() {
      const none: ReadonlyArray<SyncConflict> = []
      const base = head === undefined || head === incoming ? head : yield* mergeBase(repo, head, incoming)
      if (head === incoming || base === incoming) return { merge: "up-to-date" as const, conflicts: none, head }
      // Every entry and every blob of their tree, before anything of it reaches the working tree.
      const incomingEntries = yield* listTree(repo, incoming)
      yield* rejectIncoming(repo, incoming, yield* inspectTree(repo, incomingEntries, new Set()))
      if (head === undefined || base === head) {
        yield* checkout(repo, incoming)
        return { merge: "fast-forward" as const, conflicts: none, head: incoming }
      }

      const merged = yield* gitRaw(repo, "merge", [
        "merge-tree",
        "--write-tree",
        "-z",
        "--allow-unrelated-histories",
        head,
        incoming
      ])
      if (merged.exitCode !== 0 && merged.exitCode !== 1) {
        yield* checkGitVersion(repo)
        return yield* new TeamSyncError({
          step: "merge",
          remote: repo.remote,
          detail: `git merge-tree exited with ${merged.exitCode}: ${lastLines(merged.stderr)}`
        })
      }
      const result = parseMergeTree(merged.stdout)
      const resolution = resolveConflicts(result.conflicted)
      let tree = result.tree
      if (resolution.entries.length > 0) {
        // A private index: the user's working tree and index stay as they are until the checkout.
        const index = path.join(repo.gitDir, `memdir-merge.${currentPid()}.index`)
        const env = { GIT_INDEX_FILE: index }
        const conflictedPaths = [...new Set(result.conflicted.map((c) => c.path))]
        tree = yield* Effect.gen(function*() {
          yield* git(repo, "merge", ["read-tree", tree], { env })
          // Mode 0 removes the conflicted entry (with its markers); then each kept version is added.
          const removals = conflictedPaths.map((p) => `0 ${"0".repeat(40)}\t${p}\0`)
          const additions = resolution.entries.map((e) => `${e.mode} ${e.sha}\t${e.path}\0`)
          yield* git(repo, "merge", ["update-index", "-z", "--index-info"], {
            env,
            stdin: [...removals, ...additions].join("")
          })
          return (yield* git(repo, "merge", ["write-tree"], { env })).stdout.trim()
        }).pipe(Effect.ensuring(Effect.ignore(fs.remove(index, { force: true }))))
      }
      const mergedEntries = yield* listTree(repo, tree)
      // Blobs of their tree were read above; ours passed the outgoing checks: only merged blobs are new.
      const trusted = new Set([...blobShas(incomingEntries), ...blobShas(yield* listTree(repo, head))])
      yield* rejectIncoming(repo, incoming, yield* inspectTree(repo, mergedEntries, trusted))
      const commit = yield* commitTree(
        repo,
        tree,
        [head, incoming],
        `memdir team sync: merge ${incoming.slice(0, 12)} from ${repo.remote}`
      )
      yield* checkout(repo, commit)
      return { merge: "merged" as const, conflicts: resolution.conflicts, head: commit }
    })

  /** Pushes HEAD; "rejected" when the remote moved on meanwhile (fetch, merge and try again). */
  const push = (repo: Repo) =>
    Effect.gen(function*() {
      const out = yield* gitRaw(repo, "push", [
        "push",
        "-q",
        "--no-verify",
        "--porcelain",
        repo.remote,
        `HEAD:refs/heads/${TEAM_BRANCH}`
      ])
      if (out.exitCode === 0) return "pushed" as const
      if (
        /\[rejected\]|non-fast-forward|fetch first|\[remote rejected\].*(?:lock|cannot lock)/i.test(
          out.stdout + out.stderr
        )
      ) {
        return "rejected" as const
      }
      return yield* new TeamSyncError({
        step: "push",
        remote: repo.remote,
        detail: `git push exited with ${out.exitCode}: ${lastLines(out.stderr || out.stdout)}`
      })
    })

  const syncLocked = (repo: Repo) =>
    Effect.gen(function*() {
      yield* ensureRepo(repo)
      const local = yield* commitLocalChanges(repo)
      // Where the branch is, tracked here rather than asked of git again (each git process costs a spawn).
      let head = local.head
      const conflicts: Array<SyncConflict> = []
      let merge: TeamSyncResult["merge"] = "none"
      let incoming: string | undefined
      for (let round = 1;; round++) {
        incoming = yield* fetchIncoming(repo)
        if (incoming !== undefined) {
          const integrated = yield* integrate(repo, head, incoming)
          conflicts.push(...integrated.conflicts)
          merge = merge === "merged" || integrated.merge === "merged" ? "merged" : integrated.merge
          head = integrated.head
        }
        const done = (pushed: boolean): TeamSyncResult => ({
          remote: repo.remote,
          branch: TEAM_BRANCH,
          committed: local.committed,
          incoming,
          merge,
          pushed,
          head,
          conflicts,
          rounds: round
        })
        if (head === undefined || head === incoming) return done(false)
        if ((yield* push(repo)) === "pushed") return done(true)
        if (round >= TEAM_SYNC_MAX_ROUNDS) {
          return yield* new TeamSyncError({
            step: "push",
            remote: repo.remote,
            detail: `the remote kept moving: push refused ${round} times. Your changes are committed locally`
          })
        }
      }
    })

  const sync = Effect.fn("TeamSync.sync")(
    function*(team: TeamLocation) {
      if (!team.memory.enabled) return yield* new MemoryDisabledError({ source: team.memory.enabledBy })
      if (!team.enabled) return yield* new TeamMemoryDisabledError({ source: team.enabledBy })
      if (team.remote === undefined) {
        return yield* new TeamSyncError({
          step: "configure",
          remote: "",
          detail: "no \"teamRemote\" is set: add it (any git URL) to your user or local settings; project " +
            "settings are not trusted for it"
        })
      }
      const memoryDir = team.memory.memoryDir
      const teamDir = yield* ensureTeamDir(memoryDir)
      const repo: Repo = {
        gitDir: path.join(path.resolve(memoryDir), TEAM_GIT_DIR),
        teamDir: path.resolve(teamDir),
        remote: team.remote
      }
      return yield* withTeamLock(memoryDir, syncLocked(repo))
    },
    Effect.provide(services)
  )

  return TeamSync.of({ sync })
})

/** Live sync: git as a child process (needs `CommandExecutor`, e.g. from `NodeContext.layer`). */
export const layer: Layer.Layer<
  TeamSync,
  never,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path | TeamGuard
> = Layer.effect(TeamSync, make)

/**
 * A scripted sync for tests of callers: the same gates (auto memory, team memory, a remote), then `respond`.
 */
export const layerTest = (
  respond: (team: TeamLocation) => TeamSyncResult
): Layer.Layer<TeamSync> =>
  Layer.succeed(
    TeamSync,
    TeamSync.of({
      sync: (team) => {
        if (!team.memory.enabled) return Effect.fail(new MemoryDisabledError({ source: team.memory.enabledBy }))
        if (!team.enabled) return Effect.fail(new TeamMemoryDisabledError({ source: team.enabledBy }))
        if (team.remote === undefined) {
          return Effect.fail(new TeamSyncError({ step: "configure", remote: "", detail: "no \"teamRemote\" is set" }))
        }
        return Effect.succeed(respond(team))
      }
    })
  )
