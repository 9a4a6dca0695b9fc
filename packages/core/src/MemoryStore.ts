/**
 * MemoryStore: the only door to memory files. Every read, write, delete, rename and listing of a memory, private
 * or team, passes through it, so the rules hold on every path (the CLI, the write program, the agents' memory
 * tools, team memory):
 *
 * - keys are relative to the memory directory and pass `Containment` (no NUL, backslash, control or invisible
 *   character, look-alike or encoded traversal; inside the directory, also through links);
 * - `team/…` keys exist only while team memory is on and go through `TeamGuard`; a team write refuses a likely
 *   secret (`SecretDetectedError`), runs under the team lock and keeps its `team/MEMORY.md` line;
 * - writes name a `.md` memory: never `MEMORY.md` (the index is maintained here), never a hidden entry
 *   (memdir's own state: locks, cursors, `.dream/`, `.team.git/`), never `logs/` (daily logs are append-only);
 * - a memory holds at most `MEMORY_MAX_BYTES`; its frontmatter must be valid, and it is written exactly as given
 *   (every frontmatter key kept), atomically, 0600 in 0700 directories, with its index line in the same step: all or
 *   nothing (when the index cannot be written, e.g. a full disk, the file is taken back, or the error names the fix);
 * - reads open without following a link and without blocking, insist on a regular file and are size-bounded.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as NodePath from "node:path"
import {
  type Contained,
  type ContainedReal,
  Containment,
  layer as containmentLayer,
  lexicalScoped
} from "./Containment.js"
import {
  fromMemoryFsError,
  type IndexOverCapError,
  type InvalidFrontmatterError,
  InvalidMemoryInputError,
  type LockTimeoutError,
  MemoryIoError,
  MemoryNotFoundError,
  PathTraversalError,
  SecretDetectedError,
  TeamMemoryDisabledError,
  VersionConflictError
} from "./Errors.js"
import { parseMemoryFile } from "./Frontmatter.js"
import { type LockOptions, withLock } from "./internal/fs/lock.js"
import { LOGS_DIR_NAME } from "./internal/scan/paths.js"
import {
  Frontmatter,
  MEMORY_MAX_BYTES,
  type MemoryScope,
  memoryVersion,
  scopeOf,
  TEAM_DIR,
  writeLimitsError,
  type WrittenMemory
} from "./Memory.js"
import { layer as MemoryFsLayer, MemoryFs, MemoryFsError } from "./MemoryFs.js"
import {
  checkIndexCaps,
  INDEX_FILE,
  type IndexUpdate,
  MemoryIndex,
  removeFromIndexText,
  undoAfterIndexFailure,
  upsertIndexText
} from "./MemoryIndex.js"
import { stampModified } from "./MemoryLayout.js"
import { findSecret } from "./SecretScan.js"
import { layer as teamGuardLayer, TeamGuard } from "./TeamGuard.js"

/** Largest memory memdir writes (private or team): `Memory.MEMORY_MAX_BYTES`, the one limit. */
export { MEMORY_MAX_BYTES }
/** Largest private memory file memdir reads (older, hand-made files may exceed the write cap). */
export const MEMORY_READ_MAX_BYTES = 1024 * 1024
/** The lock serialising every change to team/ (writes, its index, sync); outside team/ so it is never committed. */
export const TEAM_LOCK = ".team.lock"
/**
 * A sync holds the lock across network round trips, so it is stale only after 10 minutes (a crashed holder is
 * still taken over at once: its pid is dead). Writers wait up to a minute.
 */
export const TEAM_LOCK_OPTIONS: LockOptions = { timeout: Duration.minutes(1), staleAfter: Duration.minutes(10) }

/** A memory directory and whether team memory is on for it (a resolved location carries both). */
export interface MemoryRoot {
  readonly memoryDir: string
  /** Default false: `team/…` keys are refused. */
  readonly teamEnabled?: boolean | undefined
}

export interface StoredMemory {
  /** Relative to the memory directory, `/`-separated (`team/…` for team memories). */
  readonly key: string
  readonly scope: MemoryScope
  /** Absolute. */
  readonly path: string
  readonly text: string
  readonly mtimeMs: number
}

export interface StoreWriteResult {
  readonly key: string
  readonly scope: MemoryScope
  readonly path: string
  /** The memory file is new (false: it replaced an existing one). */
  readonly created: boolean
  /** A new index line was added (false: the existing line for this file was replaced). */
  readonly indexCreated: boolean
  /** The text replaced, when there was one. */
  readonly before: string | undefined
  readonly after: string
}

