/**
 * MemoryTools: the tools a background agent (extraction, dream) gets, sandboxed by code, never by the prompt.
 *
 * - Read-only project tools over the project root: `read_file`, `list_dir`, `grep`. Paths pass `Containment`
 *   (inside the root, also through links); files are opened through `MemoryFs` (no link followed, no FIFO
 *   waited on); output is bounded.
 * - Memory tools over the memory directory: `memory_list`, `memory_read`, `memory_write` (a whole file with
 *   frontmatter), `memory_edit` (exact string replace, then the same write), and `memory_delete` only when the
 *   caller enables it (dream). Every one goes through the `MemoryStore`, the door every other writer uses: the
 *   same containment, the same refusals (`MEMORY.md`, hidden entries, `logs/`), the same size cap, every
 *   frontmatter key kept, and for `team/…` (only with `team: true`) the team rules: the guard, the secret
 *   refusal, the team lock and the `team/MEMORY.md` line. `MEMORY.md` itself is edited only when the caller
 *   allows it, and only under its caps.
 *
 * A refused call is answered to the model as an error that names why, and recorded in `refusals` for the run's
 * report; a failure the model cannot fix (disk, lock) is kept in `ioFailures`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as NodePath from "node:path"
import { type AgentTool, defineTool, ToolFailure } from "./Agent.js"
import { Containment } from "./Containment.js"
import { type LockTimeoutError, MemoryIoError, type PathTraversalError } from "./Errors.js"
import { parseMemoryFile } from "./Frontmatter.js"
import { GitAges } from "./GitAges.js"
import type { RunTrace } from "./internal/runs/trace.js"
import { describeFiles, headBuffer as makeHeadBuffer } from "./internal/scan/listHeads.js"
import { isCandidatePath } from "./internal/scan/paths.js"
import { compileSafeRegex, makeLineSearch } from "./internal/text/safeRegex.js"
import { type MemoryScope, memoryVersion, TEAM_DIR } from "./Memory.js"
import { isoTime } from "./MemoryAge.js"
import { MemoryFs, type MemoryFsError } from "./MemoryFs.js"
import { checkIndexCaps, INDEX_FILE, MemoryIndex } from "./MemoryIndex.js"
import {
  type MemoryRoot,
  MemoryStore,
  type StoreKey,
  type StoreReadError,
  type StoreRemoveError,
  type StoreWriteError
} from "./MemoryStore.js"
import * as Operations from "./Operations.js"

/** Lines of one `read_file` / `memory_read` answer at most. */
export const READ_MAX_LINES = 2000
/** Characters of one read answer at most (below the agent's cap on a tool result, so the note stays visible). */
export const READ_MAX_CHARS = 30_000
/** Entries of one `list_dir` / `memory_list` answer at most. */
export const LIST_MAX_ENTRIES = 500
/** Matching lines of one `grep` answer at most. */
export const GREP_MAX_MATCHES = 200
/** Files one `grep` looks at, at most. */
export const GREP_MAX_FILES = 5000
/** Larger files are skipped by `grep`. */
export const GREP_MAX_FILE_BYTES = 1024 * 1024
/** Directories `grep` never enters. */
const GREP_SKIPPED_DIRS: ReadonlySet<string> = new Set([".git", "node_modules"])

export interface MemoryToolsOptions {
  readonly memoryDir: string
  /** Root of the read-only project tools; without it, `read_file`, `list_dir` and `grep` are not offered. */
  readonly projectRoot?: string | undefined
  /** Offer `memory_delete` (dream). Default false: an extractor adds and updates, it does not delete. */
  readonly allowDelete?: boolean | undefined
  /** Let `memory_edit` change MEMORY.md itself, within its caps (dream's prune phase). Default false. */
  readonly allowIndexEdit?: boolean | undefined
  /** Team memory is on: paths under `team/` are team memories (the store's team rules). Default off: refused. */
  readonly team?: boolean | undefined
  /**
   * The run's trace (`internal/runs/trace.ts`): before a tool replaces or deletes a memory, its text is kept there
   * (the first version the run replaced), and the change names the backup. Without it nothing is backed up.
   */
  readonly trace?: RunTrace | undefined
}

