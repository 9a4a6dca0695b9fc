/**
 * MemoryToolBackend: a drop-in backend for the Anthropic API's memory tool (`memory_20250818`) over memdir's
 * memory directory (docs/memory-tool.md). `/memories` is the memory directory and `/memories/team` its `team/`
 * directory (only while team memory is on). Every command goes through `MemoryStore` (its `plain` writes: any file
 * the reference stores, any extension, any text), so memdir's rules hold: containment, the index and hidden files
 * refused, the size cap, the `MEMORY.md` line kept in the same step, and for `team/` the guard, the secret refusal,
 * the team lock and the `team/MEMORY.md` line.
 *
 * The result strings, error texts and files are those of the SDK's reference backend
 * (`BetaLocalFilesystemMemoryTool`) for the same commands; memdir refuses only for safety, each case listed in the
 * docs and tested (MemoryToolBackend.test.ts; the differential test compares random sequences).
 * `view` never shows what memdir keeps for itself: the index files (`MEMORY.md`, `team/MEMORY.md`), and the
 * hidden locks and temp files the reference hides too.
 *
 * The memory directory is created (0700) on the first command, as the reference's `init` creates `/memories`.
 *
 * `handlers(root)` is the SDK's `MemoryToolHandlers` object (for `betaMemoryTool(handlers)` and the tool runner):
 * a failure is thrown as an `Error` with the text above, which the runner sends as `Error: <text>` with
 * `is_error: true`; `answer` gives that same `{ content, is_error }` for runtimes that drive the tool themselves.
 */
import type { MemoryToolHandlers } from "@anthropic-ai/sdk/helpers/beta/memory"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as NodePath from "node:path"
import { requestedScope } from "./Containment.js"
import { type EditMatchError, MemoryIoError, MemoryToolError } from "./Errors.js"
import { memoryVersion, scopeOf, TEAM_DIR } from "./Memory.js"
import { type FileInfo, MemoryFs, type MemoryFsError } from "./MemoryFs.js"
import { INDEX_FILE } from "./MemoryIndex.js"
import {
  type Located,
  type MemoryRoot,
  MemoryStore,
  type StoreReadError,
  type StoreRemoveError,
  type StoreWriteError,
  type StoreWriteOptions
} from "./MemoryStore.js"
import * as Operations from "./Operations.js"

/** The memory tool's root path, as the model names it. */
export const MEMORIES = "/memories"
/** Files with more lines are refused by `view` (the reference's limit). */
export const VIEW_MAX_LINES = 999_999
const LINE_NUMBER_WIDTH = String(VIEW_MAX_LINES).length
/** How deep a directory `view` lists (the reference's depth). */
const LIST_DEPTH = 2
/**
 * The backend's writes store the model's text as given (`MemoryStore.write`'s `verbatim`), and any file the reference
 * stores (`plain`: any extension, no frontmatter needed).
 */
const VERBATIM: StoreWriteOptions = { verbatim: true, plain: true }
/** The store's rules for the backend's removals and moves: any file (`plain`). */
const PLAIN = { plain: true } as const

// ---------------------------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------------------------

const ViewCommand = Schema.Struct({
  command: Schema.Literal("view"),
  path: Schema.String,
  view_range: Schema.optional(Schema.Array(Schema.Number))
})
const CreateCommand = Schema.Struct({
  command: Schema.Literal("create"),
  path: Schema.String,
  file_text: Schema.String
})
const StrReplaceCommand = Schema.Struct({
  command: Schema.Literal("str_replace"),
  path: Schema.String,
  old_str: Schema.String,
  new_str: Schema.String
})
const InsertCommand = Schema.Struct({
  command: Schema.Literal("insert"),
  path: Schema.String,
  insert_line: Schema.Number,
  insert_text: Schema.String
})
const DeleteCommand = Schema.Struct({ command: Schema.Literal("delete"), path: Schema.String })
const RenameCommand = Schema.Struct({
  command: Schema.Literal("rename"),
  old_path: Schema.String,
  new_path: Schema.String
})

/** One memory-tool input, as the model sends it. */
export const MemoryToolCommand = Schema.Union([
  ViewCommand,
  CreateCommand,
  StrReplaceCommand,
  InsertCommand,
  DeleteCommand,
  RenameCommand
])
export type MemoryToolCommand = typeof MemoryToolCommand.Type

