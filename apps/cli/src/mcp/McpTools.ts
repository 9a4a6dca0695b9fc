/**
 * The tools of `memdir mcp` (docs/mcp.md): each one a title, an input and an output schema (Effect Schema, sent to
 * the client as JSON Schema), annotations, and a handler that is an adapter over one core operation
 * (`@memdir/core/Operations`): the MCP names of its arguments (`old_str`, `if_version`, `new_path`) turned into the
 * operation's request, its result returned as `structuredContent` with a text for the model. What a write or an
 * edit does (containment, the team rules, the index caps, the version check) is decided there, once for every door.
 *
 * `callTool` never fails: bad arguments, a typed memdir error or a defect each become a tool result with
 * `isError: true` that names the problem (and, for bad arguments, the accepted ones), so the model can correct
 * itself and the protocol never sees a crash.
 */
import { MemoryDisabledError, VersionConflictError } from "@memdir/core/Errors"
import type { SessionId } from "@memdir/core/HookSessionState"
import type { MemoryRoot } from "@memdir/core/MemoryStore"
import { AutomaticModelCallsAllowed } from "@memdir/core/ModelSelector"
import * as Operations from "@memdir/core/Operations"
import { RECALL_SESSION_BUDGET_BYTES, renderRecalledMemory } from "@memdir/core/Recall"
import type { TeamLocation } from "@memdir/core/TeamMemory"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as JsonSchema from "effect/JsonSchema"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { locateTeam, requireTeam } from "../commands/teamMemory.js"
import { automaticModelCallsOn } from "../ModelCalls.js"
import { isMemdirError } from "../Output.js"
import { recordInSession, sessionBefore } from "./McpSession.js"

// ---------------------------------------------------------------------------------------------------------------
// Failures of the tools themselves (the operations' errors are core's: Errors.ts)
// ---------------------------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------------------------

const described = <S extends Schema.Top>(schema: S, description: string): S["Rebuild"] =>
  schema.annotate({ description })

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

/** Where the server's memory is and whose session it serves. */
export interface ToolContext {
  /** The project directory the server was started for (`--cwd`, else the process cwd). */
  readonly cwd: Option.Option<string>
  /** The agent session whose record the hooks share (`McpSession`); none: the process is its own session. */
  readonly session: Option.Option<SessionId>
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
  readonly input: Schema.Codec<I, any>
  readonly output: Schema.Codec<O, any>
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

/** A required argument that was not given, as the issues of `argumentProblems` word it. */
const MISSING = "is missing"

/** The schema's complaints, one per problem with its path; a missing argument says `MISSING`. */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => issue._tag === "MissingKey" ? MISSING : SchemaIssue.defaultLeafHook(issue)
})

/**
 * What is wrong with the arguments, one line per argument: an argument with fixed choices says them once (not one
 * "Expected" per choice), any other the schema's first complaint.
 */