export interface StoreRemoveResult {
  readonly key: string
  readonly scope: MemoryScope
  readonly path: string
  readonly fileRemoved: boolean
  readonly indexLinesRemoved: number
  readonly before: string | undefined
}

/** A file `listKeys` names: its key, scope and where it is, before anything is read or stat-ed. */
export interface StoreKey {
  readonly key: string
  readonly scope: MemoryScope
  readonly path: string
}

export interface StoreEntry extends StoreKey {
  readonly size: number
  readonly mtimeMs: number
}

/** The new text of a memory, given the current one (`undefined`: no file yet). Runs under the lock. */
/** How a write stores its text. */
export interface StoreWriteOptions {
  /**
   * Store the text exactly as given: no `modified:` stamp (the memory-tool backend, whose model wrote the file line
   * for line and addresses it by line numbers). Its age is then its mtime (docs/file-format.md#age-and-staleness).
   */
  readonly verbatim?: boolean | undefined
  /**
   * The version (`memoryVersion`) of the text this write was based on: checked under the write's lock against the
   * memory's current text, and the write fails with `VersionConflictError` (nothing written) when it differs or the
   * memory is gone. Absent: the write replaces whatever is there.
   */
  readonly ifVersion?: string | undefined
  /**
   * A plain file, as the memory-tool backend stores what the model sends: any name the rules allow (not only `.md`),
   * any text (no frontmatter needed). Its index line is from its frontmatter when that is valid, else from its file
   * name and first line. Also taken by `remove` and `rename`, whose keys may then be any file.
   */
  readonly plain?: boolean | undefined
}

export type WriteContent = string | ((existing: string | undefined) => string)

export type StoreReadError = PathTraversalError | MemoryNotFoundError | MemoryIoError | TeamMemoryDisabledError

export type StoreWriteError =
  | PathTraversalError
  | InvalidMemoryInputError
  | InvalidFrontmatterError
  | TeamMemoryDisabledError
  | SecretDetectedError
  | IndexOverCapError
  | LockTimeoutError
  | MemoryIoError
  | VersionConflictError

export type StoreRemoveError =
  | PathTraversalError
  | InvalidMemoryInputError
  | TeamMemoryDisabledError
  | MemoryNotFoundError
  | LockTimeoutError
  | MemoryIoError

export class MemoryStore extends Context.Service<MemoryStore, {
  /** A memory file (or MEMORY.md, a daily log: anything readable inside the directory). */
  readonly read: (root: MemoryRoot, key: string) => Effect.Effect<StoredMemory, StoreReadError>
  /**
   * At most the first `maxBytes` of a memory (`truncated` when there is more): recall reads the bodies it
   * selected this way. A team memory is read whole through the guard (it is at most 250,000 bytes), then cut.
   */
  readonly readHead: (
    root: MemoryRoot,
    key: string,
    maxBytes: number
  ) => Effect.Effect<StoredMemory & { readonly truncated: boolean }, StoreReadError>
  /** Creates or replaces a memory and its index line, under the rules above; stamps `modified:` unless verbatim. */
  readonly write: (
    root: MemoryRoot,
    key: string,
    content: WriteContent,
    options?: StoreWriteOptions
  ) => Effect.Effect<StoreWriteResult, StoreWriteError>
  /** Removes a memory and its index line(s); `MemoryNotFoundError` when neither exists (`plain`: any file). */
  readonly remove: (
    root: MemoryRoot,
    key: string,
    options?: Pick<StoreWriteOptions, "plain">
  ) => Effect.Effect<StoreRemoveResult, StoreRemoveError>
  /** Moves a memory (and its index line) to another key: a write of the new key, then a removal of the old. */
  readonly rename: (
    root: MemoryRoot,
    from: string,
    to: string,
    options?: Pick<StoreWriteOptions, "plain">
  ) => Effect.Effect<StoreWriteResult, StoreWriteError | StoreRemoveError>
  /**
   * The regular files under `dir` (default: the whole directory), never following links, hidden entries left
   * out, `team/` only while team memory is on. Sorted by key.
   */
  readonly list: (
    root: MemoryRoot,
    dir?: string
  ) => Effect.Effect<ReadonlyArray<StoreEntry>, PathTraversalError | TeamMemoryDisabledError | MemoryIoError>
  /**
   * The files `list` answers, named only: their kinds come from the directory entries, so no file is stat-ed or
   * opened (a listing that shows a page of a large directory opens only that page: `memory_list`).
   */
  readonly listKeys: (
    root: MemoryRoot,
    dir?: string
  ) => Effect.Effect<ReadonlyArray<StoreKey>, PathTraversalError | TeamMemoryDisabledError | MemoryIoError>
  /** The checked location of a key (containment, team switch), without touching the file. */
  readonly locate: (
    root: MemoryRoot,
    key: string
  ) => Effect.Effect<Located, PathTraversalError | TeamMemoryDisabledError>
}>()("@memdir/core/MemoryStore") {}

