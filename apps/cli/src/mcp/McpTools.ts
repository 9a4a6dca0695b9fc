/**
 * The tools of `memdir mcp` (docs/mcp.md): each one a title, an input and an output schema (Effect Schema, sent to
 * the client as JSON Schema), annotations, and a handler over the core programs and the `MemoryStore` — the only
 * door to memory files, so containment, the team rules (TeamGuard, secret refusal, team lock and index line) and
 * the index caps hold here as everywhere.
 *
 * `callTool` never fails: bad arguments, a typed memdir error or a defect each become a tool result with
 * `isError: true` that names the problem (and, for bad arguments, the accepted ones), so the model can correct
 * itself and the protocol never sees a crash.
 */
import * as Browse from "@memdir/core/Browse"
import { MemoryDisabledError, VersionConflictError } from "@memdir/core/Errors"
import { parseMemoryFile } from "@memdir/core/Frontmatter"
import { type MemoryType, memoryTypes } from "@memdir/core/Memory"
import { isoTime, writtenAtOf, writtenAtOfFile } from "@memdir/core/MemoryAge"
import { type MemoryRoot, MemoryStore } from "@memdir/core/MemoryStore"
import { RecallSession, renderRecalledMemory } from "@memdir/core/Recall"
import { Staleness } from "@memdir/core/Staleness"
import { chooseTeamKey, type TeamLocation, writePrivateMemory, writeTeamMemory } from "@memdir/core/TeamMemory"
import { chooseTarget, deleteMemory, validateWriteInput } from "@memdir/core/Write"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { locateTeam, requireTeam } from "../commands/teamMemory.js"
import { isMemdirError } from "../Output.js"

// ---------------------------------------------------------------------------------------------------------------
// Failures of the tools themselves (besides the core's typed errors)
// ---------------------------------------------------------------------------------------------------------------

/** `old_str` of an edit matched no text or more than once. */
export class EditMatchError extends Schema.TaggedError<EditMatchError>()("EditMatchError", {
  path: Schema.String,
  count: Schema.Number
}) {
  override get message(): string {
    return this.count === 0 ?
      `old_str does not occur in ${this.path}; nothing was changed. Read it with memory_read and copy the text ` +
      `exactly.` :
      `old_str occurs ${this.count} times in ${this.path}; it must occur exactly once. Nothing was changed: ` +
      `include more surrounding text so it names one place.`
  }
}

/** A rename onto a memory that already exists. */
export class PathExistsError extends Schema.TaggedError<PathExistsError>()("PathExistsError", {
  path: Schema.String
}) {
  override get message(): string {
    return `${this.path} already exists; nothing was renamed. Delete it first or choose another new_path.`
  }
}

/** Arguments that do not match the tool's input schema. */
export class ToolArgumentsError extends Schema.TaggedError<ToolArgumentsError>()("ToolArgumentsError", {
  tool: Schema.String,
  problems: Schema.Array(Schema.String),
  accepted: Schema.String
}) {
  override get message(): string {
    return `invalid arguments for ${this.tool}: ${this.problems.join("; ")}.\nAccepted arguments:\n${this.accepted}`
  }
}

/** A stale `if_version` (the store checks it under the write's lock). */
export { VersionConflictError }

export type ToolError = VersionConflictError | EditMatchError | PathExistsError | ToolArgumentsError

// ---------------------------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------------------------

const described = <S extends Schema.Schema.Any>(schema: S, description: string) =>
  schema.annotations({ description }) as unknown as S

const MemoryTypeArg = described(Schema.Literal(...memoryTypes), "Memory type: user | feedback | project | reference")
const ScopeArg = described(
  Schema.Literal(...Browse.browseScopes),
  "private, team (only while team memory is on) or all (default)"
)
const PathArg = described(
  Schema.String,
  "Memory file relative to the memory directory, e.g. feedback_testing.md or team/reference_ci.md"
)
const Scope = Schema.Literal("private", "team")
const Kind = Schema.Literal(...memoryTypes, "untyped")
const Caveat = described(Schema.NullOr(Schema.String), "The staleness caveat (null for today/yesterday)")

const Header = Schema.Struct({
  path: Schema.String,
  scope: Scope,
  name: Schema.String,
  type: Kind,
  description: Schema.String,
  mtime: described(Schema.String, "Last modified, ISO 8601"),
  ageDays: Schema.Number,
  age: Schema.String
})

