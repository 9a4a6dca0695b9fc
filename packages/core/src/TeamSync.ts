/**
 * Team sync through git: an existing distributed engine, no home-made server. `memdir team sync` commits local
 * team changes, fetches the remote's `main`, inspects what came in BEFORE it reaches the working tree, merges
 * (keeping both versions of a memory two people edited at once) and pushes. The inspection rules are pure and
 * live in `TeamSyncTree.ts`; git runs through the `Git` service (allow-listed environment, safe configuration,
 * a timeout on every call).
 *
 * Layout: memdir manages the clone. Its git directory is `<memdir>/.team.git` (outside `team/`, so the scanner,
 * the audit and the agent never see git's files), its working tree is `<memdir>/team/`. Every git call names both
 * explicitly. memdir owns the clone's `config`, `info/attributes` and `info/exclude`: they are written whole on
 * every sync, by rename, so nothing planted there (a hooks path, a filter or merge driver, a credential helper, an
 * include, a link that would make the write land elsewhere) is ever read or written through. Fetched commits land
 * in a ref (`refs/memdir/incoming`), never in `FETCH_HEAD`. A path remote's own pack programs run without hooks
 * (see `Git.localTransportOptions`). Dot-files in `team/` (editor swap files, memdir's temp files) are never
 * committed.
 *
 * Incoming: the fetched tree is listed (`git ls-tree -r -z --long`) and refused WHOLE, with a report, when any
 * entry breaks a rule of `TeamSyncTree.entryViolations` or holds a likely secret. Nothing is merged then and the
 * working tree is untouched: the merge itself is computed without a working tree (`git merge-tree --write-tree`,
 * git >= 2.38), the result tree is inspected again, committed, and only then checked out, as a fast-forward of
 * the local branch.
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
 * with a teammate is retried after a new fetch and merge (at most three rounds). Every git call has a timeout,
 * so a remote that never answers fails the sync and releases the lock.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import { hostname } from "node:os"
import {
  ioErrorOf,
  isMissingFile,
  type LockTimeoutError,
  MemoryDisabledError,
  MemoryIoError,
  type PathTraversalError,
  SecretDetectedError,
  TeamMemoryDisabledError,
  TeamSyncError,
  TeamSyncRejectedError
} from "./Errors.js"
import * as Git from "./Git.js"
import { currentPid } from "./internal/fs/leftovers.js"
import { commitTimesArgs, parseCommitTimes } from "./internal/git/commitTimes.js"
import { MEMORY_MAX_BYTES } from "./Memory.js"
import { layer as MemoryFsLayer, MemoryFs } from "./MemoryFs.js"
import { TEAM_DIR, TeamGuard } from "./TeamGuard.js"
import { ensureTeamDir, type TeamLocation, withTeamLock } from "./TeamMemory.js"
import {
  contentViolations,
  EMPTY_TREE,
  entryViolations,
  parseGitVersion,
  parseLsTree,
  parseMergeTree,
  REGULAR_MODES,
  resolveConflicts,
  type SyncConflict,
  type SyncViolation,
  TEAM_SYNC_MAX_ENTRIES,
  type TreeEntry
} from "./TeamSyncTree.js"

export * from "./TeamSyncTree.js"

/** The clone's git directory, beside `team/` in the memory directory. */
export const TEAM_GIT_DIR = ".team.git"
/** The remote branch team memory lives on. */
export const TEAM_BRANCH = "main"
/**
 * The remote's branch as last seen here: where a fetch puts it (a ref is written by rename; `FETCH_HEAD` would
 * follow a link), and what a push made it. Commits between it and HEAD are what is ahead or behind.
 */
export const INCOMING_REF = "refs/memdir/incoming"
/** Fetch-merge-push rounds before a push that keeps losing races gives up. */
export const TEAM_SYNC_MAX_ROUNDS = 3
/** `git merge-tree --write-tree` appeared in git 2.38. */
export const MIN_GIT_VERSION: readonly [number, number] = [2, 38]

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

export class TeamSync extends Context.Service<TeamSync, {
  /** Commit, fetch, inspect, merge and push the team memory of a resolved location. */
  readonly sync: (team: TeamLocation) => Effect.Effect<TeamSyncResult, TeamSyncFailure>
}>()("@memdir/core/TeamSync") {}

// ---------------------------------------------------------------------------------------------------------------
// The clone memdir owns
// ---------------------------------------------------------------------------------------------------------------