/** Where a key points once checked. */
export type Located =
  | { readonly scope: "private"; readonly contained: ContainedReal }
  | { readonly scope: "team"; readonly contained: Contained; readonly teamDir: string; readonly teamKey: string }

/** How a key is checked (`writeRefusal`). */
export interface KeyRules {
  /** Removing (or renaming away from) the key: the name rule (`edge-space`) does not apply. */
  readonly removing?: boolean | undefined
  /** A plain file (`StoreWriteOptions.plain`): any extension, not only `.md`. */
  readonly plain?: boolean | undefined
}

/**
 * Why a key may not be written (or, with `removing`, removed), or `undefined`; the rule names match
 * `InvalidMemoryInputError.rule`. The name rule (`edge-space`) only stops a name from being written: a file already
 * so named (by hand, by another tool) can still be removed, or renamed to another name. Any other character its
 * index line can link (`Memory.indexLink` encodes `<`, `>`, `#`, `?` and `%`).
 */
export const writeRefusal = (
  key: string,
  rules: KeyRules = {}
): { readonly rule: string; readonly reason: string } | undefined => {
  const segments = key.split("/")
  if (segments.some((segment) => segment.startsWith("."))) {
    return { rule: "hidden", reason: "hidden entries hold memdir's own state (locks, cursors, .dream/, .team.git/)" }
  }
  if (segments[0] === LOGS_DIR_NAME) return { rule: "logs-append-only", reason: "daily logs are never rewritten" }
  const inScope = segments[0] === TEAM_DIR ? segments.slice(1).join("/") : key
  if (inScope.toLowerCase() === INDEX_FILE.toLowerCase()) {
    return { rule: "index-file", reason: `${INDEX_FILE} is the index, maintained by memdir: write the memory file` }
  }
  if (rules.plain !== true && !key.toLowerCase().endsWith(".md")) {
    return { rule: "not-markdown", reason: "a memory file must end in .md" }
  }
  if (rules.removing === true) return undefined
  // the store trims the keys it is given, so " a.md" would name "a.md": such a name cannot be asked for
  if (segments.some((segment) => segment.trim() !== segment)) {
    return {
      rule: "edge-space",
      reason: "a name that begins or ends with a space is trimmed by memdir (it would name another file): trim it"
    }
  }
  return undefined
}

/** Files `lstat`-ed per synchronous batch of `list`; between batches the fiber yields. */
const STAT_BATCH = 512

/** A key with a hidden segment (memdir's own state): never listed. */
const isHiddenKey = (key: string): boolean => key.split("/").some((segment) => segment.startsWith("."))

/**
 * `team` or `logs` in another case as the first segment (`Team/`, `LOGS/`, `logſ/`): on a case-insensitive file
 * system (macOS's default APFS, Windows) it is the same directory, and would skip that directory's rules (the team
 * guard, the team switch, append-only logs). Refused on every system, so the rule does not depend on the disk.
 */
export const caseAliasOf = (key: string): string | undefined => {
  const first = key.split("/")[0] ?? ""
  const folded = first.normalize("NFC").toUpperCase().toLowerCase()
  return [TEAM_DIR, LOGS_DIR_NAME].find((reserved) => folded === reserved && first !== reserved)
}

const refuseCaseAlias = (key: string): Effect.Effect<void, PathTraversalError> => {
  const reserved = caseAliasOf(key)
  return reserved === undefined ? Effect.void : Effect.fail(
    new PathTraversalError({
      key,
      reason: "case-alias",
      detail: `${JSON.stringify(key.split("/")[0])} is ${reserved}/ on a case-insensitive file system: ` +
        `name it ${reserved}/…`
    })
  )
}

const refuseKey = (key: string, rules: KeyRules = {}): Effect.Effect<void, InvalidMemoryInputError> => {
  const refusal = writeRefusal(key, rules)
  return refusal === undefined ?
    Effect.void :
    Effect.fail(new InvalidMemoryInputError({ field: "file", value: key, reason: refusal.reason, rule: refusal.rule }))
}

const decodeFrontmatter = Schema.decodeUnknownEffect(Frontmatter)

/** The index line's title and hook of a plain file without valid frontmatter: its file name and first line. */
const plainFields = (key: string, text: string): { readonly name: string; readonly description: string } => {
  const printable = (line: string) => line.replace(/[\p{Cc}\p{Cf}]/gu, " ").trim()
  const first = text.split("\n").map(printable).find((line) => line !== "" && !/^-{3,}$/.test(line))
  return { name: key.slice(key.lastIndexOf("/") + 1), description: first ?? "" }
}

