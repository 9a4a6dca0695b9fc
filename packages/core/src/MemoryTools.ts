/**
 * MemoryTools: the tools a background agent (extraction, dream) gets, sandboxed by code, never by the prompt
 * (SPEC §11).
 *
 * - Read-only project tools over the project root: `read_file`, `list_dir`, `grep`. Paths must stay inside the
 *   root, also through symlinks; output is bounded.
 * - Memory tools over the memory directory: `memory_list`, `memory_read`, `memory_write` (a whole file with
 *   frontmatter, through the write program: validated, atomic, its index line kept), `memory_edit` (exact string
 *   replace, then the same validation and write), and `memory_delete` only when the caller enables it (dream).
 *
 * Every path is checked before anything touches the disk: no null bytes, backslashes or percent-encoded
 * separators; an absolute path only when it lies inside the directory; `..` resolved, then compared with a trailing
 * separator; then the real path of the target (or of its deepest existing ancestor) must lie inside the real
 * directory, so a symlink pointing out is refused, and a dangling symlink or a loop too. Memory writes are also
 * refused for `MEMORY.md` (the index is maintained by code: edits only when the caller allows it, and only under its
 * caps), hidden entries (memdir's locks, cursors, temp files), `logs/` (append-only) and `team/` unless a
 * `TeamGuard` is given (then every team path goes through it). A refused call is answered to the model as an error
 * that names why, and recorded in `refusals` for the run's report.
 */
import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { type AgentTool, defineTool, ToolFailure } from "./Agent.js"
import type {
  IndexOverCapError,
  InvalidMemoryInputError,
  LockTimeoutError,
  MemoryIoError,
  MemoryNotFoundError,
  PathTraversalError
} from "./Errors.js"
import { parseMemoryFile } from "./Frontmatter.js"
import { isNotFound } from "./internal/atomicFile.js"
import { LOGS_DIR_NAME as LOGS_DIR } from "./internal/scanPaths.js"
import { checkIndexCaps, INDEX_FILE, MemoryIndex } from "./MemoryIndex.js"
import { Scanner } from "./Scanner.js"
import { TEAM_DIR, type TeamGuard } from "./TeamGuard.js"
import { deleteMemory, validateWriteInput, writeMemory } from "./Write.js"

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
  /** Team memory is on: paths under `team/` go through this guard. Without it they are refused. */
  readonly teamGuard?: Context.Tag.Service<TeamGuard> | undefined
}

