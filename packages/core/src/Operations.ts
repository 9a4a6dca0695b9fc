/**
 * Operations: what any door (the MCP server, the agents' tools, the memory-tool backend, the CLI, hooks, a future
 * HTTP or web view) does to a memory directory, once, with a Schema for each request and each result and one
 * error vocabulary (`Errors.ts`). A door translates its wire format into these requests and renders the results;
 * it decides nothing about memory itself.
 *
 * Every operation takes the `MemoryRoot` (the memory directory and whether team memory is on) beside its request:
 * where the memory is comes from the door's location (the project, `--memory-dir`), not from the caller's input.
 *
 * `edit` is the one edit behaviour: an exact string replace where the text to replace occurs exactly once (or
 * `replaceAll`), nothing else; a missing, repeated or unchanged text is an `EditMatchError` that says what to do; and
 * the write is made only while the memory is still the text the edit was computed from (the store checks the version
 * under its lock), so a change that lands in between is refused (`VersionConflictError`), never overwritten.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Browse from "./Browse.js"
import { EditMatchError, PathExistsError, TeamMemoryDisabledError, VersionConflictError } from "./Errors.js"
import { parseMemoryFile } from "./Frontmatter.js"
import type { LayoutSetting } from "./internal/location/layoutSetting.js"
import { MemoryKind, MemoryScope, type MemoryType, memoryTypes, memoryVersion, NAME_MAX_LENGTH } from "./Memory.js"
import { isoTime, writtenAtOf, writtenAtOfFile } from "./MemoryAge.js"
import { type MemoryRoot, MemoryStore } from "./MemoryStore.js"
import { Caveat, RecalledMemoryView, recalledMemoryView, RecallSession } from "./Recall.js"
import { Staleness } from "./Staleness.js"
import { chooseTeamKey, writePrivateMemory, writeTeamMemory } from "./TeamMemory.js"
import { chooseTarget, validateWriteInput } from "./Write.js"

export type { MemoryRoot } from "./MemoryStore.js"

const described = <S extends Schema.Top>(schema: S, description: string): S["Rebuild"] =>
  schema.annotate({ description })

// ---------------------------------------------------------------------------------------------------------------
// Shapes shared by several operations
// ---------------------------------------------------------------------------------------------------------------

export const Scope = MemoryScope
export const Kind = MemoryKind
export const MemoryTypeField = described(
  Schema.Literals(memoryTypes),
  "Memory type: user | feedback | project | reference"
)
export const BrowseScope = described(
  Schema.Literals(Browse.browseScopes),
  "private, team (only while team memory is on) or all (default)"
)
export const MemoryPath = described(
  Schema.String,
  "Memory file relative to the memory directory, e.g. feedback_testing.md or team/reference_ci.md"
)

/** A memory's header as listings show it, with its age. */
export const Header = Schema.Struct({
  path: Schema.String,
  scope: Scope,
  name: Schema.String,
  type: Kind,
  description: Schema.String,
  mtime: described(Schema.String, "Last modified, ISO 8601"),
  ageDays: Schema.Finite,
  age: Schema.String
})
export type Header = typeof Header.Type

/** One recalled memory, as every door shows it: `Recall.RecalledMemoryView`, here under the operations' name. */
export const RecalledMemory = RecalledMemoryView
export type RecalledMemory = RecalledMemoryView

/** A recalled memory of `RecallSession.recall` in the one shape every door shows. */
export const recalledMemory = recalledMemoryView

const headerOf = (m: Browse.ListedMemory, age: { readonly ageDays: number; readonly age: string }): Header => ({
  path: m.path,
  scope: m.scope,
  name: m.name,
  type: m.type,
  description: m.description,
  mtime: isoTime(m.mtime),
  ageDays: age.ageDays,
  age: age.age
})

// ---------------------------------------------------------------------------------------------------------------
// list, search
// ---------------------------------------------------------------------------------------------------------------