/**
 * The index fields of a file to write: its frontmatter's, validated (a plain file without valid frontmatter: its
 * name and first line).
 */
const memoryFields = (key: string, text: string, plain: boolean) =>
  plain ?
    Effect.orElseSucceed(strictFields(key, text), () => plainFields(key, text)) :
    strictFields(key, text)

/** The three fields of a memory file to write, validated (its index line is rendered from them). */
const strictFields = (key: string, text: string) =>
  Effect.gen(function*() {
    const parsed = yield* Effect.fromResult(parseMemoryFile(text, key))
    const { description, name, type } = parsed.frontmatter
    return yield* decodeFrontmatter({ name, description, type }).pipe(
      Effect.mapError((error) =>
        new InvalidMemoryInputError({
          field: "frontmatter",
          value: key,
          reason: type === "untyped" || !["user", "feedback", "project", "reference"].includes(String(type)) ?
            "type must be one of user, feedback, project, reference" :
            SchemaIssue.makeFormatterStandardSchemaV1()(error.issue).issues[0]?.message ?? "invalid frontmatter"
        })
      )
    )
  })

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8")
const utf8Length = (text: string): number => utf8.encode(text).length

/**
 * A memory holds at most `MEMORY_MAX_BYTES`. A file that is already over it (hand-written, or from before the cap)
 * may still be rewritten as long as the rewrite does not grow it, so it can be cleaned up or split.
 */
const checkSize = (key: string, text: string, before: string | undefined) => {
  const size = utf8Length(text)
  return size > MEMORY_MAX_BYTES && (before === undefined || size > utf8Length(before)) ?
    Effect.fail(
      new InvalidMemoryInputError({
        field: "content",
        value: key,
        reason: `${size} bytes is over the limit of ${MEMORY_MAX_BYTES} per memory: keep one topic per file`,
        rule: "too-large"
      })
    ) :
    Effect.void
}

const refuseSecret = (key: string, text: string): Effect.Effect<void, SecretDetectedError> => {
  const found = findSecret(text)
  return found === undefined ? Effect.void : Effect.fail(
    new SecretDetectedError({
      path: key,
      pattern: `${found.description} (${found.pattern})`,
      line: found.line,
      action: "write"
    })
  )
}

/** The `modified:` timestamp a write stamps (ISO), or none (a move keeps the memory's own). */
type Modified = string | undefined

/** The text a write stores: stamped, unless the stamp alone would grow a file that is over the cap. */
const textToWrite = (content: WriteContent, before: string | undefined, modified: Modified): string => {
  const text = typeof content === "string" ? content : content(before)
  if (modified === undefined) return text
  const stamped = stampModified(text, modified)
  const size = utf8Length(stamped)
  return size <= MEMORY_MAX_BYTES || (before !== undefined && size <= utf8Length(before)) ? stamped : text
}

/** `ifVersion` (when given) still names the memory's current text `before`; run under the write's lock. */
const checkVersion = (key: string, ifVersion: string | undefined, before: string | undefined) => {
  if (ifVersion === undefined) return Effect.void
  const current = before === undefined ? null : memoryVersion(before)
  return current === ifVersion ?
    Effect.void :
    Effect.fail(new VersionConflictError({ path: key, expected: ifVersion, current, content: before ?? null }))
}

/** A memory's name and body as `writeLimitsError` weighs them, when its text parses. */
const writtenMemory = (text: string, key: string): WrittenMemory | undefined =>
  Result.match(parseMemoryFile(text, key), {
    onFailure: () => undefined,
    onSuccess: (parsed) => ({ name: String(parsed.frontmatter.name ?? ""), body: parsed.body })
  })

/**
 * The limits of every door's write (`writeLimitsError`: a name of at most 100 characters, a body that is not blank)
 * for a memory written as text: the agents' `memory_write` and `memory_edit`, MCP's `memory_edit`, `team write`. A
 * move (no stamp) carries the memory as it is, and a plain file (the memory tool's) has no name or body to hold.
 */
const checkLimits = (key: string, text: string, before: string | undefined) => {
  const written = writtenMemory(text, key)
  const error = written === undefined ?
    undefined :
    writeLimitsError(written, before === undefined ? undefined : writtenMemory(before, key))
  return error === undefined ? Effect.void : Effect.fail(error)
}

/**
 * What both write paths check, in one order, under the write's lock: `ifVersion` still names `before`, the text to
 * store (stamped) is within the size cap, its frontmatter gives the three fields its index line needs, and a
 * stamped write of a memory keeps the name and body limits.
 */