/** A memory file a tool created, updated or deleted, with the text before and after (nothing vanishes untraced). */
export interface MemoryChange {
  readonly tool: string
  readonly op: "created" | "updated" | "deleted"
  /** Relative to the memory directory, `/` separators. */
  readonly file: string
  readonly before?: string | undefined
  readonly after?: string | undefined
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

/** A path refused by the sandbox (becomes a `ToolRefusal` and an error answer). */
class Refused extends Schema.TaggedError<Refused>()("Refused", {
  path: Schema.String,
  reason: Schema.String,
  detail: Schema.String
}) {}

const fail = (message: string) => Effect.fail(new ToolFailure({ message }))

/** Where a memory path points once checked. */
type MemoryTarget =
  | { readonly kind: "private"; readonly absolute: string; readonly relative: string }
  | { readonly kind: "team"; readonly relative: string; readonly teamKey: string }

type Access = "read" | "write"

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

export const make = Effect.fn("MemoryTools.make")(function*(options: MemoryToolsOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const scanner = yield* Scanner
  const index = yield* MemoryIndex
  const context = yield* Effect.context<FileSystem.FileSystem | Path.Path | MemoryIndex | Scanner>()
  const changes = yield* Ref.make<ReadonlyArray<MemoryChange>>([])
  const refusals = yield* Ref.make<ReadonlyArray<ToolRefusal>>([])
  const ioFailures = yield* Ref.make<ReadonlyArray<ToolIoFailure>>([])

  const memoryRoot = path.resolve(options.memoryDir)
  const teamDir = path.join(memoryRoot, TEAM_DIR)
  const guard = options.teamGuard
  const record = (change: MemoryChange) => Ref.update(changes, (all) => [...all, change])
  // Writes of one turn run in parallel; each reads, then writes: one at a time, so no edit is lost to another.
  const mutation = yield* Effect.makeSemaphore(1)
  const serialized = mutation.withPermits(1)

  // -------------------------------------------------------------------------------------------------------------
  // Containment
  // -------------------------------------------------------------------------------------------------------------

  const inside = (root: string, candidate: string, allowRoot: boolean): boolean =>
    (allowRoot && candidate === root) || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)

  /** The lexical checks: the absolute path `key` names under `root`, or why not. */
  const lexical = (root: string, key: string, allowRoot: boolean): Either.Either<string, Refused> => {
    const refuse = (reason: string, detail: string) => Either.left(new Refused({ path: key, reason, detail }))
    if (key.includes("\0")) return refuse("null-byte", "the path contains a null byte")
    if (key.includes("\\")) return refuse("backslash", "use / as the separator")
    if (/%(?:2e|2f|5c|25)/i.test(key)) return refuse("encoded-traversal", "percent-encoded path characters")
    if (key.startsWith("~")) return refuse("absolute", "home-relative paths are outside the sandbox")
    if (key === "" && !allowRoot) return refuse("empty", "give a file path")
    const absolute = path.resolve(root, key === "" ? "." : key)
    if (path.isAbsolute(key) && !inside(root, absolute, allowRoot)) {
      return refuse("absolute", `an absolute path outside ${root}`)
    }
    if (!inside(root, absolute, allowRoot)) return refuse("escapes-root", `it resolves outside ${root}`)
    return Either.right(absolute)
  }

  /** The real path, None when nothing is there; any other failure means the path cannot be verified. */
  const realPathOf = (at: string, key: string) =>
    fs.realPath(at).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeedNone),
      Effect.mapError((error) =>
        new Refused({
          path: key,
          reason: error.message.includes("ELOOP") ? "symlink-loop" : "unverifiable",
          detail: error.message
        })
      )
    )

  /**
   * The real path of the target, or of its deepest existing ancestor with the missing tail re-joined, must lie
   * inside the real root. A dangling symlink, a loop or an error that prevents the check refuses.
   */
  const realContainment = (root: string, absolute: string, key: string, allowRoot: boolean) =>
    Effect.gen(function*() {
      const realRoot = yield* realPathOf(root, key)
      // No root yet: nothing below it can be a symlink.
      if (Option.isNone(realRoot)) return
      let current = absolute
      for (;;) {
        const real = yield* realPathOf(current, key)
        if (Option.isSome(real)) {
          if (!inside(realRoot.value, real.value, allowRoot || current !== absolute)) {
            return yield* new Refused({ path: key, reason: "symlink-escape", detail: "a symlink points outside" })
          }
          return
        }
        const dangling = yield* fs.readLink(current).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
        if (dangling) {
          return yield* new Refused({ path: key, reason: "dangling-symlink", detail: "a symlink points nowhere" })
        }
        if (current === root || path.dirname(current) === current) return
        current = path.dirname(current)
      }
    })

  const checked = (root: string, key: string, allowRoot: boolean) =>
    Effect.gen(function*() {
      const absolute = yield* lexical(root, key, allowRoot)
      yield* realContainment(root, absolute, key, allowRoot)
      return absolute
    })

  /** A memory path checked for `access`; `allowRoot` for listings. */
  const locateMemory = (key: string, access: Access, allowRoot = false) =>
    Effect.gen(function*() {
      const absolute = yield* lexical(memoryRoot, key.trim(), allowRoot)
      const relative = toPosix(path.relative(memoryRoot, absolute))
      const segments = relative === "" ? [] : relative.split("/")
      const refuse = (reason: string, detail: string) => new Refused({ path: key, reason, detail })
      if (segments.some((segment) => segment.startsWith("."))) {
        return yield* refuse("hidden", "hidden entries hold memdir's own state (locks, cursors, temp files)")
      }
      if (segments[0] === TEAM_DIR) {
        if (guard === undefined) return yield* refuse("team-disabled", "team memory is off for this run")
        const teamKey = segments.slice(1).join("/")
        // team/ itself must not lead out of the memory directory; below it the guard applies all three layers.
        yield* realContainment(memoryRoot, absolute, key, allowRoot)
        if (teamKey !== "") {
          yield* guard.resolve(teamDir, teamKey).pipe(Effect.mapError((error) => refuse(error.reason, error.message)))
        }
        return { kind: "team", relative, teamKey } satisfies MemoryTarget
      }
      if (access === "write") {
        if (segments[0] === LOGS_DIR) return yield* refuse("logs-append-only", "daily logs are never rewritten")
        if (relative.toLowerCase() === INDEX_FILE.toLowerCase() && !options.allowIndexEdit) {
          return yield* refuse("index-file", `${INDEX_FILE} is maintained by memdir: write the memory file instead`)
        }
      }
      yield* realContainment(memoryRoot, absolute, key, allowRoot)
      return { kind: "private", absolute, relative } satisfies MemoryTarget
    })

  // -------------------------------------------------------------------------------------------------------------
  // Error mapping: refusals are logged, infrastructure failures are kept for the caller, all reach the model
  // -------------------------------------------------------------------------------------------------------------

  const sandboxed = <A>(tool: string, key: string, effect: Effect.Effect<A, Refused | ToolFailure>) =>
    effect.pipe(
      Effect.catchTag("Refused", (refused) => {
        const message = `refused ${JSON.stringify(refused.path)}: ${refused.reason} (${refused.detail}). ` +
          `Memory paths stay inside the memory directory.`
        return Ref.update(refusals, (all) => [...all, { tool, path: key, reason: refused.reason, message }]).pipe(
          Effect.zipRight(fail(message))
        )
      })
    )

  type WriteFailure =
    | IndexOverCapError
    | LockTimeoutError
    | MemoryIoError
    | InvalidMemoryInputError
    | PathTraversalError
    | MemoryNotFoundError

  const fromWriteFailure =
    (tool: string, key: string) => (error: WriteFailure): Effect.Effect<never, ToolFailure | Refused> => {
      switch (error._tag) {
        case "PathTraversalError":
          return Effect.fail(new Refused({ path: key, reason: error.reason, detail: error.message }))
        case "MemoryIoError":
        case "LockTimeoutError":
          return Ref.update(ioFailures, (all) => [...all, { tool, path: key, error }]).pipe(
            Effect.zipRight(fail(error.message))
          )
        default:
          return fail(error.message)
      }
    }

  const ioFailure = (op: string, at: string) => (error: PlatformError) =>
    new ToolFailure({ message: `${op} ${at} failed: ${error.message}` })

  const readPrivate = (absolute: string) =>
    fs.readFileString(absolute).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeedNone),
      Effect.mapError(ioFailure("read", absolute))
    )

  const readTarget = (target: MemoryTarget): Effect.Effect<Option.Option<string>, ToolFailure | Refused> =>
    target.kind === "private" ?
      readPrivate(target.absolute) :
      guard!.read(teamDir, target.teamKey).pipe(
        Effect.map(Option.some),
        Effect.catchTags({
          MemoryNotFoundError: () => Effect.succeedNone,
          PathTraversalError: (error) =>
            Effect.fail(new Refused({ path: target.relative, reason: error.reason, detail: error.message })),
          MemoryIoError: (error) => fail(error.message)
        })
      )

  /** Validate a whole memory file and write it (private: the write program, index line included). */
  const writeWhole = (
    tool: string,
    key: string,
    target: MemoryTarget,
    content: string,
    before: Option.Option<string>
  ) =>
    Effect.gen(function*() {
      const parsed = parseMemoryFile(content, target.relative)
      if (Either.isLeft(parsed)) return yield* fail(parsed.left.message)
      const { description, name, type } = parsed.right.frontmatter
      const fields = yield* validateWriteInput({ type, name, description }).pipe(
        Effect.mapError((error) => new ToolFailure({ message: error.message }))
      )
      let after: string
      if (target.kind === "team") {
        yield* guard!.write(teamDir, target.teamKey, content).pipe(
          Effect.mapError((error) =>
            error._tag === "PathTraversalError" ?
              new Refused({ path: key, reason: error.reason, detail: error.message }) :
              new ToolFailure({ message: error.message })
          )
        )
        after = content
      } else {
        const written = yield* writeMemory({ memoryDir: memoryRoot, ...fields, body: parsed.right.body, file: key })
          .pipe(Effect.provide(context), Effect.catchAll(fromWriteFailure(tool, key)))
        after = yield* readPrivate(written.path).pipe(Effect.map(Option.getOrElse(() => content)))
      }
      const op = Option.isNone(before) ? "created" : "updated"
      yield* record({ tool, op, file: target.relative, before: Option.getOrUndefined(before), after })
      const indexNote = target.kind === "private" ? " and its line in MEMORY.md" : ""
      return `${op} ${target.relative}${indexNote} (${fields.type}: ${fields.name})`
    })

  // -------------------------------------------------------------------------------------------------------------
  // Memory tools
  // -------------------------------------------------------------------------------------------------------------

  const describeByPath = (memoryDir: string) =>
    Effect.map(scanner.scan(memoryDir), (scan) => new Map(scan.memories.map((m) => [m.path, m])))

  /** Walk under `start` (absolute), never following symlinks nor entering hidden entries. */
  const walk = (root: string, start: string, visit: (relative: string, absolute: string, size: number) => boolean) =>
    Effect.gen(function*() {
      const queue = [start]
      while (queue.length > 0) {
        const directory = queue.shift()!
        const names = yield* fs.readDirectory(directory).pipe(Effect.orElseSucceed(() => [] as Array<string>))
        for (const name of names.sort()) {
          if (name.startsWith(".")) continue
          const absolute = path.join(directory, name)
          const isLink = yield* fs.readLink(absolute).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
          if (isLink) continue
          const info = yield* fs.stat(absolute).pipe(Effect.option)
          if (Option.isNone(info)) continue
          if (info.value.type === "Directory") {
            queue.push(absolute)
          } else if (info.value.type === "File") {
            if (!visit(toPosix(path.relative(root, absolute)), absolute, Number(info.value.size))) return
          }
        }
      }
    })

  const memoryList = defineTool({
    name: "memory_list",
    description: "List the files of the memory directory (or of one sub-directory), with each memory's type and " +
      "description. Hidden entries are not shown.",
    input: Schema.Struct({
      dir: Schema.optional(Schema.String).annotations({
        description: "Sub-directory relative to the memory directory; default: all of it"
      })
    }),
    run: ({ dir }) =>
      sandboxed(
        "memory_list",
        dir ?? "",
        Effect.gen(function*() {
          const target = yield* locateMemory(dir ?? "", "read", true)
          const start = target.kind === "private" ? target.absolute : path.join(teamDir, target.teamKey)
          const described = yield* describeByPath(memoryRoot)
          const lines: Array<string> = []
          let more = 0
          yield* walk(memoryRoot, start, (relative, _absolute, size) => {
            if (guard === undefined && (relative === TEAM_DIR || relative.startsWith(`${TEAM_DIR}/`))) return true
            if (relative.split("/").some((segment) => segment.startsWith("."))) return true
            if (lines.length >= LIST_MAX_ENTRIES) {
              more++
              return true
            }
            const memory = described.get(relative)
            lines.push(
              memory === undefined ?
                `- ${relative} (${size} bytes)` :
                `- [${memory.type}] ${relative} (${new Date(memory.mtime).toISOString()}): ${memory.description}`
            )
            return true
          })
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
      path: Schema.String.annotations({ description: "e.g. feedback_testing.md" }),
      offset: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({ description: "first line, 1-based" }),
      limit: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({ description: "lines to read" })
    }),
    run: ({ limit, offset, path: key }) =>
      sandboxed(
        "memory_read",
        key,
        Effect.gen(function*() {
          const target = yield* locateMemory(key, "read")
          const content = yield* readTarget(target)
          if (Option.isNone(content)) return yield* fail(`no file ${target.relative} in the memory directory`)
          if (looksBinary(content.value)) return yield* fail(`${target.relative} is not a text file`)
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
      path: Schema.String.annotations({ description: "relative .md path, e.g. feedback_testing.md" }),
      content: Schema.String.annotations({ description: "the whole file: frontmatter, blank line, body" })
    }),
    run: ({ content, path: key }) =>
      sandboxed(
        "memory_write",
        key,
        serialized(Effect.gen(function*() {
          const target = yield* locateMemory(key, "write")
          if (target.kind === "private" && target.relative.toLowerCase() === INDEX_FILE.toLowerCase()) {
            return yield* new Refused({ path: key, reason: "index-file", detail: "MEMORY.md is not a memory" })
          }
          const before = yield* readTarget(target)
          return yield* writeWhole("memory_write", target.relative, target, content, before)
        }))
      )
  })

  const editIndex = (key: string, before: string, after: string) =>
    Effect.gen(function*() {
      const over = checkIndexCaps(path.join(memoryRoot, INDEX_FILE), before, after)
      if (over !== undefined) return yield* fail(over.message)
      yield* index.modify(memoryRoot, (current) =>
        current.text === before ?
          Effect.succeed({ text: after, result: undefined }) :
          fail(`${INDEX_FILE} changed while you were editing it: read it again`)).pipe(
          Effect.catchTags({
            LockTimeoutError: fromWriteFailure("memory_edit", key),
            MemoryIoError: fromWriteFailure("memory_edit", key)
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
      old_string: Schema.String.pipe(Schema.minLength(1)),
      new_string: Schema.String,
      replace_all: Schema.optional(Schema.Boolean)
    }),
    run: (input) =>
      sandboxed(
        "memory_edit",
        input.path,
        serialized(Effect.gen(function*() {
          const target = yield* locateMemory(input.path, "write")
          const current = yield* readTarget(target)
          if (Option.isNone(current)) {
            return yield* fail(`no file ${target.relative}: create it with memory_write`)
          }
          const occurrences = current.value.split(input.old_string).length - 1
          if (occurrences === 0) return yield* fail(`old_string does not occur in ${target.relative}: read it again`)
          if (occurrences > 1 && input.replace_all !== true) {
            return yield* fail(
              `old_string occurs ${occurrences} times in ${target.relative}: add context, or set replace_all`
            )
          }
          const next = input.replace_all === true ?
            current.value.split(input.old_string).join(input.new_string) :
            current.value.replace(input.old_string, () => input.new_string)
          if (target.kind === "private" && target.relative.toLowerCase() === INDEX_FILE.toLowerCase()) {
            return yield* editIndex(input.path, current.value, next)
          }
          return yield* writeWhole("memory_edit", target.relative, target, next, current)
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
          const target = yield* locateMemory(key, "write")
          if (target.kind === "private" && target.relative.toLowerCase() === INDEX_FILE.toLowerCase()) {
            return yield* new Refused({ path: key, reason: "index-file", detail: "the index is never deleted" })
          }
          const before = yield* readTarget(target)
          if (target.kind === "team") {
            if (Option.isNone(before)) return yield* fail(`no file ${target.relative}`)
            const absolute = yield* guard!.resolve(teamDir, target.teamKey).pipe(
              Effect.mapError((error) => new Refused({ path: key, reason: error.reason, detail: error.message }))
            )
            yield* fs.remove(absolute).pipe(Effect.mapError(ioFailure("remove", target.relative)))
          } else {
            yield* deleteMemory({ memoryDir: memoryRoot, file: target.relative }).pipe(
              Effect.provide(context),
              Effect.catchAll(fromWriteFailure("memory_delete", key))
            )
          }
          yield* record({
            tool: "memory_delete",
            op: "deleted",
            file: target.relative,
            before: Option.getOrUndefined(before)
          })
          return `deleted ${target.relative}`
        }))
      )
  })

  // -------------------------------------------------------------------------------------------------------------
  // Read-only project tools
  // -------------------------------------------------------------------------------------------------------------

  const projectTools = (projectRoot: string): ReadonlyArray<AgentTool> => {
    const root = path.resolve(projectRoot)
    const locate = (key: string, allowRoot: boolean) => checked(root, key.trim() === "" ? "." : key.trim(), allowRoot)

    const readFile = defineTool({
      name: "read_file",
      description: "Read a text file of the project (read-only), with line numbers. Paths are relative to the " +
        "project root.",
      input: Schema.Struct({
        path: Schema.String,
        offset: Schema.optional(Schema.Int.pipe(Schema.positive())),
        limit: Schema.optional(Schema.Int.pipe(Schema.positive()))
      }),
      run: ({ limit, offset, path: key }) =>
        sandboxed(
          "read_file",
          key,
          Effect.gen(function*() {
            const absolute = yield* locate(key, false)
            const info = yield* fs.stat(absolute).pipe(Effect.mapError(ioFailure("stat", key)))
            if (info.type !== "File") return yield* fail(`${key} is not a file`)
            if (Number(info.size) > GREP_MAX_FILE_BYTES * 8) return yield* fail(`${key} is too large to read`)
            const text = yield* fs.readFileString(absolute).pipe(Effect.mapError(ioFailure("read", key)))
            if (looksBinary(text)) return yield* fail(`${key} is not a text file`)
            const first = Math.max(1, offset ?? 1)
            const numbered = text.split("\n").map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join("\n")
            return boundText(numbered, { offset: first, ...(limit === undefined ? {} : { limit }) })
          })
        )
    })

    const listDir = defineTool({
      name: "list_dir",
      description: "List a directory of the project (read-only): sub-directories end with /.",
      input: Schema.Struct({ path: Schema.optional(Schema.String) }),
      run: ({ path: key }) =>
        sandboxed(
          "list_dir",
          key ?? ".",
          Effect.gen(function*() {
            const absolute = yield* locate(key ?? ".", true)
            const names = yield* fs.readDirectory(absolute).pipe(Effect.mapError(ioFailure("list", key ?? ".")))
            const entries: Array<string> = []
            for (const name of names.sort().slice(0, LIST_MAX_ENTRIES)) {
              const entry = path.join(absolute, name)
              const isLink = yield* fs.readLink(entry).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
              const info = yield* fs.stat(entry).pipe(Effect.option)
              const kind = isLink ? "@" : Option.isSome(info) && info.value.type === "Directory" ? "/" : ""
              entries.push(name + kind)
            }
            const more = names.length > LIST_MAX_ENTRIES ? `\n[… ${names.length - LIST_MAX_ENTRIES} more]` : ""
            return entries.length === 0 ? "(empty)" : entries.join("\n") + more
          })
        )
    })

    const grep = defineTool({
      name: "grep",
      description: "Search the project's text files for a regular expression (read-only). Skips .git, " +
        "node_modules, symlinks, binary and large files. Answers path:line: text.",
      input: Schema.Struct({
        pattern: Schema.String.pipe(Schema.minLength(1)),
        path: Schema.optional(Schema.String).annotations({ description: "directory or file; default: the root" }),
        ignore_case: Schema.optional(Schema.Boolean)
      }),
      run: (input) =>
        sandboxed(
          "grep",
          input.path ?? ".",
          Effect.gen(function*() {
            const regex = yield* Effect.try({
              try: () => new RegExp(input.pattern, input.ignore_case === true ? "i" : ""),
              catch: (error) => new ToolFailure({ message: `invalid pattern: ${String(error)}` })
            })
            const start = yield* locate(input.path ?? ".", true)
            const info = yield* fs.stat(start).pipe(Effect.mapError(ioFailure("stat", input.path ?? ".")))
            const files: Array<string> = []
            if (info.type === "File") {
              files.push(start)
            } else {
              const queue = [start]
              while (queue.length > 0 && files.length < GREP_MAX_FILES) {
                const directory = queue.shift()!
                const names = yield* fs.readDirectory(directory).pipe(Effect.orElseSucceed(() => [] as Array<string>))
                for (const name of names.sort()) {
                  if (GREP_SKIPPED_DIRS.has(name)) continue
                  const entry = path.join(directory, name)
                  const isLink = yield* fs.readLink(entry).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
                  if (isLink) continue
                  const stat = yield* fs.stat(entry).pipe(Effect.option)
                  if (Option.isNone(stat)) continue
                  if (stat.value.type === "Directory") queue.push(entry)
                  else if (stat.value.type === "File" && Number(stat.value.size) <= GREP_MAX_FILE_BYTES) {
                    files.push(entry)
                  }
                  if (files.length >= GREP_MAX_FILES) break
                }
              }
            }
            const matches: Array<string> = []
            let more = 0
            for (const file of files) {
              const text = yield* fs.readFileString(file).pipe(Effect.orElseSucceed(() => ""))
              if (looksBinary(text)) continue
              const lines = text.split("\n")
              for (let i = 0; i < lines.length; i++) {
                // Long lines are matched on their head only: bounded work per line.
                const line = lines[i]!.slice(0, 4000)
                if (!regex.test(line)) continue
                if (matches.length >= GREP_MAX_MATCHES) {
                  more++
                  continue
                }
                const shown = line.length > 300 ? line.slice(0, 300) + "…" : line
                matches.push(`${toPosix(path.relative(root, file))}:${i + 1}: ${shown}`)
              }
              yield* Effect.yieldNow()
            }
            if (matches.length === 0) return "(no matches)"
            return matches.join("\n") + (more > 0 ? `\n[… ${more} more matches: narrow the pattern or path]` : "")
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