/** A memory file a tool created, updated or deleted, with the text before and after (nothing vanishes untraced). */
export interface MemoryChange {
  readonly tool: string
  readonly op: "created" | "updated" | "deleted"
  /** Relative to the memory directory, `/` separators. */
  readonly file: string
  readonly before?: string | undefined
  readonly after?: string | undefined
  /** Where the text it replaced or deleted was kept (relative to the memory directory), with a run's trace. */
  readonly backup?: string | undefined
}

/** A call the sandbox refused. */
export interface ToolRefusal {
  readonly tool: string
  readonly path: string
  /** `absolute`, `escapes-root`, `symlink-escape`, `dangling-symlink`, `index-file`, `hidden`, `team-disabled`, … */
  readonly reason: string
  readonly message: string
}

/** A write that failed for a reason the model cannot fix (disk, lock): the run should not count as a success. */
export interface ToolIoFailure {
  readonly tool: string
  readonly path: string
  readonly error: MemoryIoError | LockTimeoutError
}

export interface MemoryToolset {
  readonly tools: ReadonlyArray<AgentTool>
  readonly changes: Effect.Effect<ReadonlyArray<MemoryChange>>
  readonly refusals: Effect.Effect<ReadonlyArray<ToolRefusal>>
  readonly ioFailures: Effect.Effect<ReadonlyArray<ToolIoFailure>>
}

/**
 * A line number or count: a whole number above 0. Optional tool fields are `optionalKey` (absent, never `undefined`
 * nor `null`): the input is JSON, and the JSON schema the model reads lists each as its plain type.
 */
const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/** A path refused by the sandbox (becomes a `ToolRefusal` and an error answer). */
class Refused extends Schema.TaggedError<Refused>()("Refused", {
  path: Schema.String,
  reason: Schema.String,
  detail: Schema.String
}) {}

const fail = (message: string) => Effect.fail(new ToolFailure({ message }))

/** Text cut to the read caps, with a note saying how to get the rest. */
export const boundText = (text: string, options: { readonly offset?: number; readonly limit?: number } = {}) => {
  const lines = text.split("\n")
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  const start = Math.max(1, options.offset ?? 1)
  const limit = Math.min(READ_MAX_LINES, Math.max(1, options.limit ?? READ_MAX_LINES))
  const shown: Array<string> = []
  let chars = 0
  let end = start - 1
  for (let i = start - 1; i < lines.length && shown.length < limit; i++) {
    const line = lines[i]!
    if (chars + line.length + 1 > READ_MAX_CHARS && shown.length > 0) break
    shown.push(line.length > READ_MAX_CHARS ? line.slice(0, READ_MAX_CHARS) + " [… line cut]" : line)
    chars += line.length + 1
    end = i + 1
  }
  const body = shown.join("\n")
  if (start > lines.length && lines.length > 0) {
    return `(the file has ${lines.length} lines; offset ${start} is past the end)`
  }
  return end < lines.length ?
    `${body}\n[… lines ${start}–${end} of ${lines.length}; read on with offset ${end + 1}]` :
    body
}

const looksBinary = (text: string): boolean => text.slice(0, 8192).includes("\u0000")

const toPosix = (relative: string): string => relative.split(/[\\/]/).join("/")

/** What the tools run on: the memory store (every memory path), the file system and containment (project tools). */
export type MemoryToolsRequirements = MemoryStore | MemoryFs | Containment | MemoryIndex