// ---------------------------------------------------------------------------------------------------------------
// The tool shape
// ---------------------------------------------------------------------------------------------------------------

export interface ToolAnnotations {
  readonly title: string
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
  readonly openWorldHint: boolean
}

/** Where the server's memory is: the project directory it was started for (`--cwd`, else the process cwd). */
export interface ToolContext {
  readonly cwd: Option.Option<string>
}

export interface ToolOutput<O> {
  readonly structured: O
  /** What the model reads (clients show `content`; `structuredContent` is for programs). */
  readonly text: string
}

interface ToolSpec<I, O, R> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<I, any>
  readonly output: Schema.Schema<O, any>
  readonly annotations: Omit<ToolAnnotations, "title" | "openWorldHint">
  readonly run: (input: I, context: ToolContext) => Effect.Effect<ToolOutput<O>, unknown, R>
}

/** A tool result as the MCP `tools/call` response carries it. */
export interface ToolResult {
  readonly [key: string]: unknown
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: Record<string, unknown> | undefined
  readonly isError?: boolean | undefined
}

export interface Tool<R> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: Record<string, unknown>
  readonly outputSchema: Record<string, unknown>
  readonly annotations: ToolAnnotations
  readonly call: (args: unknown, context: ToolContext) => Effect.Effect<ToolResult, never, R>
}

type JsonProperty = { readonly type?: string; readonly enum?: ReadonlyArray<unknown>; readonly description?: string }

/** One line per argument: name, type, whether required, what it is. */
export const acceptedArguments = (schema: Record<string, unknown>): string => {
  const properties = (schema.properties ?? {}) as Record<string, JsonProperty>
  const required = new Set((schema.required ?? []) as ReadonlyArray<string>)
  return Object.entries(properties).map(([name, p]) => {
    const type = p.enum !== undefined ? p.enum.map((v) => JSON.stringify(v)).join(" | ") : p.type ?? "value"
    const need = required.has(name) ? "required" : "optional"
    return `- ${name} (${type}, ${need})${p.description === undefined ? "" : `: ${p.description}`}`
  }).join("\n")
}

/**
 * What is wrong with the arguments, one line per argument: an argument with fixed choices says them once (not one
 * "Expected" per choice), any other the schema's first complaint.
 */
const argumentProblems = (
  error: ParseResult.ParseError,
  schema: Record<string, unknown>,
  args: unknown
): ReadonlyArray<string> => {
  const properties = (schema.properties ?? {}) as Record<string, JsonProperty>
  const given = typeof args === "object" && args !== null ? args as Record<string, unknown> : {}
  const byPath = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const key = issue.path.join(".")
    if (byPath.has(key)) continue
    const choices = issue.path.length === 1 ? properties[String(issue.path[0])]?.enum : undefined
    const message = choices !== undefined && issue._tag !== "Missing" ?
      `must be one of ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${JSON.stringify(given[key])}` :
      issue.message
    byPath.set(key, key === "" ? message : `${key}: ${message}`)
  }
  return [...byPath.values()]
}

/** The JSON Schema of a tool's input or output: an object schema, the draft the SDK's validator reads. */
const jsonSchemaOf = (schema: Schema.Schema<any, any>): Record<string, unknown> =>
  JSONSchema.make(schema) as unknown as Record<string, unknown>

const textResult = (text: string, isError: boolean, structured?: Record<string, unknown>): ToolResult => ({
  content: [{ type: "text", text }],
  ...(structured === undefined ? {} : { structuredContent: structured }),
  ...(isError ? { isError: true } : {})
})

/** MCP-specific advice after a core error's own message (which may name CLI commands). */
const toolHints: Readonly<Record<string, string>> = {
  MemoryNotFoundError: "memory_list or memory_search show the memories that exist.",
  PathTraversalError: "Give a path relative to the memory directory, as memory_list shows it.",
  IndexOverCapError: "To fix it: merge related memories (memory_edit, then memory_delete), delete ones that are no " +
    "longer true, or shorten descriptions; then retry the write.",
  TeamMemoryDisabledError: "Use scope \"private\", or ask the user to turn team memory on.",
  SecretDetectedError: "Team memory is shared with the whole team: leave the secret out (say where it is kept " +
    "instead), or save it in scope \"private\".",
  InvalidMemoryInputError: "Check the arguments against the tool's input schema.",
  MemoryDisabledError: "Memory is off for this project: the tools cannot read or write it until it is turned on.",
  LockTimeoutError: "Another memdir process is writing: retry in a moment."
}