const argumentProblems = (
  error: Schema.SchemaError,
  schema: Record<string, unknown>,
  args: unknown
): ReadonlyArray<string> => {
  const properties = (schema.properties ?? {}) as Record<string, JsonProperty>
  const given = typeof args === "object" && args !== null ? args as Record<string, unknown> : {}
  const byPath = new Map<string, string>()
  for (const issue of formatIssues(error.issue).issues) {
    const path = (issue.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
    const key = path.join(".")
    if (byPath.has(key)) continue
    const choices = path.length === 1 ? properties[String(path[0])]?.enum : undefined
    const message = choices !== undefined && issue.message !== MISSING ?
      `must be one of ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${JSON.stringify(given[key])}` :
      issue.message
    byPath.set(key, key === "" ? message : `${key}: ${message}`)
  }
  return [...byPath.values()]
}

/**
 * The JSON Schema of a tool's input or output: an object schema, the draft the SDK's validator reads (draft-07),
 * closed to properties it does not name (as the arguments are decoded: `onExcessProperty: "error"`).
 */
const jsonSchemaOf = (schema: Schema.Top): Record<string, unknown> => {
  const document = JsonSchema.toDocumentDraft07(Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" }))
  return {
    $schema: JsonSchema.META_SCHEMA_URI_DRAFT_07,
    ...document.schema,
    ...(Object.keys(document.definitions).length === 0 ? {} : { definitions: document.definitions })
  }
}

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
  LockTimeoutError: "Another memdir process is writing: retry in a moment.",
  EditMatchError: "memory_read shows the memory's current text; memory_edit's replace_all replaces every occurrence."
}

/** An error as the model should read it: the message, then advice, and the current text on a version conflict. */
export const renderToolError = (error: unknown): string => {
  if (error instanceof VersionConflictError && error.content !== null) {
    return `${error.message}\n\n--- current content (version ${error.current}) ---\n${error.content}`
  }
  if (error instanceof ToolArgumentsError) return error.message
  if (isMemdirError(error)) {
    const hint = toolHints[error._tag]
    return hint === undefined ? error.message : `${error.message}\n${hint}`
  }
  return `memdir could not complete the call: ${String(error)}`
}

const defineTool = <I, O, R>(spec: ToolSpec<I, O, R>): Tool<R> => {
  const input = spec.input
  const output = spec.output
  const inputSchema = jsonSchemaOf(input)
  const outputSchema = jsonSchemaOf(output)
  const decode = Schema.decodeUnknownResult(input, { errors: "all", onExcessProperty: "error" })
  const encode = Schema.encodeResult(output)
  const accepted = acceptedArguments(inputSchema)
  const call = (args: unknown, context: ToolContext): Effect.Effect<ToolResult, never, R> =>
    Effect.gen(function*() {
      const input = decode(args ?? {})
      if (Result.isFailure(input)) {
        const problems = argumentProblems(input.failure, inputSchema, args)
        return yield* new ToolArgumentsError({ tool: spec.name, problems, accepted })
      }
      const output = yield* spec.run(input.success, context)
      const structured = yield* Effect.fromResult(
        Result.mapError(encode(output.structured), (e) => new Error(String(e)))
      )
      return textResult(output.text, false, structured as Record<string, unknown>)
    }).pipe(
      Effect.catchCause((cause) => {
        const failure = Cause.findErrorOption(cause)
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

/** A header as one line of a tool's text result. */
const headerText = (m: Operations.Header): string =>
  `${m.path} [${m.type}${m.scope === "team" ? ", team" : ""}] ${m.name} (${m.age}) — ${m.description}`

// ---------------------------------------------------------------------------------------------------------------
// The tools: each one the MCP names of an operation's request and its result as text (Operations.ts)
// ---------------------------------------------------------------------------------------------------------------

const utf8Length = (text: string) => Buffer.byteLength(text, "utf8")

const recallText = (result: typeof Operations.RecallResult.Type): string => {
  if (result.memories.length > 0) return result.memories.map(renderRecalledMemory).join("\n\n---\n\n")
  switch (result.skipped) {
    case undefined:
      return `No relevant memory (${result.candidates} looked at; a memory this session already got is not ` +
        `returned again: memory_read gives it by path).`
    case "one-word-prompt":
      return "Memory was not consulted: one-word-prompt (give the request in a few words)."
    case "budget-exhausted":
      return "Memory was not consulted: budget-exhausted (this session already got its share of recalled " +
        "memory; memory_read gives a memory by path)."
    default:
      return `Memory was not consulted: ${result.skipped}.`
  }
}

export const recallTool = defineTool({
  name: "memory_recall",
  title: "Recall memories",
  description: "The memories (at most 5) that will clearly help with a request, each with its age and a " +
    "staleness caveat. Never returns a memory this session already got (from this tool or the memdir hooks). Call " +
    "it with the user's request at the start of a task.",
  input: Schema.Struct({ query: Operations.RecallInput.fields.query, exclude: Operations.RecallInput.fields.exclude }),
  output: Operations.RecallResult,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const memoryDir = team.memory.memoryDir
      // what the hooks (and earlier calls) of this agent session already gave the model: never twice
      const before = yield* sessionBefore(context.session, memoryDir)
      if (Option.isSome(before) && before.value.bytes >= RECALL_SESSION_BUDGET_BYTES) {
        const spent: typeof Operations.RecallResult.Type = {
          memories: [],
          candidates: 0,
          selector: "none",
          skipped: "budget-exhausted"
        }
        return { structured: spent, text: recallText(spent) }
      }
      const got = Option.match(before, { onNone: () => [], onSome: (state) => state.surfaced })
      const exclude = [...(input.exclude ?? []), ...got]
      // the model picks only while the user turned automatic model calls on (docs/mcp.md): a key alone never does
      const result = yield* Operations.recall(rootOf(team), {
        query: input.query,
        ...(exclude.length === 0 ? {} : { exclude })
      }).pipe(
        Effect.provideService(AutomaticModelCallsAllowed, automaticModelCallsOn(team.memory))
      )
      yield* recordInSession(
        context.session,
        memoryDir,
        result.memories.map((m) => m.path),
        result.memories.reduce((sum, m) => sum + utf8Length(m.content), 0),
        { event: "mcp memory_recall", prompt: input.query }
      )
      return { structured: result, text: recallText(result) }
    })
})

export const searchTool = defineTool({
  name: "memory_search",
  title: "Search memories",
  description: "Memory headers (path, name, type, description, age) ranked by how well they match a query, for " +
    "browsing. Use memory_read for a memory's content.",
  input: Operations.SearchInput,
  output: Operations.SearchResult,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const result = yield* Operations.search(rootOf(team), input)
      const text = result.results.length === 0 ? "No memory matches." : result.results.map(headerText).join("\n")
      return { structured: result, text }
    })
})

export const listTool = defineTool({
  name: "memory_list",
  title: "List memories",
  description: "Every memory's header (path, name, type, description, age), newest first.",
  input: Operations.ListInput,
  output: Operations.ListResult,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const result = yield* Operations.list(rootOf(team), input)
      const text = result.memories.length === 0 ? "No memories yet." : result.memories.map(headerText).join("\n")
      return { structured: result, text }
    })
})