/** The clone's whole configuration: what `git init --bare` writes, with a working tree. Nothing else. */
const CLONE_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
/**
 * No filter, ident or encoding conversion for any path, git's own text merge for memories, and `team/MEMORY.md`
 * as the union of both sides. These lines take precedence over any `.gitattributes` in the tree.
 */
const INFO_ATTRIBUTES = "* -filter -ident -working-tree-encoding merge=text\n/MEMORY.md merge=union\n"
/** Never committed: dot-files (editor swap files, memdir temp files) and backups. */
const INFO_EXCLUDE = ".*\n*~\n"

/** What every step of a sync needs: the services (resolved when the layer is built) and the clone. */
interface Clone {
  readonly git: Context.Service.Shape<typeof Git.Git>
  readonly memoryFs: Context.Service.Shape<typeof MemoryFs>
  readonly path: Path.Path
  readonly guard: Context.Service.Shape<typeof TeamGuard>
  readonly gitDir: string
  readonly teamDir: string
  readonly remote: string
}

/**
 * Git's words, on one line: its first line (the `fatal: …` that says what went wrong) and the last two (its advice),
 * blank lines left out.
 */
export const gitSays = (text: string): string => {
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => line !== "")
  return (lines.length <= 3 ? lines : [lines[0]!, "…", ...lines.slice(-2)]).join(" | ")
}

const syncError = (c: Clone, step: string, detail: string) => new TeamSyncError({ step, remote: c.remote, detail })

/** A git call in the clone; any exit code is an answer. Failing to run git, or a timeout, is a `TeamSyncError`. */
const run = (c: Clone, step: string, args: ReadonlyArray<string>, options: Git.GitRunOptions = {}) =>
  c.git.run(args, { gitDir: c.gitDir, workTree: c.teamDir, cwd: c.teamDir, ...options }).pipe(
    Effect.mapError((error) =>
      syncError(
        c,
        step,
        error._tag === "GitTimeoutError"
          ? error.message
          : `cannot run git (${error.stderr}); is git installed?`
      )
    )
  )

/** A git call that must succeed (exit 0). */
const runOk = (c: Clone, step: string, args: ReadonlyArray<string>, options?: Git.GitRunOptions) =>
  Effect.flatMap(run(c, step, args, options), (out) =>
    out.exitCode === 0
      ? Effect.succeed(out)
      : Effect.fail(
        syncError(c, step, `git ${args[0]} exited with ${out.exitCode}: ${gitSays(out.stderr || out.stdout)}`)
      ))

/** What is at `file`, not following a link. */
const kindOf = (c: Clone, file: string) =>
  c.memoryFs.lstat(file).pipe(
    Effect.map((info) =>
      info.kind === "Directory" ? "directory" as const : info.kind === "File" ? "file" as const : "other"
    ),
    Effect.catchIf(isMissingFile, () => Effect.succeed("missing" as const)),
    Effect.mapError((error) => new MemoryIoError({ op: "stat", path: file, detail: error.detail }))
  )

/** Writes one of memdir's own files of the clone whole (temp file and rename: a link there is replaced). */
const writeWhole = (c: Clone, file: string, text: string) =>
  c.memoryFs.writeFileAtomic(file, text).pipe(Effect.mapError(ioErrorOf("write", file)))

/** The clone, created if need be, with memdir's own config and info files written whole. */
const ensureClone = (c: Clone) =>
  Effect.gen(function*() {
    const gitDirKind = yield* kindOf(c, c.gitDir)
    if (gitDirKind !== "missing" && gitDirKind !== "directory") {
      return yield* syncError(
        c,
        "init",
        `${c.gitDir} is not a directory (a link or a file): memdir keeps its clone there; move it away and sync again`
      )
    }
    const fresh = (yield* kindOf(c, c.path.join(c.gitDir, "HEAD"))) === "missing"
    if (fresh) yield* runOk(c, "init", ["init", "-q", "--bare", c.gitDir], { gitDir: undefined, workTree: undefined })
    yield* writeWhole(c, c.path.join(c.gitDir, "config"), CLONE_CONFIG)
    if (fresh) yield* runOk(c, "init", ["symbolic-ref", "HEAD", `refs/heads/${TEAM_BRANCH}`])
    const info = c.path.join(c.gitDir, "info")
    const infoKind = yield* kindOf(c, info)
    if (infoKind !== "directory") {
      if (infoKind !== "missing") yield* c.memoryFs.remove(info).pipe(Effect.mapError(ioErrorOf("remove", info)))
      yield* c.memoryFs.makeDirectory(info).pipe(Effect.mapError(ioErrorOf("create", info)))
    }
    yield* writeWhole(c, c.path.join(info, "attributes"), INFO_ATTRIBUTES)
    yield* writeWhole(c, c.path.join(info, "exclude"), INFO_EXCLUDE)
  })