/** An error as the model should read it: the message, then advice, and the current text on a version conflict. */
export const renderToolError = (error: unknown): string => {
  if (error instanceof VersionConflictError && error.content !== null) {
    return `${error.message}\n\n--- current content (version ${error.current}) ---\n${error.content}`
  }
  if (error instanceof ToolArgumentsError || error instanceof EditMatchError || error instanceof PathExistsError) {
    return error.message
  }
  if (isMemdirError(error)) {
    const hint = toolHints[error._tag]
    return hint === undefined ? error.message : `${error.message}\n${hint}`
  }
  return `memdir could not complete the call: ${String(error)}`
}

const defineTool = <I, O, R>(spec: ToolSpec<I, O, R>): Tool<R> => {
  const inputSchema = jsonSchemaOf(spec.input)
  const outputSchema = jsonSchemaOf(spec.output)
  const decode = Schema.decodeUnknownEither(spec.input, { errors: "all", onExcessProperty: "error" })
  const encode = Schema.encodeEither(spec.output)
  const accepted = acceptedArguments(inputSchema)
  const call = (args: unknown, context: ToolContext): Effect.Effect<ToolResult, never, R> =>
    Effect.gen(function*() {
      const input = decode(args ?? {})
      if (Either.isLeft(input)) {
        const problems = argumentProblems(input.left, inputSchema, args)
        return yield* new ToolArgumentsError({ tool: spec.name, problems, accepted })
      }
      const output = yield* spec.run(input.right, context)
      const structured = yield* Either.mapLeft(encode(output.structured), (e) => new Error(String(e)))
      return textResult(output.text, false, structured as Record<string, unknown>)
    }).pipe(
      Effect.catchAllCause((cause) => {
        const failure = Cause.failureOption(cause)
        const error = Option.isSome(failure) ? failure.value : Cause.squash(cause)
        // no structuredContent: a client validates it against the output schema, which describes success
        return Effect.succeed(textResult(renderToolError(error), true))
      })
    )
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema,
    outputSchema,
    annotations: { title: spec.title, openWorldHint: false, ...spec.annotations },
    call
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Shared steps
// ---------------------------------------------------------------------------------------------------------------

/** The project's memory location and team switch, refusing when memory is off. */
const enabledLocation = (context: ToolContext) =>
  Effect.gen(function*() {
    const team = yield* locateTeam(context.cwd)
    if (!team.memory.enabled) return yield* new MemoryDisabledError({ source: team.memory.enabledBy })
    return team
  })

const rootOf = (team: TeamLocation): MemoryRoot => ({ memoryDir: team.memory.memoryDir, teamEnabled: team.enabled })

const headerOf = (
  m: Browse.ListedMemory,
  age: { readonly ageDays: number; readonly age: string }
): typeof Header.Type => ({
  path: m.path,
  scope: m.scope,
  name: m.name,
  type: m.type,
  description: m.description,
  mtime: isoTime(m.mtime),
  ageDays: age.ageDays,
  age: age.age
})

/** A header as one line of a tool's text result. */
const headerText = (m: typeof Header.Type): string =>
  `${m.path} [${m.type}${m.scope === "team" ? ", team" : ""}] ${m.name} (${m.age}) — ${m.description}`

/** The current text of a memory, or undefined when there is none. */
const currentText = (root: MemoryRoot, key: string) =>
  Effect.flatMap(MemoryStore, (store) => store.read(root, key)).pipe(
    Effect.map((stored): string | undefined => stored.text),
    Effect.catchTag("MemoryNotFoundError", () => Effect.succeed(undefined))
  )

/** Non-overlapping occurrences of `needle` in `text`. */
export const occurrences = (text: string, needle: string): number => {
  let count = 0
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count++
  return count
}

const replaceOnce = (text: string, from: string, to: string): string => {
  const at = text.indexOf(from)
  return text.slice(0, at) + to + text.slice(at + from.length)
}

// ---------------------------------------------------------------------------------------------------------------
// The tools
// ---------------------------------------------------------------------------------------------------------------

const RecalledMemory = Schema.Struct({
  path: Schema.String,
  scope: Scope,
  name: Schema.String,
  type: Kind,
  description: Schema.String,
  ageDays: Schema.Number,
  age: Schema.String,
  caveat: Caveat,
  content: described(Schema.String, "The body (frontmatter stripped), capped at 200 lines / 4 KB"),
  truncated: Schema.Boolean
})

export const recallTool = defineTool({
  name: "memory_recall",
  title: "Recall memories",
  description: "The memories (at most 5) that will clearly help with a request, each with its age and a " +
    "staleness caveat. Never returns a memory this session already got. Call it with the user's request at the " +
    "start of a task.",
  input: Schema.Struct({
    query: described(Schema.String, "The user's request, in their words"),
    exclude: Schema.optional(
      described(Schema.Array(Schema.String), "Memory paths you already have (they are not returned)")
    )
  }),
  output: Schema.Struct({
    memories: Schema.Array(RecalledMemory),
    candidates: described(Schema.Number, "Memories the selector looked at"),
    selector: Schema.String,
    skipped: Schema.optional(described(Schema.String, "Why memory was not consulted at all")),
    degraded: Schema.optional(Schema.String)
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const session = yield* RecallSession
      const result = yield* session.recall({
        memoryDir: team.memory.memoryDir,
        query: input.query,
        teamEnabled: team.enabled,
        alreadyRead: input.exclude
      })
      const memories = result.selected.map((m) => ({
        path: m.path,
        scope: m.scope,
        name: m.name,
        type: m.type,
        description: m.description,
        ageDays: m.ageDays,
        age: m.age,
        caveat: m.caveat,
        content: m.content,
        truncated: m.truncated
      }))
      const text = result.selected.length > 0 ?
        result.selected.map(renderRecalledMemory).join("\n\n---\n\n") :
        result.skipped === undefined ?
        `No relevant memory (${result.candidates} looked at; a memory this session already got is not ` +
        `returned again).` :
        `Memory was not consulted: ${result.skipped}` +
        (result.skipped === "one-word-prompt" ? " (give the request in a few words)." : ".")
      return {
        structured: {
          memories,
          candidates: result.candidates,
          selector: result.selector,
          ...(result.skipped === undefined ? {} : { skipped: result.skipped }),
          ...(result.degraded === undefined ? {} : { degraded: result.degraded })
        },
        text
      }
    })
})

export const searchTool = defineTool({
  name: "memory_search",
  title: "Search memories",
  description: "Memory headers (path, name, type, description, age) ranked by how well they match a query, for " +
    "browsing. Use memory_read for a memory's content.",
  input: Schema.Struct({
    query: described(Schema.String, "Words to look for"),
    limit: Schema.optional(
      described(
        Schema.Number.pipe(Schema.int(), Schema.between(1, Browse.MAX_SEARCH_LIMIT)),
        "At most this many (1–50, default 10)"
      )
    ),
    scope: Schema.optional(ScopeArg),
    type: Schema.optional(MemoryTypeArg)
  }),
  output: Schema.Struct({
    results: Schema.Array(Schema.Struct({
      ...Header.fields,
      score: described(Schema.Number, "Match evidence (higher is better)"),
      relevant: described(Schema.Boolean, "memory_recall would pick it for this query")
    }))
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const hits = yield* Browse.searchMemories({
        memoryDir: team.memory.memoryDir,
        teamEnabled: team.enabled,
        query: input.query,
        limit: input.limit,
        scope: input.scope,
        type: input.type
      })
      const ages = yield* (yield* Staleness).ages(hits.map((h) => writtenAtOf(h.memory)))
      const results = hits.map((h, i) => ({
        ...headerOf(h.memory, ages[i]!),
        score: Math.round(h.score * 1000) / 1000,
        relevant: h.relevant
      }))
      const text = results.length === 0 ? "No memory matches." : results.map(headerText).join("\n")
      return { structured: { results }, text }
    })
})

export const listTool = defineTool({
  name: "memory_list",
  title: "List memories",
  description: "Every memory's header (path, name, type, description, age), newest first.",
  input: Schema.Struct({ scope: Schema.optional(ScopeArg), type: Schema.optional(MemoryTypeArg) }),
  output: Schema.Struct({ memories: Schema.Array(Header), teamEnabled: Schema.Boolean }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const listed = yield* Browse.listMemories({
        memoryDir: team.memory.memoryDir,
        teamEnabled: team.enabled,
        scope: input.scope,
        type: input.type
      })
      const ages = yield* (yield* Staleness).ages(listed.map(writtenAtOf))
      const memories = listed.map((m, i) => headerOf(m, ages[i]!))
      const text = memories.length === 0 ? "No memories yet." : memories.map(headerText).join("\n")
      return { structured: { memories, teamEnabled: team.enabled }, text }
    })
})