const checkedWrite = (
  key: string,
  before: string | undefined,
  content: WriteContent,
  modified: Modified,
  ifVersion: string | undefined,
  plain: boolean
) =>
  Effect.gen(function*() {
    yield* checkVersion(key, ifVersion, before)
    const text = textToWrite(content, before, modified)
    yield* checkSize(key, text, before)
    const fields = yield* memoryFields(key, text, plain)
    if (!plain && modified !== undefined) yield* checkLimits(key, text, before)
    return { text, fields }
  })

/** A file-system failure, as what the caller can act on. */
const fromFsError = (key: string) => fromMemoryFsError(key, { directoryIsIo: true })

const ioOnly = (key: string) => (error: MemoryFsError): PathTraversalError | MemoryIoError => {
  const mapped = fromFsError(key)(error)
  return mapped._tag === "MemoryNotFoundError" ?
    new MemoryIoError({ op: error.op, path: error.path, detail: error.detail }) :
    mapped
}

export const make = Effect.gen(function*() {
  const fs = yield* MemoryFs
  const containment = yield* Containment
  const index = yield* MemoryIndex
  const guard = yield* TeamGuard

  const locate = Effect.fn("MemoryStore.locate")(function*(root: MemoryRoot, key: string) {
    // the scope is the one the key asks for, decided before `..` is collapsed (`team/../x.md` is refused)
    const lexical = yield* Effect.fromResult(
      lexicalScoped(root.memoryDir, key.trim(), { allowAbsolute: true, allowRoot: true })
    )
    yield* refuseCaseAlias(lexical.key)
    if (lexical.scope === "team") {
      if (root.teamEnabled !== true) {
        return yield* new TeamMemoryDisabledError({ source: "teamEnabled is not true for this memory directory" })
      }
      // team/ itself must not lead out of the memory directory; below it the guard applies all its layers
      yield* containment.resolve(root.memoryDir, TEAM_DIR)
      const teamKey = lexical.key.slice(TEAM_DIR.length + 1)
      const teamDir = NodePath.join(lexical.root, TEAM_DIR)
      if (teamKey !== "") yield* guard.resolve(teamDir, teamKey)
      const located: Located = { scope: "team", contained: lexical, teamDir, teamKey }
      return located
    }
    const contained = yield* containment.resolve(root.memoryDir, lexical.key, { allowRoot: true })
    const located: Located = { scope: "private", contained }
    return located
  })

  /** A file key (not the directory itself). */
  const locateFile = (root: MemoryRoot, key: string) =>
    Effect.flatMap(
      locate(root, key),
      (located) =>
        located.contained.key === "" || (located.scope === "team" && located.teamKey === "") ?
          Effect.fail(
            new PathTraversalError({ key, reason: "escapes-root", detail: "names a directory: give a file" })
          ) :
          Effect.succeed(located)
    )

  const readPrivate = (located: Extract<Located, { scope: "private" }>) =>
    fs.readFile(located.contained.real, { maxBytes: MEMORY_READ_MAX_BYTES, within: located.contained.realRoot }).pipe(
      Effect.mapError(fromFsError(located.contained.key))
    )

  const readTeam = (located: Extract<Located, { scope: "team" }>) =>
    Effect.gen(function*() {
      const text = yield* guard.read(located.teamDir, located.teamKey)
      // the guard is the authority on the text; the time is the file's when the file system knows it
      const mtimeMs = yield* fs.lstat(located.contained.path).pipe(
        Effect.map((info) => info.mtimeMs),
        Effect.catchIf((error) => error.reason === "NotFound", () => Effect.succeed(0)),
        Effect.mapError(ioOnly(located.contained.key))
      )
      return { text, info: { mtimeMs } }
    })

  const read = Effect.fn("MemoryStore.read")(function*(root: MemoryRoot, key: string) {
    const located = yield* locateFile(root, key)
    const file = located.scope === "private" ? yield* readPrivate(located) : yield* readTeam(located)
    const stored: StoredMemory = {
      key: located.contained.key,
      scope: located.scope,
      path: located.contained.path,
      text: file.text,
      mtimeMs: file.info.mtimeMs
    }
    return stored
  })

  const readHead = Effect.fn("MemoryStore.readHead")(function*(root: MemoryRoot, key: string, maxBytes: number) {
    const located = yield* locateFile(root, key)
    if (located.scope === "team") {
      const file = yield* readTeam(located)
      const bytes = utf8.encode(file.text)
      const truncated = bytes.length > maxBytes
      return {
        key: located.contained.key,
        scope: located.scope,
        path: located.contained.path,
        text: truncated ? utf8Decoder.decode(bytes.subarray(0, maxBytes)) : file.text,
        mtimeMs: file.info.mtimeMs,
        truncated
      }
    }
    const head = yield* fs.readHead(located.contained.real, maxBytes).pipe(
      Effect.mapError(fromFsError(located.contained.key))
    )
    return {
      key: located.contained.key,
      scope: located.scope,
      path: located.contained.path,
      text: head.text,
      mtimeMs: head.info.mtimeMs,
      truncated: head.truncated
    }
  })

  const orUndefined = <E extends { readonly _tag: string }>(
    effect: Effect.Effect<{ readonly text: string }, E>
  ) =>
    effect.pipe(
      Effect.map((file): string | undefined => file.text),
      Effect.catchIf((error): error is Extract<E, MemoryNotFoundError> => error._tag === "MemoryNotFoundError", () =>
        Effect.succeed(undefined))
    )

  const teamText = (teamDir: string, teamKey: string) =>
    orUndefined(Effect.map(guard.read(teamDir, teamKey), (text) => ({ text })))

  /** Creates team/ (0700) and checks it is a real directory of the memory directory, not a link elsewhere. */
  const ensureTeamDir = (memoryDir: string, teamDir: string) =>
    Effect.gen(function*() {
      yield* fs.makeDirectory(teamDir).pipe(Effect.mapError(ioOnly(TEAM_DIR)))
      const realRoot = yield* fs.realPathOfDeepestExisting(memoryDir).pipe(Effect.mapError(ioOnly(TEAM_DIR)))
      const realTeam = yield* fs.realPathOfDeepestExisting(teamDir).pipe(Effect.mapError(ioOnly(TEAM_DIR)))
      if (realTeam !== NodePath.join(realRoot, TEAM_DIR)) {
        return yield* new PathTraversalError({
          key: TEAM_DIR,
          reason: "symlink-escape",
          detail: `the team directory resolves to ${realTeam}, not inside ${realRoot}`
        })
      }
      const info = yield* fs.lstat(realTeam).pipe(Effect.mapError(ioOnly(TEAM_DIR)))
      if (info.kind !== "Directory") {
        return yield* new MemoryIoError({ op: "stat", path: teamDir, detail: "the team directory is not a directory" })
      }
    })

  /**
   * Read-modify-write of team/MEMORY.md and whatever `f` writes beside it, under the team lock; `f`'s undo runs
   * when the index cannot be written (as in `MemoryIndex.modify`).
   */
  const modifyTeamIndex = <A, E>(
    memoryDir: string,
    teamDir: string,
    f: (current: string) => Effect.Effect<IndexUpdate<A>, E>
  ) =>
    Effect.gen(function*() {
      yield* ensureTeamDir(memoryDir, teamDir)
      return yield* withLock(
        NodePath.join(memoryDir, TEAM_LOCK),
        Effect.gen(function*() {
          const current = (yield* teamText(teamDir, INDEX_FILE)) ?? ""
          const update = yield* f(current)
          if (update.text !== current) {
            yield* guard.write(teamDir, INDEX_FILE, update.text).pipe(
              Effect.catchTag("MemoryIoError", (failure) => undoAfterIndexFailure(failure, update.undo))
            )
          }
          return update.result
        }),
        TEAM_LOCK_OPTIONS
      ).pipe(Effect.provideService(MemoryFs, fs))
    })

  const writeTeam = (
    located: Extract<Located, { scope: "team" }>,
    content: WriteContent,
    modified: Modified,
    ifVersion: string | undefined,
    plain: boolean
  ) =>
    modifyTeamIndex(located.contained.root, located.teamDir, (currentIndex) =>
      Effect.gen(function*() {
        const key = located.contained.key
        const before = yield* teamText(located.teamDir, located.teamKey)
        const { fields, text } = yield* checkedWrite(key, before, content, modified, ifVersion, plain)
        yield* refuseSecret(key, text)
        const planned = upsertIndexText(currentIndex, {
          title: fields.name,
          file: located.teamKey,
          hook: fields.description
        })
        const overCap = checkIndexCaps(NodePath.join(located.teamDir, INDEX_FILE), currentIndex, planned.text)
        if (overCap !== undefined) return yield* overCap
        const path = yield* guard.write(located.teamDir, located.teamKey, text)
        const result: StoreWriteResult = {
          key,
          scope: "team",
          path,
          created: before === undefined,
          indexCreated: planned.created,
          before,
          after: text
        }
        const undo = before === undefined ?
          fs.remove(path) :
          guard.write(located.teamDir, located.teamKey, before)
        return { text: planned.text, result, undo: { what: `the memory file ${key}`, effect: undo } }
      }))

  const writePrivate = (
    located: Extract<Located, { scope: "private" }>,
    content: WriteContent,
    modified: Modified,
    ifVersion: string | undefined,
    plain: boolean
  ) =>
    index.modify(located.contained.root, (current) =>
      Effect.gen(function*() {
        const key = located.contained.key
        const before = yield* orUndefined(readPrivate(located))
        const { fields, text } = yield* checkedWrite(key, before, content, modified, ifVersion, plain)
        // Cap check first: an over-cap write changes nothing, not even the memory file.
        const planned = upsertIndexText(current.text, { title: fields.name, file: key, hook: fields.description })
        const overCap = checkIndexCaps(current.path, current.text, planned.text)
        if (overCap !== undefined) return yield* overCap
        const within = { within: located.contained.realRoot }
        yield* fs.writeFileAtomic(located.contained.path, text, within).pipe(Effect.mapError(ioOnly(key)))
        const result: StoreWriteResult = {
          key,
          scope: "private",
          path: located.contained.path,
          created: before === undefined,
          indexCreated: planned.created,
          before,
          after: text
        }
        // A full disk between the file and its line: the file is taken back (removed, or its old text restored).
        const undo = before === undefined ?
          fs.remove(located.contained.path) :
          fs.writeFileAtomic(located.contained.path, before, within)
        return { text: planned.text, result, undo: { what: `the memory file ${key}`, effect: undo } }
      }))

  const writeStamped = (
    root: MemoryRoot,
    key: string,
    content: WriteContent,
    modified: Modified,
    ifVersion?: string | undefined,
    plain = false
  ) =>
    Effect.gen(function*() {
      const located = yield* locateFile(root, key)
      yield* refuseKey(located.contained.key, { plain })
      return located.scope === "team" ?
        yield* writeTeam(located, content, modified, ifVersion, plain) :
        yield* writePrivate(located, content, modified, ifVersion, plain)
    })

  const write = Effect.fn("MemoryStore.write")(
    function*(root: MemoryRoot, key: string, content: WriteContent, options?: StoreWriteOptions) {
      const plain = options?.plain === true
      if (options?.verbatim === true) {
        return yield* writeStamped(root, key, content, undefined, options.ifVersion, plain)
      }
      // Every memory memdir writes says when (docs/file-format.md#age-and-staleness).
      const now = yield* Clock.currentTimeMillis
      return yield* writeStamped(root, key, content, new Date(now).toISOString(), options?.ifVersion, plain)
    }
  )

  /** Inside the index's lock: the memory file and its index line go together; nothing there is not found. */
  const removeLocked = (
    located: Located,
    indexKey: string,
    indexText: string,
    before: string | undefined
  ) =>
    Effect.gen(function*() {
      const relative = located.contained.key
      const planned = removeFromIndexText(indexText, indexKey)
      const fileRemoved = yield* fs.remove(located.contained.path).pipe(
        Effect.as(true),
        Effect.catchIf((error) => error.reason === "NotFound", () => Effect.succeed(false)),
        Effect.mapError(ioOnly(relative))
      )
      if (!fileRemoved && planned.removed === 0) {
        return yield* new MemoryNotFoundError({ path: located.contained.path })
      }
      const result: StoreRemoveResult = {
        key: relative,
        scope: located.scope,
        path: located.contained.path,
        fileRemoved,
        indexLinesRemoved: planned.removed,
        before
      }
      // The line cannot be removed (a full disk): the file comes back, so the removal is all or nothing too.
      const undo = fileRemoved && before !== undefined ?
        { what: `the removed memory file ${relative}`, effect: fs.writeFileAtomic(located.contained.path, before) } :
        undefined
      return { text: planned.text, result, undo }
    })

  const remove = Effect.fn("MemoryStore.remove")(function*(root: MemoryRoot, key: string, options?: StoreWriteOptions) {
    const located = yield* locateFile(root, key)
    yield* refuseKey(located.contained.key, { removing: true, plain: options?.plain })
    const relative = located.contained.key
    if (located.scope === "team") {
      return yield* modifyTeamIndex(located.contained.root, located.teamDir, (current) =>
        Effect.gen(function*() {
          const before = yield* teamText(located.teamDir, located.teamKey).pipe(
            Effect.catchTag("PathTraversalError", () => Effect.succeed(undefined))
          )
          return yield* removeLocked(located, located.teamKey, current, before)
        }))
    }
    const dirExists = yield* fs.exists(located.contained.root).pipe(Effect.mapError(ioOnly(relative)))
    if (!dirExists) return yield* new MemoryNotFoundError({ path: located.contained.path })
    return yield* index.modify(located.contained.root, (current) =>
      Effect.gen(function*() {
        const before = yield* orUndefined(readPrivate(located)).pipe(
          Effect.catchTag("PathTraversalError", () => Effect.succeed(undefined))
        )
        return yield* removeLocked(located, relative, current.text, before)
      }))
  })

  const rename = Effect.fn("MemoryStore.rename")(
    function*(root: MemoryRoot, from: string, to: string, options?: StoreWriteOptions) {
      const plain = options?.plain === true
      const source = yield* read(root, from)
      // A move is not an edit: the memory keeps its `modified:`.
      const written = yield* writeStamped(root, to, source.text, undefined, undefined, plain)
      if (written.key !== source.key) {
        // all or nothing: a source that cannot be removed leaves no second copy behind (the target as it was before)
        yield* remove(root, source.key, options).pipe(
          Effect.tapError(() =>
            written.before === undefined ?
              Effect.ignore(remove(root, written.key, options)) :
              Effect.ignore(writeStamped(root, written.key, written.before, undefined, undefined, plain))
          )
        )
      }
      return written
    }
  )

  const listKeys = Effect.fn("MemoryStore.listKeys")(function*(root: MemoryRoot, dir?: string) {
    const located = yield* locate(root, dir ?? "")
    const start = located.contained.path
    const memoryRoot = located.contained.root
    const entries = yield* fs.walkKinds(start, {
      enter: (_relative, name) => !name.startsWith(".")
    }).pipe(
      Effect.catchIf((error) => error.reason === "NotFound", () => Effect.succeed([])),
      Effect.mapError(ioOnly(dir ?? ""))
    )
    const prefix = start === memoryRoot ? "" : `${located.contained.key}/`
    // The walk enters no hidden directory: below `dir`, only a file's own name can be hidden.
    if (isHiddenKey(prefix)) return []
    const out: Array<StoreKey> = []
    for (const entry of entries) {
      if (entry.kind !== "File" || entry.relative.startsWith(".", entry.relative.lastIndexOf("/") + 1)) continue
      const key = prefix + entry.relative
      const scope = scopeOf(key)
      if (scope === "team" && root.teamEnabled !== true) continue
      out.push({ key, scope, path: entry.absolute })
    }
    return out.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  })

  /** One batch of `list`'s stats: the regular files among `keys`, with their lstat's size and time. */
  const statBatch = (keys: ReadonlyArray<StoreKey>, out: Array<StoreEntry>) =>
    Effect.flatMap(fs.lstatMany(keys.map((entry) => entry.path)), (infos) => {
      for (let i = 0; i < keys.length; i++) {
        const info = infos[i]!
        const { key, path, scope } = keys[i]!
        if (info instanceof MemoryFsError) {
          if (info.reason === "NotFound") continue
          return Effect.fail(ioOnly(key)(info))
        }
        if (info.kind === "File") out.push({ key, scope, path, size: info.size, mtimeMs: info.mtimeMs })
      }
      return Effect.void
    })

  // Size and time by lstat (never following a link); a file gone or no longer a regular file since it was named is
  // left out.
  const list = Effect.fn("MemoryStore.list")(function*(root: MemoryRoot, dir?: string) {
    const keys = yield* listKeys(root, dir)
    const out: Array<StoreEntry> = []
    for (let start = 0; start < keys.length; start += STAT_BATCH) {
      if (start > 0) yield* Effect.yieldNow
      yield* statBatch(keys.slice(start, start + STAT_BATCH), out)
    }
    return out
  })

  return MemoryStore.of({ read, readHead, write, remove, rename, list, listKeys, locate })
})

/** The store over the given file system (its lock files too), containment, index and team guard. */
export const layer: Layer.Layer<
  MemoryStore,
  never,
  MemoryFs | Containment | MemoryIndex | TeamGuard
> = Layer.effect(MemoryStore, make)

/** `layer` with its `Containment` (over the given `MemoryFs`) built in. */
export const layerWithContainment: Layer.Layer<
  MemoryStore | Containment,
  never,
  MemoryFs | MemoryIndex | TeamGuard
> = layer.pipe(Layer.provideMerge(containmentLayer))

/**
 * The store on the real disk: live `MemoryFs`, `Containment` and `TeamGuard` built in (it still needs the index).
 */
export const layerNode: Layer.Layer<
  MemoryStore | Containment | MemoryFs | TeamGuard,
  never,
  MemoryIndex
> = layerWithContainment.pipe(Layer.provideMerge(Layer.mergeAll(MemoryFsLayer, teamGuardLayer)))