export const ListInput = Schema.Struct({
  scope: Schema.optionalKey(BrowseScope),
  type: Schema.optionalKey(MemoryTypeField)
})
export const ListResult = Schema.Struct({ memories: Schema.Array(Header), teamEnabled: Schema.Boolean })

/** Every memory's header, newest first, in the scope and of the type asked for. */
export const list = Effect.fn("Operations.list")(function*(root: MemoryRoot, input: typeof ListInput.Type) {
  const teamEnabled = root.teamEnabled === true
  const listed = yield* Browse.listMemories({ memoryDir: root.memoryDir, teamEnabled, ...input })
  const ages = yield* (yield* Staleness).ages(listed.map(writtenAtOf))
  const result: typeof ListResult.Type = { memories: listed.map((m, i) => headerOf(m, ages[i]!)), teamEnabled }
  return result
})

export const SearchInput = Schema.Struct({
  query: described(Schema.String, "Words to look for"),
  limit: Schema.optionalKey(
    described(
      Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: Browse.MAX_SEARCH_LIMIT })),
      "At most this many (1–50, default 10)"
    )
  ),
  scope: Schema.optionalKey(BrowseScope),
  type: Schema.optionalKey(MemoryTypeField)
})
export const SearchHit = Schema.Struct({
  ...Header.fields,
  score: described(Schema.Finite, "Match evidence (higher is better)"),
  relevant: described(Schema.Boolean, "recall would pick it for this query")
})
export const SearchResult = Schema.Struct({ results: Schema.Array(SearchHit) })

/** Memory headers ranked by how well they match a query (for browsing; `recall` is for the turn at hand). */
export const search = Effect.fn("Operations.search")(function*(root: MemoryRoot, input: typeof SearchInput.Type) {
  const hits = yield* Browse.searchMemories({
    memoryDir: root.memoryDir,
    teamEnabled: root.teamEnabled === true,
    ...input
  })
  const ages = yield* (yield* Staleness).ages(hits.map((h) => writtenAtOf(h.memory)))
  const result: typeof SearchResult.Type = {
    results: hits.map((h, i) => ({
      ...headerOf(h.memory, ages[i]!),
      score: Math.round(h.score * 1000) / 1000,
      relevant: h.relevant
    }))
  }
  return result
})

// ---------------------------------------------------------------------------------------------------------------
// read
// ---------------------------------------------------------------------------------------------------------------

export const ReadInput = Schema.Struct({ path: MemoryPath })
export const ReadResult = Schema.Struct({
  path: Schema.String,
  scope: Scope,
  content: described(Schema.String, "The whole file, frontmatter included"),
  frontmatter: described(
    Schema.NullOr(Schema.Struct({ name: Schema.String, description: Schema.String, type: Kind })),
    "null when the file has no valid frontmatter"
  ),
  body: Schema.String,
  mtime: Schema.String,
  written: described(Schema.String, "When it was written, ISO 8601: the time its age counts from"),
  writtenFrom: described(
    Schema.Literals(["modified", "commit", "mtime"]),
    "Where that time came from: its modified: header, its last git commit, or the file's mtime"
  ),
  warning: Schema.optionalKey(described(Schema.String, "Why a modified: header was not used, when there is one")),
  ageDays: Schema.Finite,
  age: Schema.String,
  caveat: Caveat,
  version: described(
    Schema.String,
    "A hash of the content: give it as ifVersion so a write or an edit fails if it changed"
  )
})

/** One memory file in full, with its age (counted as listings and recall count it) and its version. */
export const read = Effect.fn("Operations.read")(function*(root: MemoryRoot, input: typeof ReadInput.Type) {
  const stored = yield* (yield* MemoryStore).read(root, input.path)
  const written = yield* writtenAtOfFile(root.memoryDir, stored.key, stored.text, stored.mtimeMs)
  const age = yield* (yield* Staleness).age(written.at)
  const parsed = parseMemoryFile(stored.text, stored.key)
  const result: typeof ReadResult.Type = {
    path: stored.key,
    scope: stored.scope,
    content: stored.text,
    frontmatter: Result.isSuccess(parsed) ?
      {
        name: parsed.success.frontmatter.name,
        description: parsed.success.frontmatter.description,
        type: parsed.success.frontmatter.type
      } :
      null,
    body: Result.isSuccess(parsed) ? parsed.success.body : stored.text,
    mtime: new Date(stored.mtimeMs).toISOString(),
    written: new Date(written.at).toISOString(),
    writtenFrom: written.from,
    ...(written.warning === undefined ? {} : { warning: written.warning }),
    ageDays: age.ageDays,
    age: age.age,
    caveat: age.caveat,
    version: memoryVersion(stored.text)
  }
  return result
})