export const readTool = defineTool({
  name: "memory_read",
  title: "Read a memory",
  description: "One memory file in full: its content, frontmatter, age and version (pass the version as " +
    "if_version to memory_write to update it safely).",
  input: Schema.Struct({ path: PathArg }),
  output: Schema.Struct({
    path: Schema.String,
    scope: Scope,
    content: described(Schema.String, "The whole file, frontmatter included"),
    frontmatter: described(
      Schema.NullOr(Schema.Struct({ name: Schema.String, description: Schema.String, type: Kind })),
      "null when the file has no valid frontmatter"
    ),
    body: Schema.String,
    mtime: Schema.String,
    ageDays: Schema.Number,
    age: Schema.String,
    caveat: Caveat,
    version: described(Schema.String, "A hash of the content")
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const stored = yield* (yield* MemoryStore).read(rootOf(team), input.path)
      // The same time memory_list, recall and `memdir show` count from (MemoryAge).
      const written = yield* writtenAtOfFile(team.memory.memoryDir, stored.key, stored.text, stored.mtimeMs)
      const age = yield* (yield* Staleness).age(written.at)
      const parsed = parseMemoryFile(stored.text, stored.key)
      const frontmatter = Either.isRight(parsed) ?
        {
          name: parsed.right.frontmatter.name,
          description: parsed.right.frontmatter.description,
          type: parsed.right.frontmatter.type
        } :
        null
      const version = Browse.memoryVersion(stored.text)
      const caveat = age.caveat === null ? "" : `${age.caveat}\n`
      return {
        structured: {
          path: stored.key,
          scope: stored.scope,
          content: stored.text,
          frontmatter,
          body: Either.isRight(parsed) ? parsed.right.body : stored.text,
          mtime: new Date(stored.mtimeMs).toISOString(),
          ageDays: age.ageDays,
          age: age.age,
          caveat: age.caveat,
          version
        },
        text: `${stored.key} (saved ${age.age}, version ${version})\n${caveat}\n${stored.text}`
      }
    })
})