/** Called when `git merge-tree --write-tree` fails: a git that is too old gets a clear message. */
const checkGitVersion = (c: Clone) =>
  Effect.gen(function*() {
    const out = yield* runOk(c, "git version", ["version"], { gitDir: undefined, workTree: undefined })
    const version = parseGitVersion(out.stdout)
    if (
      version === undefined || version[0] < MIN_GIT_VERSION[0] ||
      (version[0] === MIN_GIT_VERSION[0] && version[1] < MIN_GIT_VERSION[1])
    ) {
      return yield* syncError(
        c,
        "git version",
        `team sync needs git ${MIN_GIT_VERSION.join(".")} or later (git merge-tree --write-tree)`
      )
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// Trees and their inspection
// ---------------------------------------------------------------------------------------------------------------

const decoder = new TextDecoder()

const listTree = (c: Clone, treeish: string) =>
  Effect.map(
    runOk(c, "ls-tree", ["ls-tree", "-r", "-z", "--long", "--full-tree", treeish]),
    (out) => parseLsTree(out.stdout)
  )

/** Blob contents by sha (`git cat-file --batch`), decoded as UTF-8. */
const readBlobs = (c: Clone, shas: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const blobs = new Map<string, string>()
    if (shas.length === 0) return blobs
    const out = (yield* run(c, "cat-file", ["cat-file", "--batch"], {
      workTree: undefined,
      stdin: shas.join("\n") + "\n"
    })).stdoutBytes
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
 * trees inspected before). Blobs too big to be accepted are not read; a tree refused whole is not read at all.
 */
const inspectTree = (c: Clone, entries: ReadonlyArray<TreeEntry>, trusted: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const violations = entryViolations(c.teamDir, entries)
    if (entries.length > TEAM_SYNC_MAX_ENTRIES || violations.some((v) => v.path === ".")) return violations
    const unread = entries.filter((e) =>
      e.type === "blob" && REGULAR_MODES.has(e.mode) && !trusted.has(e.sha) &&
      (e.size ?? 0) <= MEMORY_MAX_BYTES
    )
    const blobs = yield* readBlobs(c, [...new Set(unread.map((e) => e.sha))])
    violations.push(...contentViolations(unread.map((e) => ({ path: e.path, text: blobs.get(e.sha) ?? "" }))))
    return violations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  })

const blobShas = (entries: ReadonlyArray<TreeEntry>): Set<string> => new Set(entries.map((e) => e.sha))

// ---------------------------------------------------------------------------------------------------------------
// Commits
// ---------------------------------------------------------------------------------------------------------------

/** The author and committer: the user's git identity, else memdir's. */
const identity = (c: Clone) =>
  Effect.gen(function*() {
    const configured = yield* run(c, "identity", ["config", "--get-regexp", "^user\\.(name|email)$"])
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

const commitTree = (c: Clone, tree: string, parents: ReadonlyArray<string>, message: string) =>
  Effect.gen(function*() {
    const env = yield* identity(c)
    const args = ["commit-tree", tree, ...parents.flatMap((p) => ["-p", p]), "-m", message]
    return (yield* runOk(c, "commit", args, { env })).stdout.trim()
  })

/** Refuses the outgoing side: the first secret by name, anything else as a rejection. */
const refuseOutgoing = (c: Clone, commit: string, violations: ReadonlyArray<SyncViolation>) => {
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
  return Effect.fail(new TeamSyncRejectedError({ direction: "outgoing", remote: c.remote, commit, violations }))
}

/** Commits what changed in team/ since the last sync; undefined when nothing did. */
const commitLocalChanges = (c: Clone) =>
  Effect.gen(function*() {
    // The files on disk first: links, FIFOs, oversized files and secrets never reach the index.
    // Dot-files are never committed (info/exclude), so only they may stay; "." is team/ itself and counts.
    const onDisk = (yield* c.guard.audit(c.teamDir)).filter((v) =>
      v.path === "." || !v.path.split("/").some((segment) => segment.startsWith("."))
    )
    if (onDisk.length > 0) return yield* refuseOutgoing(c, "working tree", onDisk)
    const headOut = yield* run(c, "stage", ["rev-parse", "HEAD", "HEAD^{tree}"])
    const [head, headTree] = headOut.exitCode === 0 ? headOut.stdout.trim().split("\n") : [undefined, EMPTY_TREE]
    yield* runOk(c, "stage", ["add", "-A", "--", "."])
    const tree = (yield* runOk(c, "stage", ["write-tree"])).stdout.trim()
    if (tree === headTree) return { head, committed: undefined }
    // Every blob of the tree is read again (cheap: a team holds small files), so nothing slips in via the index.
    const violations = yield* inspectTree(c, yield* listTree(c, tree), new Set())
    if (violations.length > 0) {
      yield* run(c, "unstage", head === undefined ? ["read-tree", "--empty"] : ["read-tree", head])
      return yield* refuseOutgoing(c, "index", violations)
    }
    const commit = yield* commitTree(c, tree, head === undefined ? [] : [head], "memdir team sync: local changes")
    yield* runOk(c, "commit", ["update-ref", "HEAD", commit, ...(head === undefined ? [] : [head])])
    return { head: commit, committed: commit }
  })

// ---------------------------------------------------------------------------------------------------------------
// Fetch, merge, push
// ---------------------------------------------------------------------------------------------------------------

/** Fetches the remote branch; undefined when the remote has no such branch yet (a new, empty remote). */
const fetchIncoming = (c: Clone) =>
  Effect.gen(function*() {
    const out = yield* run(c, "fetch", [
      "fetch",
      "-q",
      "--no-tags",
      "--no-recurse-submodules",
      "--no-write-fetch-head",
      ...Git.localTransportOptions(c.remote, "fetch"),
      c.remote,
      `+refs/heads/${TEAM_BRANCH}:${INCOMING_REF}`
    ])
    if (out.exitCode !== 0) {
      if (/couldn't find remote ref/i.test(out.stderr)) return undefined
      return yield* syncError(c, "fetch", `git fetch exited with ${out.exitCode}: ${gitSays(out.stderr)}`)
    }
    const sha = (yield* runOk(c, "fetch", ["rev-parse", "--verify", "-q", `${INCOMING_REF}^{commit}`])).stdout.trim()
    if (!/^[0-9a-f]{40,64}$/.test(sha)) return yield* syncError(c, "fetch", `${INCOMING_REF} names no commit`)
    return sha
  })

/** The best common ancestor; undefined for unrelated histories (two teammates who started apart). */
const mergeBase = (c: Clone, a: string, b: string) =>
  Effect.flatMap(run(c, "merge-base", ["merge-base", a, b]), (out) =>
    out.exitCode === 0
      ? Effect.succeed<string | undefined>(out.stdout.trim())
      : out.exitCode === 1
      ? Effect.succeed(undefined)
      : Effect.fail(syncError(c, "merge-base", gitSays(out.stderr))))

const rejectIncoming = (c: Clone, commit: string, violations: ReadonlyArray<SyncViolation>) =>
  violations.length === 0
    ? Effect.void
    : Effect.fail(new TeamSyncRejectedError({ direction: "incoming", remote: c.remote, commit, violations }))

/** Moves the working tree and branch to `commit`, a descendant of HEAD whose tree was inspected. */
const checkout = (c: Clone, commit: string) =>
  runOk(c, "checkout", ["merge", "--ff-only", "-q", commit]).pipe(
    Effect.mapError((error) =>
      syncError(c, "checkout", `${error.detail} (a file in team/ changed during the sync? run it again)`)
    )
  )

/** The merged tree of `head` and `incoming`, computed without the working tree, conflicts resolved. */
const mergeTrees = (c: Clone, head: string, incoming: string) =>
  Effect.gen(function*() {
    const merged = yield* run(c, "merge", [
      "merge-tree",
      "--write-tree",
      "-z",
      "--allow-unrelated-histories",
      head,
      incoming
    ])
    if (merged.exitCode !== 0 && merged.exitCode !== 1) {
      yield* checkGitVersion(c)
      return yield* syncError(c, "merge", `git merge-tree exited with ${merged.exitCode}: ${gitSays(merged.stderr)}`)
    }
    const result = parseMergeTree(merged.stdout)
    const resolution = resolveConflicts(result.conflicted)
    if (resolution.entries.length === 0) return { tree: result.tree, conflicts: resolution.conflicts }
    // A private index: the user's working tree and index stay as they are until the checkout.
    const index = c.path.join(c.gitDir, `memdir-merge.${currentPid()}.index`)
    const env = { GIT_INDEX_FILE: index }
    const conflictedPaths = [...new Set(result.conflicted.map((entry) => entry.path))]
    const tree = yield* Effect.gen(function*() {
      yield* runOk(c, "merge", ["read-tree", result.tree], { env })
      // Mode 0 removes the conflicted entry (with its markers); then each kept version is added.
      const removals = conflictedPaths.map((p) => `0 ${"0".repeat(40)}\t${p}\0`)
      const additions = resolution.entries.map((e) => `${e.mode} ${e.sha}\t${e.path}\0`)
      yield* runOk(c, "merge", ["update-index", "-z", "--index-info"], {
        env,
        stdin: [...removals, ...additions].join("")
      })
      return (yield* runOk(c, "merge", ["write-tree"], { env })).stdout.trim()
    }).pipe(Effect.ensuring(Effect.ignore(c.memoryFs.remove(index))))
    return { tree, conflicts: resolution.conflicts }
  })

/** Inspects `incoming` and brings it in: fast-forward, or a merge computed without the working tree. */
const integrate = (c: Clone, head: string | undefined, incoming: string) =>
  Effect.gen(function*() {
    const none: ReadonlyArray<SyncConflict> = []
    const base = head === undefined || head === incoming ? head : yield* mergeBase(c, head, incoming)
    if (head === incoming || base === incoming) return { merge: "up-to-date" as const, conflicts: none, head }
    // Every entry and every blob of their tree, before anything of it reaches the working tree.
    const incomingEntries = yield* listTree(c, incoming)
    yield* rejectIncoming(c, incoming, yield* inspectTree(c, incomingEntries, new Set()))
    if (head === undefined || base === head) {
      yield* checkout(c, incoming)
      return { merge: "fast-forward" as const, conflicts: none, head: incoming }
    }
    const { conflicts, tree } = yield* mergeTrees(c, head, incoming)
    const mergedEntries = yield* listTree(c, tree)
    // Blobs of their tree were read above; ours passed the outgoing checks: only merged blobs are new.
    const trusted = new Set([...blobShas(incomingEntries), ...blobShas(yield* listTree(c, head))])
    yield* rejectIncoming(c, incoming, yield* inspectTree(c, mergedEntries, trusted))
    const message = `memdir team sync: merge ${incoming.slice(0, 12)} from ${c.remote}`
    const commit = yield* commitTree(c, tree, [head, incoming], message)
    yield* checkout(c, commit)
    return { merge: "merged" as const, conflicts, head: commit }
  })

/**
 * Pure: whether a failed push lost a race with another pusher (the remote's ref moved, or was locked, between our
 * fetch and our push), so fetching, merging and pushing again will do. receive-pack words a lost ref update as
 * "cannot lock ref … is at … but expected …" or "failed to update ref", with or without "[remote rejected]".
 */
export const isLostPushRace = (output: string): boolean =>
  /\[rejected\]|non-fast-forward|fetch first|\[remote rejected\].*lock|cannot lock ref|failed to update ref/i.test(
    output
  )

/** Pushes HEAD; "rejected" when the remote moved on meanwhile (fetch, merge and try again). */
const push = (c: Clone) =>
  Effect.gen(function*() {
    const out = yield* run(c, "push", [
      "push",
      "-q",
      "--no-verify",
      "--porcelain",
      ...Git.localTransportOptions(c.remote, "push"),
      c.remote,
      `HEAD:refs/heads/${TEAM_BRANCH}`
    ])
    if (out.exitCode === 0) {
      // the remote's branch is now ours: what `memdir ui` counts ahead and behind against until the next fetch
      yield* runOk(c, "push", ["update-ref", INCOMING_REF, "HEAD"])
      return "pushed" as const
    }
    if (isLostPushRace(out.stdout + out.stderr)) {
      return "rejected" as const
    }
    return yield* syncError(c, "push", `git push exited with ${out.exitCode}: ${gitSays(out.stderr || out.stdout)}`)
  })

/**
 * Each checked-out team file gets its last commit time as mtime (one `git log` for all of them), so a memory a
 * teammate wrote 40 days ago is 40 days old here too (docs/team-memory.md#ages-after-a-sync). Only regular files
 * are touched, never through a link.
 */
const setCommitTimes = (c: Clone) =>
  Effect.gen(function*() {
    const out = yield* runOk(c, "ages", commitTimesArgs(false))
    for (const [relative, ms] of parseCommitTimes(out.stdout)) {
      if (!relative.endsWith(".md") || relative.split("/").some((segment) => segment === ".." || segment === "")) {
        continue
      }
      const file = c.path.join(c.teamDir, ...relative.split("/"))
      if ((yield* kindOf(c, file)) !== "file") continue
      yield* c.memoryFs.setModified(file, ms).pipe(Effect.mapError(ioErrorOf("utimes", file)))
    }
  })

const syncLocked = (c: Clone) =>
  Effect.tap(syncRounds(c), (result) => result.head === undefined ? Effect.void : setCommitTimes(c))

const syncRounds = (c: Clone) =>
  Effect.gen(function*() {
    yield* ensureClone(c)
    const local = yield* commitLocalChanges(c)
    // Where the branch is, tracked here rather than asked of git again (each git process costs a spawn).
    let head = local.head
    const conflicts: Array<SyncConflict> = []
    let merge: TeamSyncResult["merge"] = "none"
    let incoming: string | undefined
    for (let round = 1;; round++) {
      incoming = yield* fetchIncoming(c)
      if (incoming !== undefined) {
        const integrated = yield* integrate(c, head, incoming)
        conflicts.push(...integrated.conflicts)
        merge = merge === "merged" || integrated.merge === "merged" ? "merged" : integrated.merge
        head = integrated.head
      }
      const done = (pushed: boolean): TeamSyncResult => ({
        remote: c.remote,
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
      if ((yield* push(c)) === "pushed") return done(true)
      if (round >= TEAM_SYNC_MAX_ROUNDS) {
        return yield* syncError(
          c,
          "push",
          `the remote kept moving: push refused ${round} times. Your changes are committed locally`
        )
      }
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

const notConfigured = (detail: string) => new TeamSyncError({ step: "configure", remote: "", detail })

export const make: Effect.Effect<
  Context.Service.Shape<typeof TeamSync>,
  never,
  Git.Git | Path.Path | TeamGuard | MemoryFs
> = Effect.gen(function*() {
  const git = yield* Git.Git
  const memoryFs = yield* MemoryFs
  const path = yield* Path.Path
  const guard = yield* TeamGuard
  const services = Context.make(MemoryFs, memoryFs).pipe(
    Context.add(Path.Path, path),
    Context.add(TeamGuard, guard)
  )

  const sync = Effect.fn("TeamSync.sync")(
    function*(team: TeamLocation) {
      if (!team.memory.enabled) return yield* new MemoryDisabledError({ source: team.memory.enabledBy })
      if (!team.enabled) return yield* new TeamMemoryDisabledError({ source: team.enabledBy })
      if (team.remote === undefined) {
        return yield* notConfigured(
          "no remote is configured: set \"teamRemote\" (a git URL or path, e.g. " +
            "\"git@github.com:acme/team-memory.git\") in your user settings ($MEMDIR_HOME/settings.json) or local " +
            "settings (<repo>/.memdir/settings.local.json); project settings are not trusted for it"
        )
      }
      if (team.remote.startsWith("-")) {
        return yield* notConfigured(
          `"teamRemote" ${JSON.stringify(team.remote)} starts with "-", which git would read as an option: ` +
            "set a path or a URL"
        )
      }
      const memoryDir = team.memory.memoryDir
      const teamDir = yield* ensureTeamDir(memoryDir)
      const clone: Clone = {
        git,
        memoryFs,
        path,
        guard,
        gitDir: path.join(path.resolve(memoryDir), TEAM_GIT_DIR),
        teamDir: path.resolve(teamDir),
        remote: team.remote
      }
      return yield* withTeamLock(memoryDir, syncLocked(clone))
    },
    Effect.provide(services)
  )

  return TeamSync.of({ sync })
})

/** The sync over the `Git` and `MemoryFs` it is given (`Memdir.layer` composes it so). */
export const layerOver: Layer.Layer<
  TeamSync,
  never,
  Git.Git | MemoryFs | Path.Path | TeamGuard
> = Layer.effect(TeamSync, make)

/** The sync over a `Git` provided by the caller (tests give one with a short timeout or an isolated home). */
export const layerWithoutDependencies: Layer.Layer<
  TeamSync,
  never,
  Git.Git | Path.Path | TeamGuard
> = layerOver.pipe(Layer.provide(MemoryFsLayer))

/** Live sync: git as a child process through `Git.layer` (needs `ChildProcessSpawner`: `NodeServices.layer`). */
export const layer: Layer.Layer<
  TeamSync,
  never,
  ChildProcessSpawner | Path.Path | TeamGuard
> = layerWithoutDependencies.pipe(Layer.provide(Git.layer))

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