// ---------------------------------------------------------------------------------------------------------------
// recall
// ---------------------------------------------------------------------------------------------------------------

export const RecallInput = Schema.Struct({
  query: described(Schema.String, "The user's request, in their words"),
  exclude: Schema.optionalKey(
    described(Schema.Array(Schema.String), "Memory paths you already have (they are not returned)")
  ),
  max: Schema.optionalKey(
    described(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })), "At most this many (1–5)")
  ),
  recentTools: Schema.optionalKey(
    described(Schema.Array(Schema.String), "Tools the agent is using (their usage docs are skipped)")
  )
})
export const RecallResult = Schema.Struct({
  memories: Schema.Array(RecalledMemory),
  candidates: described(Schema.Int, "Memories the selector looked at"),
  selector: Schema.String,
  skipped: Schema.optionalKey(described(Schema.String, "Why memory was not consulted at all")),
  degraded: Schema.optionalKey(Schema.String)
})

/** The memories that clearly help with a request, never one this session already got (`RecallSession`). */
export const recall = Effect.fn("Operations.recall")(function*(root: MemoryRoot, input: typeof RecallInput.Type) {
  const result = yield* (yield* RecallSession).recall({
    memoryDir: root.memoryDir,
    query: input.query,
    teamEnabled: root.teamEnabled === true,
    alreadyRead: input.exclude,
    max: input.max,
    recentTools: input.recentTools
  })
  const recalled: typeof RecallResult.Type = {
    memories: result.selected.map(recalledMemory),
    candidates: result.candidates,
    selector: result.selector,
    ...(result.skipped === undefined ? {} : { skipped: result.skipped }),
    ...(result.degraded === undefined ? {} : { degraded: result.degraded })
  }
  return recalled
})

// ---------------------------------------------------------------------------------------------------------------
// write
// ---------------------------------------------------------------------------------------------------------------

export const WriteInput = Schema.Struct({
  type: MemoryTypeField,
  name: described(Schema.String, `Short title, at most ${NAME_MAX_LENGTH} characters, e.g. "Testing policy"`),
  description: described(Schema.String, "One line saying what the memory holds: recall decides on it"),
  body: described(
    Schema.String,
    "Markdown, not empty: the rule or fact; for feedback and project, then Why: and How to apply:"
  ),
  scope: Schema.optionalKey(described(Scope, "private (default) or team")),
  ifVersion: Schema.optionalKey(
    described(Schema.String, "The version read returned: the write fails if the memory changed since")
  )
})
export const WriteResult = Schema.Struct({
  path: described(Schema.String, "Relative to the memory directory"),
  scope: Scope,
  created: described(Schema.Boolean, "A new memory (false: an existing one was updated)"),
  indexCreated: Schema.Boolean,
  version: Schema.String,
  warnings: Schema.Array(Schema.String)
})

/** How the location writes (not part of the request: the project's settings). */
export interface WriteOptions {
  /** The `memoryLayout` setting (docs/configuration.md#memory-layout); default `auto`, the directory's own. */
  readonly layout?: LayoutSetting | undefined
}

/**
 * Creates a memory, or updates the one with the same name and type (never a duplicate), and its index line; a
 * private feedback memory that seems to contradict team feedback is written with a warning naming it.
 */