const WriteResult = Schema.Struct({
  path: described(Schema.String, "Relative to the memory directory"),
  scope: Scope,
  created: described(Schema.Boolean, "A new memory (false: an existing one was updated)"),
  indexCreated: Schema.Boolean,
  version: Schema.String,
  warnings: Schema.Array(Schema.String)
})

export const writeTool = defineTool({
  name: "memory_write",
  title: "Save a memory",
  description: "Creates a memory, or updates the one with the same name and type (never a duplicate), and its " +
    "line in MEMORY.md. Team scope is shared with the whole team: secrets are refused there.",
  input: Schema.Struct({
    type: MemoryTypeArg,
    name: described(Schema.String, "Short title, e.g. \"Testing policy\""),
    description: described(Schema.String, "One line saying what the memory holds: recall decides on it"),
    body: described(Schema.String, "Markdown: the rule or fact; for feedback and project, then Why: and How to apply:"),
    scope: Schema.optional(described(Schema.Literal("private", "team"), "private (default) or team")),
    if_version: Schema.optional(
      described(Schema.String, "The version memory_read returned: the write fails if the memory changed since")
    )
  }),
  output: WriteResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const memoryDir = team.memory.memoryDir
      const frontmatter = yield* validateWriteInput(input)
      const fields = { memoryDir, type: input.type as MemoryType, name: input.name, description: input.description }
      const inTeam = input.scope === "team"
      if (inTeam) yield* requireTeam(team)
      const file = inTeam ?
        `team/${yield* chooseTeamKey(memoryDir, frontmatter)}` :
        yield* chooseTarget(memoryDir, frontmatter)
      const written = inTeam ?
        {
          ...yield* writeTeamMemory({
            ...fields,
            body: input.body,
            file: file.slice("team/".length),
            ifVersion: input.if_version
          }),
          contradictions: []
        } :
        // if_version is checked by the store under the write's lock: a change landing meanwhile is a conflict.
        yield* writePrivateMemory({
          ...fields,
          body: input.body,
          file,
          teamEnabled: team.enabled,
          ifVersion: input.if_version
        })
      const after = yield* (yield* MemoryStore).read(rootOf(team), written.file)
      const warnings = written.contradictions.map((c) =>
        `This may contradict team feedback ${c.path} ("${c.name}": ${c.description}) — ${c.reason}. Check with ` +
        `the user which rule should hold.`
      )
      const structured = {
        path: written.file,
        scope: written.scope,
        created: written.created,
        indexCreated: written.indexCreated,
        version: Browse.memoryVersion(after.text),
        warnings
      }
      return {
        structured,
        text: `${written.created ? "Saved" : "Updated"} ${written.file} (version ${structured.version}).` +
          warnings.map((w) => `\nwarning: ${w}`).join("")
      }
    })
})