export const make = Effect.fn("MemoryTools.make")(function*(options: MemoryToolsOptions) {
  const store = yield* MemoryStore
  const fs = yield* MemoryFs
  const containment = yield* Containment
  const index = yield* MemoryIndex
  const changes = yield* Ref.make<ReadonlyArray<MemoryChange>>([])
  const refusals = yield* Ref.make<ReadonlyArray<ToolRefusal>>([])
  const ioFailures = yield* Ref.make<ReadonlyArray<ToolIoFailure>>([])

  const memoryRoot = NodePath.resolve(options.memoryDir)
  const root: MemoryRoot = {
    memoryDir: memoryRoot,
    teamEnabled: options.team === true
  }
  const record = (change: MemoryChange) => Ref.update(changes, (all) => [...all, change])
  // Writes of one turn run in parallel; each reads, then writes: one at a time, so no edit is lost to another.
  const mutation = yield* Semaphore.make(1)
  const serialized = mutation.withPermits(1)

  // -------------------------------------------------------------------------------------------------------------
  // Error mapping: refusals are logged, infrastructure failures are kept for the caller, all reach the model
  // -------------------------------------------------------------------------------------------------------------

  const sandboxed = <A>(tool: string, key: string, effect: Effect.Effect<A, Refused | ToolFailure>) =>
    effect.pipe(
      Effect.catchTag("Refused", (refused) => {
        const message = `refused ${JSON.stringify(refused.path)}: ${refused.reason} (${refused.detail}). ` +
          `Memory paths stay inside the memory directory.`
        return Ref.update(refusals, (all) => [...all, { tool, path: key, reason: refused.reason, message }]).pipe(
          Effect.andThen(fail(message))
        )
      })
    )

  type StoreFailure =
    | StoreWriteError
    | StoreRemoveError
    | StoreReadError

  /** A store failure as the model sees it: a refusal (logged), an I/O failure (kept for the caller), or advice. */
  const fromStore =
    (tool: string, key: string) => (error: StoreFailure): Effect.Effect<never, ToolFailure | Refused> => {
      switch (error._tag) {
        case "PathTraversalError":
          return Effect.fail(new Refused({ path: key, reason: error.reason, detail: error.message }))
        case "TeamMemoryDisabledError":
          return Effect.fail(
            new Refused({ path: key, reason: "team-disabled", detail: "team memory is off for this run" })
          )
        case "InvalidMemoryInputError":
          return error.rule !== undefined ?
            Effect.fail(new Refused({ path: key, reason: error.rule, detail: error.reason })) :
            fail(error.message)
        case "MemoryIoError":
        case "LockTimeoutError":
          return Ref.update(ioFailures, (all) => [...all, { tool, path: key, error }]).pipe(
            Effect.andThen(fail(error.message))
          )
        default:
          return fail(error.message)
      }
    }

  const hiddenRefusal = (key: string) => {
    const relative = key.trim()
    const segments = relative.split("/")
    return segments.some((segment) => segment.startsWith(".") && segment !== "." && segment !== "..") ?
      Effect.fail(
        new Refused({
          path: key,
          reason: "hidden",
          detail: "hidden entries hold memdir's own state (locks, cursors, temp files)"
        })
      ) :
      Effect.void
  }

  /** The current text of a memory, `None` when there is no file. */
  const readMemory = (tool: string, key: string) =>
    store.read(root, key).pipe(
      Effect.map((stored) => Option.some(stored.text)),
      Effect.catchTag("MemoryNotFoundError", () => Effect.succeedNone),
      Effect.catch(fromStore(tool, key))
    )

  const isIndexKey = (key: string) => key.trim().toLowerCase() === INDEX_FILE.toLowerCase()

  /**
   * With a trace, the text a change replaces is kept before the change: read now, kept, and the write made only
   * while the memory is still that version (`ifVersion`), so the backup is exactly what was replaced. A memory that
   * appears between the read and the write is kept from what the store replaced. Answers the backup's key.
   */
  const keepBefore = (tool: string, key: string) =>
    Effect.gen(function*() {
      if (options.trace === undefined) return { backup: undefined, ifVersion: undefined }
      const trace = options.trace
      const current = yield* store.read(root, key).pipe(
        Effect.map(Option.some),
        Effect.catchTag("MemoryNotFoundError", () => Effect.succeedNone),
        // over the 1 MiB a memory is read whole (only a deletion can touch it): dream byte-copied it before it began
        Effect.catchIf(
          (error) => error._tag === "PathTraversalError" && error.reason === "too-large",
          () => Effect.succeedNone
        ),
        Effect.catch(fromStore(tool, key))
      )
      if (Option.isNone(current)) return { backup: undefined, ifVersion: undefined }
      const backup = yield* trace.keepPrevious(current.value.key, current.value.text).pipe(
        Effect.catch(backupFailure(tool, key))
      )
      return { backup, ifVersion: memoryVersion(current.value.text) }
    })

  /** The backup of a change whose old text was not read before it (it appeared meanwhile), kept now. */
  const keepAfter = (tool: string, key: string, file: string, before: string | undefined, kept: string | undefined) =>
    options.trace === undefined || before === undefined || kept !== undefined ?
      Effect.succeed(kept) :
      options.trace.keepPrevious(file, before).pipe(Effect.catch(backupFailure(tool, key)))

  /** A backup that cannot be written: the change is not made (or, after it, the run fails: an I/O failure). */
  const backupFailure = (tool: string, key: string) => (error: PathTraversalError | MemoryIoError) =>
    error._tag === "MemoryIoError" ?
      fromStore(tool, key)(error) :
      Ref.update(ioFailures, (all) => [...all, {
        tool,
        path: key,
        error: new MemoryIoError({ op: "back up", path: key, detail: error.message })
      }]).pipe(Effect.andThen(fail(`${key}: its previous version cannot be kept (${error.message})`)))

  /** What the model reads after a change: the memory, its index file, and what the memory is now. */
  const changeSummary = (op: string, key: string, scope: MemoryScope, after: string) => {
    const parsed = parseMemoryFile(after, key)
    const what = Result.isSuccess(parsed)
      ? ` (${parsed.success.frontmatter.type}: ${parsed.success.frontmatter.name})`
      : ""
    const indexFile = scope === "team" ? `${TEAM_DIR}/${INDEX_FILE}` : INDEX_FILE
    return `${op} ${key} and its line in ${indexFile}${what}`
  }

  /** Write a whole memory file through the store (validated, its index line kept) and record the change. */
  const writeWhole = (tool: string, key: string, content: string) =>
    Effect.gen(function*() {
      const kept = yield* keepBefore(tool, key)
      const written = yield* store.write(root, key, content, { ifVersion: kept.ifVersion }).pipe(
        Effect.catch(fromStore(tool, key))
      )
      const op = written.created ? "created" : "updated"
      const backup = yield* keepAfter(tool, key, written.key, written.before, kept.backup)
      yield* record({ tool, op, file: written.key, before: written.before, after: written.after, backup })
      return changeSummary(op, written.key, written.scope, written.after)
    })

  // -------------------------------------------------------------------------------------------------------------
  // Memory tools
  // -------------------------------------------------------------------------------------------------------------

  // Commit times of a git-tracked memory directory, when the caller provides them (as the scanner counts ages).
  const gitAges = yield* Effect.serviceOption(GitAges)
  const headBuffer = makeHeadBuffer()

  /** The lines of the entries a listing shows (only those: a listing never opens nor stats the files it does not show). */
  const describeShown = (shown: ReadonlyArray<StoreKey>) =>
    Effect.gen(function*() {
      const files = shown.map((entry) => ({
        key: entry.key,
        path: entry.path,
        candidate: isCandidatePath(entry.key, [])
      }))
      const commitTimes = Option.isSome(gitAges) ? yield* gitAges.value.commitTimes(memoryRoot) : undefined
      return yield* describeFiles(fs, headBuffer, files, commitTimes)
    })

  const memoryList = defineTool({
    name: "memory_list",
    description: "List the files of the memory directory (or of one sub-directory), with each memory's type and " +
      "description. Hidden entries are not shown.",
    input: Schema.Struct({
      dir: Schema.optionalKey(Schema.String.annotate({
        description: "Sub-directory relative to the memory directory; default: all of it"
      }))
    }),
    run: ({ dir }) =>
      sandboxed(
        "memory_list",
        dir ?? "",
        Effect.gen(function*() {
          yield* hiddenRefusal(dir ?? "")
          // Named from the directory entries; only the page's files are opened, once each (a size from its fstat).
          const entries = yield* store.listKeys(root, dir ?? "").pipe(
            Effect.catch(fromStore("memory_list", dir ?? ""))
          )
          const shown = entries.slice(0, LIST_MAX_ENTRIES)
          const described = yield* describeShown(shown)
          // A file gone (or no longer a regular file) since it was listed has no line.
          const lines: Array<string> = []
          for (let i = 0; i < shown.length; i++) {
            const entry = shown[i]!
            const line = described[i]
            if (line === undefined) continue
            lines.push(
              line._tag === "File" ?
                `- ${entry.key} (${line.size} bytes)` :
                `- [${line.type}] ${entry.key} (${isoTime(line.writtenAt)}): ${line.description}`
            )
          }
          const more = entries.length - shown.length
          if (lines.length === 0) return "(no files)"
          return lines.join("\n") + (more > 0 ? `\n[… ${more} more files not shown]` : "")
        })
      )
  })

  const memoryRead = defineTool({
    name: "memory_read",
    description: "Read a file of the memory directory (a memory, MEMORY.md or a daily log). Paths are relative to " +
      "the memory directory.",
    input: Schema.Struct({
      path: Schema.String.annotate({ description: "e.g. feedback_testing.md" }),
      offset: Schema.optionalKey(PositiveInt.annotate({ description: "first line, 1-based" })),
      limit: Schema.optionalKey(PositiveInt.annotate({ description: "lines to read" }))
    }),
    run: ({ limit, offset, path: key }) =>
      sandboxed(
        "memory_read",
        key,
        Effect.gen(function*() {
          yield* hiddenRefusal(key)
          const content = yield* readMemory("memory_read", key)
          if (Option.isNone(content)) return yield* fail(`no file ${key.trim()} in the memory directory`)
          if (looksBinary(content.value)) return yield* fail(`${key.trim()} is not a text file`)
          return boundText(content.value, {
            ...(offset === undefined ? {} : { offset }),
            ...(limit === undefined ? {} : { limit })
          })
        })
      )
  })

  const memoryWrite = defineTool({
    name: "memory_write",
    description: "Create or replace one memory file: the whole file, beginning with the frontmatter (name, " +
      "description, type: user | feedback | project | reference). Its line in MEMORY.md is added or updated for " +
      "you: never write MEMORY.md yourself.",
    input: Schema.Struct({
      path: Schema.String.annotate({ description: "relative .md path, e.g. feedback_testing.md" }),
      content: Schema.String.annotate({ description: "the whole file: frontmatter, blank line, body" })
    }),
    run: ({ content, path: key }) =>
      sandboxed("memory_write", key, serialized(writeWhole("memory_write", key, content)))
  })

  const editIndex = (key: string, before: string, after: string) =>
    Effect.gen(function*() {
      const over = checkIndexCaps(NodePath.join(memoryRoot, INDEX_FILE), before, after)
      if (over !== undefined) return yield* fail(over.message)
      yield* index.modify(memoryRoot, (current) =>
        current.text === before ?
          Effect.succeed({ text: after, result: undefined }) :
          fail(`${INDEX_FILE} changed while you were editing it: read it again`)).pipe(
          Effect.catchTags({
            LockTimeoutError: fromStore("memory_edit", key),
            MemoryIoError: fromStore("memory_edit", key)
          })
        )
      yield* record({ tool: "memory_edit", op: "updated", file: INDEX_FILE, before, after })
      return `updated ${INDEX_FILE}`
    })

  const memoryEdit = defineTool({
    name: "memory_edit",
    description: "Replace an exact string in a memory file (it must occur once, unless replace_all). The result must " +
      "still be a valid memory with frontmatter; its MEMORY.md line follows the new description.",
    input: Schema.Struct({
      path: Schema.String,
      old_string: Schema.String.check(Schema.isMinLength(1)),
      new_string: Schema.String,
      replace_all: Schema.optionalKey(Schema.Boolean)
    }),
    run: (input) =>
      sandboxed(
        "memory_edit",
        input.path,
        serialized(Effect.gen(function*() {
          yield* hiddenRefusal(input.path)
          if (isIndexKey(input.path) && options.allowIndexEdit !== true) {
            return yield* new Refused({
              path: input.path,
              reason: "index-file",
              detail: `${INDEX_FILE} is maintained by memdir: write the memory file instead`
            })
          }
          const edit = {
            old: input.old_string,
            new: input.new_string,
            ...(input.replace_all === undefined ? {} : { replaceAll: input.replace_all })
          }
          const current = yield* readMemory("memory_edit", input.path)
          if (Option.isNone(current)) return yield* fail(`no file ${input.path.trim()}: create it with memory_write`)
          // Checked before anything is kept: an edit that names no one place leaves no backup behind.
          const planned = yield* Effect.fromResult(Operations.planEdit(input.path.trim(), current.value, edit)).pipe(
            Effect.mapError((error) => new ToolFailure({ message: error.message }))
          )
          if (isIndexKey(input.path)) return yield* editIndex(input.path, current.value, planned.text)
          // The one edit (Operations.edit): written only while the memory is still the text it was computed from
          // (with a trace, the text kept as its backup).
          const kept = yield* keepBefore("memory_edit", input.path)
          const ifVersion = kept.ifVersion ?? memoryVersion(current.value)
          const edited = yield* Operations.edit(root, { path: input.path, ...edit, ifVersion }).pipe(
            Effect.provideService(MemoryStore, store),
            Effect.catch((error) =>
              error._tag === "MemoryNotFoundError" ?
                fail(`no file ${input.path.trim()}: create it with memory_write`) :
                error._tag === "EditMatchError" ?
                fail(error.message) :
                fromStore("memory_edit", input.path)(error)
            )
          )
          yield* record({
            tool: "memory_edit",
            op: "updated",
            file: edited.path,
            before: edited.before,
            after: edited.after,
            backup: kept.backup
          })
          return changeSummary("updated", edited.path, edited.scope, edited.after)
        }))
      )
  })

  const memoryDelete = defineTool({
    name: "memory_delete",
    description: "Delete a memory file and its line in MEMORY.md (for memories that are wrong, contradicted or " +
      "merged into another).",
    input: Schema.Struct({ path: Schema.String }),
    run: ({ path: key }) =>
      sandboxed(
        "memory_delete",
        key,
        serialized(Effect.gen(function*() {
          if (isIndexKey(key)) {
            return yield* new Refused({ path: key, reason: "index-file", detail: "the index is never deleted" })
          }
          const kept = yield* keepBefore("memory_delete", key)
          const removed = yield* Operations.remove(root, { path: key }).pipe(
            Effect.provideService(MemoryStore, store),
            Effect.catch(fromStore("memory_delete", key))
          )
          const before = removed.before ?? undefined
          const backup = yield* keepAfter("memory_delete", key, removed.path, before, kept.backup)
          yield* record({ tool: "memory_delete", op: "deleted", file: removed.path, before, backup })
          return `deleted ${removed.path}`
        }))
      )
  })

  // -------------------------------------------------------------------------------------------------------------
  // Read-only project tools
  // -------------------------------------------------------------------------------------------------------------

  const projectTools = (projectRoot: string): ReadonlyArray<AgentTool> => {
    const rootDir = NodePath.resolve(projectRoot)
    const locate = (key: string, allowRoot: boolean) =>
      containment.resolve(rootDir, key.trim() === "" ? "." : key.trim(), { allowRoot, allowAbsolute: true }).pipe(
        Effect.mapError((error) => new Refused({ path: key, reason: error.reason, detail: error.message }))
      )
    const ioFailure = (at: string) => (error: MemoryFsError) => new ToolFailure({ message: `${at}: ${error.message}` })

    const readFile = defineTool({
      name: "read_file",
      description: "Read a text file of the project (read-only), with line numbers. Paths are relative to the " +
        "project root.",
      input: Schema.Struct({
        path: Schema.String,
        offset: Schema.optionalKey(PositiveInt),
        limit: Schema.optionalKey(PositiveInt)
      }),
      run: ({ limit, offset, path: key }) =>
        sandboxed(
          "read_file",
          key,
          Effect.gen(function*() {
            const located = yield* locate(key, false)
            const file = yield* fs.readFile(located.real, {
              maxBytes: GREP_MAX_FILE_BYTES * 8,
              within: located.realRoot
            })
              .pipe(
                Effect.mapError((error) =>
                  new ToolFailure({
                    message: error.reason === "NotFound" ?
                      `no file ${key} in the project` :
                      error.reason === "TooLarge" ?
                      `${key} is too large to read` :
                      error.reason === "NotRegularFile" ?
                      `${key} is not a file` :
                      `${key}: ${error.message}`
                  })
                )
              )
            if (looksBinary(file.text)) return yield* fail(`${key} is not a text file`)
            const first = Math.max(1, offset ?? 1)
            const numbered = file.text.split("\n").map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join("\n")
            return boundText(numbered, { offset: first, ...(limit === undefined ? {} : { limit }) })
          })
        )
    })

    const listDir = defineTool({
      name: "list_dir",
      description: "List a directory of the project (read-only): sub-directories end with /.",
      input: Schema.Struct({ path: Schema.optionalKey(Schema.String) }),
      run: ({ path: key }) =>
        sandboxed(
          "list_dir",
          key ?? ".",
          Effect.gen(function*() {
            const located = yield* locate(key ?? ".", true)
            const entries = yield* fs.readDirectory(located.real).pipe(Effect.mapError(ioFailure(key ?? ".")))
            const shown = entries.slice(0, LIST_MAX_ENTRIES).map((entry) =>
              entry.name + (entry.kind === "SymbolicLink" ? "@" : entry.kind === "Directory" ? "/" : "")
            )
            const more = entries.length > LIST_MAX_ENTRIES ? `\n[… ${entries.length - LIST_MAX_ENTRIES} more]` : ""
            return shown.length === 0 ? "(empty)" : shown.join("\n") + more
          })
        )
    })

    const grep = defineTool({
      name: "grep",
      description: "Search the project's text files for a regular expression (read-only). Skips .git, " +
        "node_modules, symlinks, binary and large files. Answers path:line: text.",
      input: Schema.Struct({
        pattern: Schema.String.check(Schema.isMinLength(1)),
        path: Schema.optionalKey(Schema.String.annotate({ description: "directory or file; default: the root" })),
        ignore_case: Schema.optionalKey(Schema.Boolean)
      }),
      run: (input) =>
        sandboxed(
          "grep",
          input.path ?? ".",
          Effect.gen(function*() {
            // A linear-time matcher: a model's pattern cannot block the event loop (no backtracking).
            const regex = yield* compileSafeRegex(input.pattern, { ignoreCase: input.ignore_case === true }).pipe(
              Effect.mapError((error) => new ToolFailure({ message: `invalid pattern: ${error.message}` }))
            )
            const located = yield* locate(input.path ?? ".", true)
            const info = yield* fs.lstat(located.real).pipe(Effect.mapError(ioFailure(input.path ?? ".")))
            const files: Array<string> = []
            if (info.kind === "File") {
              files.push(located.real)
            } else {
              const entries = yield* fs.walk(located.real, { enter: (_relative, name) => !GREP_SKIPPED_DIRS.has(name) })
                .pipe(Effect.mapError(ioFailure(input.path ?? ".")))
              for (const entry of entries) {
                if (files.length >= GREP_MAX_FILES) break
                if (entry.info.kind === "File" && entry.info.size <= GREP_MAX_FILE_BYTES) files.push(entry.absolute)
              }
            }
            const search = makeLineSearch(regex, { maxMatches: GREP_MAX_MATCHES })
            for (const file of files) {
              const text = yield* fs.readFile(file, { maxBytes: GREP_MAX_FILE_BYTES }).pipe(
                Effect.map((read) => read.text),
                Effect.orElseSucceed(() => "")
              )
              if (looksBinary(text)) continue
              if (!search.scan(toPosix(NodePath.relative(located.realRoot, file)), text)) break
              yield* Effect.yieldNow
            }
            return search.render()
          })
        )
    })

    return [readFile, listDir, grep]
  }

  const tools: Array<AgentTool> = [
    ...(options.projectRoot === undefined ? [] : projectTools(options.projectRoot)),
    memoryList,
    memoryRead,
    memoryWrite,
    memoryEdit,
    ...(options.allowDelete === true ? [memoryDelete] : [])
  ]

  return {
    tools,
    changes: Ref.get(changes),
    refusals: Ref.get(refusals),
    ioFailures: Ref.get(ioFailures)
  } satisfies MemoryToolset
})