const COMMANDS: ReadonlySet<string> = new Set(["view", "create", "str_replace", "insert", "delete", "rename"])

/** What a command can fail with: the reference's errors, and memdir's own refusals (named by their messages). */
export type MemoryToolFailure =
  | MemoryToolError
  | StoreReadError
  | StoreWriteError
  | StoreRemoveError
  | MemoryIoError
  | EditMatchError

/** A tool result as the model receives it (`content` is `Error: …` when `is_error`, as the SDK's runner sends). */
export interface MemoryToolAnswer {
  readonly content: string
  readonly is_error: boolean
}

const decodeCommand = Schema.decodeUnknownResult(MemoryToolCommand, { errors: "first" })
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** The input as a command, or the error result the reference's tool would give (unknown command) or a clear one. */
export const parseCommand = (input: unknown): Result.Result<MemoryToolCommand, MemoryToolError> => {
  const command = typeof input === "object" && input !== null ? (input as { command?: unknown }).command : undefined
  if (typeof command === "string" && !COMMANDS.has(command)) {
    return Result.fail(new MemoryToolError({ reason: "unknown-command", path: command }))
  }
  // named here, not by the union's decoder: it would list every command's whole shape
  if (typeof command !== "string") {
    const what = typeof input !== "object" || input === null || Array.isArray(input) ?
      "the input: must be an object with a command" :
      command === undefined ?
      "command: is missing" :
      "command: must be a string"
    return Result.fail(
      new MemoryToolError({ reason: "invalid-input", path: "", detail: `${what} (one of ${[...COMMANDS].join(", ")})` })
    )
  }
  return Result.mapError(decodeCommand(input), (error) => {
    const issue = formatIssues(error.issue).issues[0]
    const where = issue?.path === undefined || issue.path.length === 0 ?
      "the input" :
      issue.path.map((segment) => typeof segment === "object" ? String(segment.key) : String(segment)).join(".")
    return new MemoryToolError({
      reason: "invalid-input",
      path: "",
      detail: `${where}: ${issue?.message ?? "invalid"}`
    })
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Pure rules (the reference's, to the character)
// ---------------------------------------------------------------------------------------------------------------

/**
 * The memory-directory key a tool path names: `""` for `/memories`, `a/b.md` for `/memories/a/b.md`. `..` is
 * collapsed as the reference does (it may not leave `/memories`); memdir also refuses `/memoriesX`, which the
 * reference reads as `/memories/X`.
 */
export const keyOfToolPath = (toolPath: string): Result.Result<string, MemoryToolError> => {
  if (toolPath !== MEMORIES && !toolPath.startsWith(`${MEMORIES}/`)) {
    return Result.fail(new MemoryToolError({ reason: "not-under-memories", path: toolPath }))
  }
  const relative = toolPath.slice(MEMORIES.length).replace(/^\//, "")
  const resolved = NodePath.posix.resolve(relative === "" ? MEMORIES : NodePath.posix.join(MEMORIES, relative))
  if (resolved === MEMORIES) return Result.succeed("")
  if (!resolved.startsWith(`${MEMORIES}/`)) {
    return Result.fail(new MemoryToolError({ reason: "escapes-memories", path: toolPath }))
  }
  const key = resolved.slice(MEMORIES.length + 1)
  // the scope is the one the path asks for: /memories/team/../x.md is not a private x.md
  if (requestedScope(relative) === "team" && scopeOf(key) !== "team") {
    return Result.fail(new MemoryToolError({ reason: "leaves-team", path: toolPath }))
  }
  // the store trims keys: " notes.md" would silently become "notes.md", so such a name is refused instead
  if (key !== key.trim()) {
    return Result.fail(
      new MemoryToolError({
        reason: "invalid-input",
        path: toolPath,
        detail: `path ${JSON.stringify(toolPath)}: a name may not start or end with white space`
      })
    )
  }
  return Result.succeed(key)
}

const numbered = (lines: ReadonlyArray<string>, first: number): string =>
  lines.map((line, i) => `${String(i + first).padStart(LINE_NUMBER_WIDTH, " ")}\t${line}`).join("\n")

/** `view` of a file: the numbered lines, all or `view_range` (`[start, end]`, `end` -1 for the last line). */
export const renderFile = (
  toolPath: string,
  text: string,
  viewRange: ReadonlyArray<number> | undefined
): Result.Result<string, MemoryToolError> => {
  const lines = text.split("\n")
  if (lines.length > VIEW_MAX_LINES) {
    return Result.fail(
      new MemoryToolError({ reason: "too-many-lines", path: toolPath, numbers: [lines.length, VIEW_MAX_LINES] })
    )
  }
  let shown = lines
  let first = 1
  if (viewRange !== undefined && viewRange.length === 2) {
    const start = Math.max(1, viewRange[0]!) - 1
    const end = viewRange[1] === -1 ? lines.length : viewRange[1]
    shown = lines.slice(start, end)
    first = start + 1
  }
  return Result.succeed(`Here's the content of ${toolPath} with line numbers:\n${numbered(shown, first)}`)
}

/** A size as the reference shows it: `0B`, `512B`, `4K`, `1.5M`. */
export const formatSize = (bytes: number): string => {
  if (bytes === 0) return "0B"
  const units = ["B", "K", "M", "G"]
  const i = Math.floor(Math.log(bytes) / Math.log(1024))
  const size = bytes / Math.pow(1024, i)
  return (size % 1 === 0 ? size.toString() : size.toFixed(1)) + units[i]
}

export interface ListedEntry {
  /** Relative to the viewed directory, `/`-separated. */
  readonly relative: string
  readonly directory: boolean
  readonly size: number
}

/** An entry with its path's segments, split once for the sort. */
interface Sortable {
  readonly entry: ListedEntry
  readonly segments: ReadonlyArray<string>
}

/** Depth first, each directory's entries by name (the reference's `readdir().sort()`). */
const byTreeOrder = (a: Sortable, b: Sortable): number => {
  const x = a.segments
  const y = b.segments
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1
  }
  return x.length - y.length
}

const inTreeOrder = (entries: ReadonlyArray<ListedEntry>): ReadonlyArray<ListedEntry> =>
  entries.map((entry): Sortable => ({ entry, segments: entry.relative.split("/") })).sort(byTreeOrder).map((s) =>
    s.entry
  )

/** `view` of a directory: the header, the directory's own line, then its entries up to two levels deep. */
export const renderListing = (toolPath: string, directorySize: number, entries: ReadonlyArray<ListedEntry>): string => {
  const header = `Here're the files and directories up to 2 levels deep in ${toolPath}, excluding hidden items ` +
    `and node_modules:`
  const lines = [
    `${formatSize(directorySize)}\t${toolPath}`,
    ...inTreeOrder(entries).map((entry) =>
      `${formatSize(entry.size)}\t${toolPath}/${entry.relative}${entry.directory ? "/" : ""}`
    )
  ]
  return `${header}\n${lines.join("\n")}`
}

/** The edit of `str_replace` (the first occurrence, when exactly one line holds `old_str`) and its snippet. */
export const replaceUnique = (
  toolPath: string,
  text: string,
  oldStr: string,
  newStr: string
): Result.Result<{ readonly text: string; readonly result: string }, MemoryToolError> => {
  const matching: Array<number> = []
  text.split("\n").forEach((line, index) => {
    if (line.includes(oldStr)) matching.push(index + 1)
  })
  if (matching.length === 0) {
    return Result.fail(new MemoryToolError({ reason: "no-match", path: toolPath, detail: oldStr }))
  }
  if (matching.length > 1) {
    return Result.fail(
      new MemoryToolError({ reason: "multiple-matches", path: toolPath, detail: oldStr, numbers: matching })
    )
  }
  const edited = text.replace(oldStr, () => newStr)
  const lines = edited.split("\n")
  const changed = matching[0]! - 1
  const start = Math.max(0, changed - 2)
  const end = Math.min(lines.length, changed + 3)
  return Result.succeed({
    text: edited,
    result: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
      numbered(lines.slice(start, end), start + 1)
  })
}

/** The edit of `insert`: `insert_text` (one trailing newline dropped) becomes line `insert_line + 1`. */
export const insertAt = (
  toolPath: string,
  text: string,
  insertLine: number,
  insertText: string
): Result.Result<{ readonly text: string; readonly result: string }, MemoryToolError> => {
  const lines = text.split("\n")
  if (insertLine < 0 || insertLine > lines.length) {
    return Result.fail(
      new MemoryToolError({ reason: "invalid-insert-line", path: toolPath, numbers: [insertLine, lines.length] })
    )
  }
  lines.splice(insertLine, 0, insertText.replace(/\n$/, ""))
  return Result.succeed({ text: lines.join("\n"), result: `The file ${toolPath} has been edited.` })
}

/** A name `view` lists: not hidden, not node_modules. */
const isListedName = (name: string): boolean => !name.startsWith(".") && name !== "node_modules"

/** memdir's own files that `view` never lists: the index of the memory directory and of `team/`. */
const isIndexKey = (key: string): boolean => key === INDEX_FILE || key === `${TEAM_DIR}/${INDEX_FILE}`

// ---------------------------------------------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------------------------------------------

export class MemoryToolBackend extends Context.Service<MemoryToolBackend, {
  /** Runs one tool input (decoded here) and gives the result text, or the error the model should read. */
  readonly run: (root: MemoryRoot, input: unknown) => Effect.Effect<string, MemoryToolFailure>
  /** `run` as the tool result the model receives (`Error: …` and `is_error: true` on failure). */
  readonly answer: (root: MemoryRoot, input: unknown) => Effect.Effect<MemoryToolAnswer>
  /** The SDK's handler object for `betaMemoryTool(handlers)`: each command throws an `Error` on failure. */
  readonly handlers: (root: MemoryRoot) => MemoryToolHandlers
}>()("@memdir/core/MemoryToolBackend") {}

export const make = Effect.gen(function*() {
  const store = yield* MemoryStore
  const fs = yield* MemoryFs

  /** A failure of `lstat` other than "nothing there", as memdir's I/O error. */
  const ioError = (error: MemoryFsError) => new MemoryIoError({ op: error.op, path: error.path, detail: error.detail })

  /** The store's check of a key (containment, team switch), a link out named as the reference names it. */
  const locate = (root: MemoryRoot, key: string, toolPath: string) =>
    store.locate(root, key).pipe(
      Effect.catchIf(
        (error) => error._tag === "PathTraversalError" && error.reason === "symlink-escape",
        () => Effect.fail(new MemoryToolError({ reason: "symlink-escape", path: toolPath }))
      )
    )

  /** Where the located key really is on disk (the real path for private keys, the guarded one for team keys). */
  const diskPath = (located: Located): string =>
    located.scope === "private" ? located.contained.real : located.contained.path

  /** What is at a located key; `None` when nothing is. */
  const infoOf = (located: Located) =>
    fs.lstat(diskPath(located)).pipe(
      Effect.map(Option.some),
      Effect.catchIf((error) => error.reason === "NotFound", () => Effect.succeed(Option.none<FileInfo>())),
      Effect.mapError(ioError)
    )

  /** A tool path checked down to its key, its location and what is there. */
  const resolve = (root: MemoryRoot, toolPath: string) =>
    Effect.gen(function*() {
      const key = yield* Effect.fromResult(keyOfToolPath(toolPath))
      const located = yield* locate(root, key, toolPath)
      const info = yield* infoOf(located)
      return { key, located, info }
    })

  /** A path that must be an existing regular file (str_replace, insert). */
  const existingFile = (root: MemoryRoot, toolPath: string, command: string) =>
    Effect.gen(function*() {
      const target = yield* resolve(root, toolPath)
      if (Option.isNone(target.info)) {
        return yield* new MemoryToolError({ reason: "not-found", path: toolPath, command })
      }
      if (target.info.value.kind !== "File") {
        return yield* new MemoryToolError({ reason: "not-a-file", path: toolPath, command })
      }
      return target.key
    })

  const listDirectory = (root: MemoryRoot, toolPath: string, located: Located, size: number) =>
    Effect.gen(function*() {
      const base = located.contained.key
      // Hidden entries and node_modules are never entered; below the viewed directory only a name can be one.
      const walked = yield* fs.walk(diskPath(located), {
        enter: (_relative, name) => isListedName(name),
        maxDepth: LIST_DEPTH
      }).pipe(Effect.mapError(ioError))
      const entries: Array<ListedEntry> = []
      for (const entry of walked) {
        const relative = entry.relative
        const slash = relative.indexOf("/")
        if (!isListedName(relative.slice(relative.lastIndexOf("/") + 1))) continue
        if (entry.info.kind !== "File" && entry.info.kind !== "Directory") continue
        const key = base === "" ? relative : `${base}/${relative}`
        if (isIndexKey(key)) continue
        if (
          base === "" && root.teamEnabled !== true && (slash === -1 ? relative : relative.slice(0, slash)) === TEAM_DIR
        ) {
          continue
        }
        entries.push({ relative, directory: entry.info.kind === "Directory", size: entry.info.size })
      }
      return renderListing(toolPath, size, entries)
    })

  /**
   * The files under a directory to delete or move whole, by key; refused when it holds what memdir does not move
   * file by file: its own files (an index, a hidden entry: locks, state) or anything but files and directories.
   */
  const filesOfDirectory = (toolPath: string, command: string, key: string, located: Located) =>
    Effect.gen(function*() {
      const refuse = (detail: string) =>
        new MemoryToolError({ reason: "directory-refused", path: toolPath, command, detail })
      if (key === TEAM_DIR) return yield* refuse("it is team memory's directory; change the files in it instead")
      const walked = yield* fs.walk(diskPath(located)).pipe(Effect.mapError(ioError))
      const files: Array<string> = []
      for (const entry of walked) {
        const inner = `${key}/${entry.relative}`
        if (entry.relative.split("/").some((name) => name.startsWith(".")) || isIndexKey(inner)) {
          return yield* refuse(`it holds memdir's own ${inner} (a hidden entry or an index)`)
        }
        if (entry.info.kind === "File") files.push(inner)
        else if (entry.info.kind !== "Directory") {
          return yield* refuse(`${inner} is not a regular file or a directory (a link?)`)
        }
      }
      return files
    })

  const view = (root: MemoryRoot, command: typeof ViewCommand.Type) =>
    Effect.gen(function*() {
      const target = yield* resolve(root, command.path)
      if (Option.isNone(target.info)) {
        return yield* new MemoryToolError({ reason: "not-found", path: command.path, command: "view" })
      }
      const kind = target.info.value.kind
      if (kind === "Directory") return yield* listDirectory(root, command.path, target.located, target.info.value.size)
      if (kind !== "File") {
        return yield* new MemoryToolError({ reason: "unsupported-file-type", path: command.path, command: "view" })
      }
      const stored = yield* store.read(root, target.key)
      return yield* Effect.fromResult(renderFile(command.path, stored.text, command.view_range))
    })

  const create = (root: MemoryRoot, command: typeof CreateCommand.Type) =>
    Effect.gen(function*() {
      const target = yield* resolve(root, command.path)
      const exists = new MemoryToolError({ reason: "already-exists", path: command.path, command: "create" })
      if (Option.isSome(target.info)) return yield* exists
      // Under the store's lock: a file that appeared since the check above is kept as it is, and reported.
      let raced = false
      // verbatim: the file is the model's, line for line (no `modified:` stamp shifting its line numbers)
      yield* store.write(root, target.key, (current) => {
        if (current === undefined) return command.file_text
        raced = true
        return current
      }, VERBATIM)
      if (raced) return yield* exists
      return `File created successfully at: ${command.path}`
    })

  /** `insert`: read, edit, write back under the store's lock (the edit re-applied to what is there by then). */
  const edit = (
    root: MemoryRoot,
    toolPath: string,
    command: string,
    apply: (text: string) => Result.Result<{ readonly text: string; readonly result: string }, MemoryToolError>
  ) =>
    Effect.gen(function*() {
      const key = yield* existingFile(root, toolPath, command)
      const planned = yield* Effect.fromResult(apply((yield* store.read(root, key)).text))
      let outcome: Result.Result<{ readonly text: string; readonly result: string }, MemoryToolError> = Result.succeed(
        planned
      )
      yield* store.write(root, key, (current) => {
        // deleted since the read: the edit is written (the reference's atomic write does the same)
        if (current === undefined) return planned.text
        outcome = apply(current)
        return Result.isSuccess(outcome) ? outcome.success.text : current
      }, VERBATIM)
      return yield* Effect.fromResult(Result.map(outcome, (done) => done.result))
    })

  /**
   * `str_replace` is the one edit (`Operations.edit`: written only while the memory is still the text it was
   * computed from, else refused), with the reference's wire behaviour kept here: its rule (exactly one line holds
   * `old_str`), its messages and its snippet, and the model's text stored line for line (no `modified:` stamp).
   * Where the rules differ, the reference's wins: two occurrences on the one line replace the first (the edit then
   * replaces the whole text read, which occurs once, by the reference's result), and an `old_str` equal to `new_str`
   * is an edit that changes nothing (answered, nothing written) where `Operations.edit` would refuse it.
   */
  const strReplace = (root: MemoryRoot, command: typeof StrReplaceCommand.Type) =>
    Effect.gen(function*() {
      const key = yield* existingFile(root, command.path, "str_replace")
      const current = yield* store.read(root, key)
      const planned = yield* Effect.fromResult(
        replaceUnique(command.path, current.text, command.old_str, command.new_str)
      )
      if (planned.text === current.text) return planned.result
      const once = Operations.occurrences(current.text, command.old_str) === 1
      yield* Operations.edit(root, {
        path: key,
        old: once ? command.old_str : current.text,
        new: once ? command.new_str : planned.text,
        ifVersion: memoryVersion(current.text)
      }, VERBATIM).pipe(Effect.provideService(MemoryStore, store))
      return planned.result
    })

  const remove = (root: MemoryRoot, command: typeof DeleteCommand.Type) =>
    Effect.gen(function*() {
      const target = yield* resolve(root, command.path)
      if (target.key === "") return yield* new MemoryToolError({ reason: "delete-root", path: command.path })
      if (Option.isNone(target.info)) {
        return yield* new MemoryToolError({ reason: "not-found", path: command.path, command: "delete" })
      }
      if (target.info.value.kind === "Directory") {
        const files = yield* filesOfDirectory(command.path, "delete", target.key, target.located)
        // each file with its index line, then the directories left (the reference's `rm -r`)
        for (const file of files) {
          yield* Operations.remove(root, { path: file }, PLAIN).pipe(Effect.provideService(MemoryStore, store))
        }
        yield* removeEmptiedTree(command.path, "delete", target.located)
        return `Successfully deleted ${command.path}`
      }
      yield* Operations.remove(root, { path: target.key }, PLAIN).pipe(Effect.provideService(MemoryStore, store))
      return `Successfully deleted ${command.path}`
    })

  /**
   * The directories a whole-directory delete or rename leaves once its files are gone: removed only while nothing
   * but directories is in them, so a file written there meanwhile is never deleted with them (it stays, refused).
   */
  const removeEmptiedTree = (toolPath: string, command: string, located: Located) =>
    Effect.gen(function*() {
      const left = yield* fs.walk(diskPath(located)).pipe(Effect.mapError(ioError))
      const file = left.find((entry) => entry.info.kind !== "Directory")
      if (file !== undefined) {
        return yield* new MemoryToolError({
          reason: "directory-refused",
          path: toolPath,
          command,
          detail: `${file.relative} appeared in it meanwhile and was left in place`
        })
      }
      yield* fs.remove(diskPath(located), { recursive: true }).pipe(Effect.mapError(ioError))
    })

  const rename = (root: MemoryRoot, command: typeof RenameCommand.Type) =>
    Effect.gen(function*() {
      const source = yield* resolve(root, command.old_path)
      const destination = yield* resolve(root, command.new_path)
      if (source.key === "") return yield* new MemoryToolError({ reason: "rename-root", path: command.old_path })
      if (Option.isSome(destination.info)) {
        return yield* new MemoryToolError({ reason: "destination-exists", path: command.new_path })
      }
      if (Option.isNone(source.info)) {
        // the reference makes the destination's directory before it finds the source missing: the same files
        if (destination.key.includes("/")) {
          yield* fs.makeDirectory(NodePath.dirname(diskPath(destination.located))).pipe(Effect.mapError(ioError))
        }
        return yield* new MemoryToolError({ reason: "not-found", path: command.old_path, command: "rename" })
      }
      if (source.info.value.kind === "Directory") {
        if (destination.key.startsWith(`${source.key}/`)) {
          // the reference makes the destination's directory before rename(2) refuses: the same files
          yield* fs.makeDirectory(NodePath.dirname(diskPath(destination.located))).pipe(Effect.mapError(ioError))
          return yield* new MemoryToolError({
            reason: "directory-refused",
            path: command.old_path,
            command: "rename",
            detail: `${command.new_path} is inside it`
          })
        }
        const files = yield* filesOfDirectory(command.old_path, "rename", source.key, source.located)
        // the directories first (an empty one moves too), then each file with its index line, then the old tree
        const walked = yield* fs.walk(diskPath(source.located)).pipe(Effect.mapError(ioError))
        yield* fs.makeDirectory(diskPath(destination.located)).pipe(Effect.mapError(ioError))
        for (const entry of walked) {
          if (entry.info.kind !== "Directory") continue
          const located = yield* locate(root, `${destination.key}/${entry.relative}`, command.new_path)
          yield* fs.makeDirectory(diskPath(located)).pipe(Effect.mapError(ioError))
        }
        for (const file of files) {
          const to = `${destination.key}/${file.slice(source.key.length + 1)}`
          yield* store.rename(root, file, to, PLAIN)
        }
        yield* removeEmptiedTree(command.old_path, "rename", source.located)
        return `Successfully renamed ${command.old_path} to ${command.new_path}`
      }
      yield* Operations.rename(root, { path: source.key, newPath: destination.key }, PLAIN).pipe(
        Effect.provideService(MemoryStore, store),
        // created since the check above: the reference's words for it
        Effect.catchTag("PathExistsError", () =>
          Effect.fail(new MemoryToolError({ reason: "destination-exists", path: command.new_path })))
      )
      return `Successfully renamed ${command.old_path} to ${command.new_path}`
    })

  const run = Effect.fn("MemoryToolBackend.run")(function*(root: MemoryRoot, input: unknown) {
    const command = yield* Effect.fromResult(parseCommand(input))
    // `/memories` exists from the first command on, as after the reference's `init`
    yield* fs.makeDirectory(root.memoryDir).pipe(Effect.mapError(ioError))
    switch (command.command) {
      case "view":
        return yield* view(root, command)
      case "create":
        return yield* create(root, command)
      case "str_replace":
        return yield* strReplace(root, command)
      case "insert":
        return yield* edit(
          root,
          command.path,
          "insert",
          (text) => insertAt(command.path, text, command.insert_line, command.insert_text)
        )
      case "delete":
        return yield* remove(root, command)
      case "rename":
        return yield* rename(root, command)
    }
  })

  const answer = (root: MemoryRoot, input: unknown): Effect.Effect<MemoryToolAnswer> =>
    run(root, input).pipe(
      Effect.match({
        onFailure: (error) => ({ content: `Error: ${error.message}`, is_error: true }),
        onSuccess: (content) => ({ content, is_error: false })
      })
    )

  const handlers = (root: MemoryRoot): MemoryToolHandlers => {
    const call = async (input: unknown): Promise<string> => {
      const exit = await Effect.runPromiseExit(run(root, input))
      if (Exit.isSuccess(exit)) return exit.value
      const failure = Cause.findErrorOption(exit.cause)
      // the runner turns a thrown Error into `Error: <message>` with is_error (what the reference's throws give)
      throw Option.isSome(failure) ? new Error(failure.value.message) : Cause.squash(exit.cause)
    }
    return {
      view: call,
      create: call,
      str_replace: call,
      insert: call,
      delete: call,
      rename: call
    }
  }

  return MemoryToolBackend.of({ run, answer, handlers })
})

/** The backend over the store and the file system it lists directories with. */
export const layer: Layer.Layer<MemoryToolBackend, never, MemoryStore | MemoryFs> = Layer.effect(
  MemoryToolBackend,
  make
)

/** The handlers for `betaMemoryTool` over `root`, from the backend in context. */
export const handlers = (root: MemoryRoot): Effect.Effect<MemoryToolHandlers, never, MemoryToolBackend> =>
  Effect.map(MemoryToolBackend, (backend) => backend.handlers(root))