export const editTool = defineTool({
  name: "memory_edit",
  title: "Edit a memory",
  description: "Replaces old_str, which must occur exactly once, with new_str in a memory file; its MEMORY.md " +
    "line follows a changed name or description.",
  input: Schema.Struct({
    path: PathArg,
    old_str: described(Schema.String.pipe(Schema.minLength(1)), "The exact text to replace (must occur once)"),
    new_str: described(Schema.String, "The replacement")
  }),
  output: Schema.Struct({ path: Schema.String, scope: Scope, version: Schema.String }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const store = yield* MemoryStore
      const root = rootOf(team)
      const stored = yield* store.read(root, input.path)
      const count = occurrences(stored.text, input.old_str)
      if (count !== 1) return yield* new EditMatchError({ path: stored.key, count })
      // Under the store's lock: applied to the text as it is then; a concurrent change that broke the match
      // leaves the file as it is (and is reported below).
      const written = yield* store.write(root, stored.key, (existing) =>
        existing !== undefined && occurrences(existing, input.old_str) === 1 ?
          replaceOnce(existing, input.old_str, input.new_str) :
          existing ?? stored.text)
      if (written.before !== undefined && written.after === written.before && input.old_str !== input.new_str) {
        return yield* new EditMatchError({ path: stored.key, count: occurrences(written.before, input.old_str) })
      }
      const version = Browse.memoryVersion(written.after)
      return {
        structured: { path: written.key, scope: written.scope, version },
        text: `Edited ${written.key} (version ${version}).`
      }
    })
})

export const deleteTool = defineTool({
  name: "memory_delete",
  title: "Delete a memory",
  description: "Deletes a memory file and its line in MEMORY.md (\"forget …\").",
  input: Schema.Struct({ path: PathArg }),
  output: Schema.Struct({ path: Schema.String, fileRemoved: Schema.Boolean, indexLinesRemoved: Schema.Number }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const removed = yield* deleteMemory({
        memoryDir: team.memory.memoryDir,
        file: input.path,
        teamEnabled: team.enabled
      })
      return {
        structured: {
          path: removed.file,
          fileRemoved: removed.fileRemoved,
          indexLinesRemoved: removed.indexLinesRemoved
        },
        text: `Deleted ${removed.file}${removed.fileRemoved ? "" : " (only its index line was left)"}.`
      }
    })
})

export const renameTool = defineTool({
  name: "memory_rename",
  title: "Rename a memory",
  description: "Moves a memory to another path and its MEMORY.md line with it (team/… paths move into team memory, " +
    "under the team rules).",
  input: Schema.Struct({
    path: PathArg,
    new_path: described(Schema.String, "The new path, relative to the memory directory, ending in .md")
  }),
  output: Schema.Struct({ from: Schema.String, path: Schema.String, scope: Scope }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const store = yield* MemoryStore
      const root = rootOf(team)
      const source = yield* store.read(root, input.path)
      const target = yield* store.locate(root, input.new_path)
      if (target.contained.key !== source.key && (yield* currentText(root, target.contained.key)) !== undefined) {
        return yield* new PathExistsError({ path: target.contained.key })
      }
      const written = yield* store.rename(root, source.key, input.new_path)
      return {
        structured: { from: source.key, path: written.key, scope: written.scope },
        text: `Renamed ${source.key} to ${written.key}.`
      }
    })
})

/** Every tool of the server, in the order clients list them. */
export const tools = [recallTool, searchTool, listTool, readTool, writeTool, editTool, deleteTool, renameTool]