export const write = Effect.fn("Operations.write")(function*(
  root: MemoryRoot,
  input: typeof WriteInput.Type,
  options: WriteOptions = {}
) {
  const memoryDir = root.memoryDir
  const frontmatter = yield* Effect.fromResult(validateWriteInput(input))
  const fields = {
    memoryDir,
    type: input.type as MemoryType,
    name: input.name,
    description: input.description,
    layout: options.layout
  }
  const inTeam = input.scope === "team"
  if (inTeam && root.teamEnabled !== true) {
    return yield* new TeamMemoryDisabledError({ source: "teamEnabled is not true for this memory directory" })
  }
  // if_version is checked by the store under the write's lock: a change landing meanwhile is a conflict.
  const written = inTeam ?
    {
      ...yield* writeTeamMemory({
        ...fields,
        body: input.body,
        file: yield* chooseTeamKey(memoryDir, frontmatter),
        ifVersion: input.ifVersion
      }),
      contradictions: []
    } :
    yield* writePrivateMemory({
      ...fields,
      body: input.body,
      file: yield* chooseTarget(memoryDir, frontmatter),
      teamEnabled: root.teamEnabled === true,
      ifVersion: input.ifVersion
    })
  const after = yield* (yield* MemoryStore).read(root, written.file)
  const result: typeof WriteResult.Type = {
    path: written.file,
    scope: written.scope,
    created: written.created,
    indexCreated: written.indexCreated,
    version: memoryVersion(after.text),
    warnings: written.contradictions.map((c) =>
      `This may contradict team feedback ${c.path} ("${c.name}": ${c.description}) — ${c.reason}. Check with ` +
      `the user which rule should hold.`
    )
  }
  return result
})

// ---------------------------------------------------------------------------------------------------------------
// edit
// ---------------------------------------------------------------------------------------------------------------

export const EditInput = Schema.Struct({
  path: MemoryPath,
  old: described(Schema.String.check(Schema.isMinLength(1)), "The exact text to replace (must occur once)"),
  new: described(Schema.String, "The replacement"),
  replaceAll: Schema.optionalKey(described(Schema.Boolean, "Replace every occurrence (default: it must occur once)")),
  ifVersion: Schema.optionalKey(
    described(Schema.String, "The version read returned: the edit fails if the memory changed since")
  )
})
export type EditInput = typeof EditInput.Type
export const EditResult = Schema.Struct({
  path: Schema.String,
  scope: Scope,
  version: Schema.String,
  replacements: described(Schema.Int, "Occurrences replaced"),
  before: described(Schema.String, "The memory's text the edit replaced"),
  after: described(Schema.String, "The memory's text now")
})
export type EditResult = typeof EditResult.Type

/** How a door stores an edit (not part of the request: the door's own rule). */
export interface EditOptions {
  /**
   * Store the edited text exactly, without the `modified:` stamp every other write gets (the memory-tool backend,
   * whose model addresses the file by line numbers: `MemoryStore.write`'s `verbatim`).
   */
  readonly verbatim?: boolean | undefined
  /** Any file, not only a memory with frontmatter (the memory-tool backend: `MemoryStore.write`'s `plain`). */
  readonly plain?: boolean | undefined
}

/** Non-overlapping occurrences of `needle` in `text`. */
export const occurrences = (text: string, needle: string): number => {
  let count = 0
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count++
  return count
}

/**
 * The edit of `text` (the memory at `path`): `old` replaced by `new` where it occurs exactly once, or everywhere with
 * `replaceAll`; else why not. Pure: `edit` applies it, and the agents' edit of `MEMORY.md` uses it too.
 */
export const planEdit = (
  path: string,
  text: string,
  input: Pick<EditInput, "old" | "new" | "replaceAll">
): Result.Result<{ readonly text: string; readonly replacements: number }, EditMatchError> => {
  const count = occurrences(text, input.old)
  if (count === 0) return Result.fail(new EditMatchError({ path, reason: "no-match", count }))
  if (count > 1 && input.replaceAll !== true) {
    return Result.fail(new EditMatchError({ path, reason: "multiple-matches", count }))
  }
  if (input.old === input.new) return Result.fail(new EditMatchError({ path, reason: "no-change", count }))
  if (input.replaceAll === true) {
    return Result.succeed({ text: text.split(input.old).join(input.new), replacements: count })
  }
  const at = text.indexOf(input.old)
  return Result.succeed({ text: text.slice(0, at) + input.new + text.slice(at + input.old.length), replacements: 1 })
}