export const readTool = defineTool({
  name: "memory_read",
  title: "Read a memory",
  description: "One memory file in full: its content, frontmatter, age and version (pass the version as " +
    "if_version to memory_write or memory_edit to update it safely).",
  input: Operations.ReadInput,
  output: Operations.ReadResult,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const read = yield* Operations.read(rootOf(team), input)
      // asked for by name, so given whole; the session now has it, so recall and the hooks leave it out
      yield* recordInSession(context.session, team.memory.memoryDir, [read.path], 0, { event: "mcp memory_read" })
      const caveat = read.caveat === null ? "" : `${read.caveat}\n`
      return {
        structured: read,
        text: `${read.path} (saved ${read.age}, version ${read.version})\n${caveat}\n${read.content}`
      }
    })
})

const IfVersion = (what: string) =>
  Schema.optionalKey(
    described(Schema.String, `The version memory_read returned: the ${what} fails if the memory changed since`)
  )

export const writeTool = defineTool({
  name: "memory_write",
  title: "Save a memory",
  description: "Creates a memory, or updates the one with the same name and type (never a duplicate), and its " +
    "line in MEMORY.md. Team scope is shared with the whole team: secrets are refused there.",
  input: Schema.Struct({
    type: Operations.WriteInput.fields.type,
    name: Operations.WriteInput.fields.name,
    description: Operations.WriteInput.fields.description,
    body: Operations.WriteInput.fields.body,
    scope: Operations.WriteInput.fields.scope,
    if_version: IfVersion("write")
  }),
  output: Operations.WriteResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  run: ({ if_version, ...input }, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      // the location's own refusal, naming which setting turned team memory off
      if (input.scope === "team") yield* requireTeam(team)
      // the project's memoryLayout setting, as `memdir write` honours it
      const written = yield* Operations.write(rootOf(team), {
        ...input,
        ...(if_version === undefined ? {} : { ifVersion: if_version })
      }, {
        layout: team.memory.memoryLayout
      })
      return {
        structured: written,
        text: `${written.created ? "Saved" : "Updated"} ${written.path} (version ${written.version}).` +
          written.warnings.map((w) => `\nwarning: ${w}`).join("")
      }
    })
})

export const editTool = defineTool({
  name: "memory_edit",
  title: "Edit a memory",
  description: "Replaces old_str, which must occur exactly once (unless replace_all), with new_str in a memory " +
    "file; its MEMORY.md line follows a changed name or description. A change made meanwhile is never overwritten.",
  input: Schema.Struct({
    path: Operations.MemoryPath,
    old_str: Operations.EditInput.fields.old,
    new_str: Operations.EditInput.fields.new,
    replace_all: Operations.EditInput.fields.replaceAll,
    if_version: IfVersion("edit")
  }),
  output: Schema.Struct({ path: Schema.String, scope: Operations.Scope, version: Schema.String }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const edited = yield* Operations.edit(rootOf(team), {
        path: input.path,
        old: input.old_str,
        new: input.new_str,
        ...(input.replace_all === undefined ? {} : { replaceAll: input.replace_all }),
        ...(input.if_version === undefined ? {} : { ifVersion: input.if_version })
      })
      return {
        structured: { path: edited.path, scope: edited.scope, version: edited.version },
        text: `Edited ${edited.path} (version ${edited.version}).`
      }
    })
})

export const deleteTool = defineTool({
  name: "memory_delete",
  title: "Delete a memory",
  description: "Deletes a memory file and its line in MEMORY.md (\"forget …\").",
  input: Operations.DeleteInput,
  output: Schema.Struct({ path: Schema.String, fileRemoved: Schema.Boolean, indexLinesRemoved: Schema.Int }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const removed = yield* Operations.remove(rootOf(team), input)
      return {
        structured: {
          path: removed.path,
          fileRemoved: removed.fileRemoved,
          indexLinesRemoved: removed.indexLinesRemoved
        },
        text: `Deleted ${removed.path}${removed.fileRemoved ? "" : " (only its index line was left)"}.`
      }
    })
})

export const renameTool = defineTool({
  name: "memory_rename",
  title: "Rename a memory",
  description: "Moves a memory to another path and its MEMORY.md line with it (team/… paths move into team memory, " +
    "under the team rules).",
  input: Schema.Struct({ path: Operations.MemoryPath, new_path: Operations.RenameInput.fields.newPath }),
  output: Operations.RenameResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  run: (input, context) =>
    Effect.gen(function*() {
      const team = yield* enabledLocation(context)
      const renamed = yield* Operations.rename(rootOf(team), { path: input.path, newPath: input.new_path })
      return { structured: renamed, text: `Renamed ${renamed.from} to ${renamed.path}.` }
    })
})

/** Every tool of the server, in the order clients list them. */
export const tools = [recallTool, searchTool, listTool, readTool, writeTool, editTool, deleteTool, renameTool]