/**
 * Replaces `old` with `new` in a memory, its index line following a changed name or description (the store's write:
 * containment, the team rules, the size cap, valid frontmatter). Written only while the memory is still the text the
 * edit was computed from (and `ifVersion`, when given): otherwise `VersionConflictError`, nothing written.
 */
export const edit = Effect.fn("Operations.edit")(
  function*(root: MemoryRoot, input: EditInput, options: EditOptions = {}) {
    const store = yield* MemoryStore
    const current = yield* store.read(root, input.path)
    const version = memoryVersion(current.text)
    const conflict = (expected: string, now: string | null, content: string | null) =>
      new VersionConflictError({ path: current.key, expected, current: now, content, operation: "edit" })
    if (input.ifVersion !== undefined && input.ifVersion !== version) {
      return yield* conflict(input.ifVersion, version, current.text)
    }
    const planned = yield* Effect.fromResult(planEdit(current.key, current.text, input))
    const written = yield* store.write(root, current.key, planned.text, {
      ifVersion: version,
      verbatim: options.verbatim,
      plain: options.plain
    }).pipe(
      Effect.catchTag("VersionConflictError", (e) => Effect.fail(conflict(e.expected, e.current, e.content)))
    )
    const result: EditResult = {
      path: written.key,
      scope: written.scope,
      version: memoryVersion(written.after),
      replacements: planned.replacements,
      before: written.before ?? current.text,
      after: written.after
    }
    return result
  }
)

// ---------------------------------------------------------------------------------------------------------------
// delete, rename
// ---------------------------------------------------------------------------------------------------------------

export const DeleteInput = Schema.Struct({ path: MemoryPath })
export const DeleteResult = Schema.Struct({
  path: Schema.String,
  fileRemoved: Schema.Boolean,
  indexLinesRemoved: Schema.Int,
  before: described(Schema.NullOr(Schema.String), "The text removed (null: only an index line was left)")
})

/** Deletes a memory file and its index line(s); `MemoryNotFoundError` when neither exists. */
export const remove = Effect.fn("Operations.delete")(
  function*(root: MemoryRoot, input: typeof DeleteInput.Type, options: Pick<EditOptions, "plain"> = {}) {
    const removed = yield* (yield* MemoryStore).remove(root, input.path, options)
    const result: typeof DeleteResult.Type = {
      path: removed.key,
      fileRemoved: removed.fileRemoved,
      indexLinesRemoved: removed.indexLinesRemoved,
      before: removed.before ?? null
    }
    return result
  }
)

export { remove as delete }

export const RenameInput = Schema.Struct({
  path: MemoryPath,
  newPath: described(Schema.String, "The new path, relative to the memory directory, ending in .md")
})
export const RenameResult = Schema.Struct({ from: Schema.String, path: Schema.String, scope: Scope })

/**
 * Moves a memory to another path and its index line with it (`team/…` paths move into team memory, under the team
 * rules); a memory already at the new path is kept (`PathExistsError`).
 */
export const rename = Effect.fn("Operations.rename")(
  function*(root: MemoryRoot, input: typeof RenameInput.Type, options: Pick<EditOptions, "plain"> = {}) {
    const store = yield* MemoryStore
    const source = yield* store.read(root, input.path)
    const target = yield* store.locate(root, input.newPath)
    if (target.contained.key !== source.key) {
      const taken = yield* store.read(root, target.contained.key).pipe(
        Effect.as(true),
        Effect.catchTag("MemoryNotFoundError", () => Effect.succeed(false))
      )
      if (taken) return yield* new PathExistsError({ path: target.contained.key })
    }
    const written = yield* store.rename(root, source.key, input.newPath, options)
    const result: typeof RenameResult.Type = { from: source.key, path: written.key, scope: written.scope }
    return result
  }
)
