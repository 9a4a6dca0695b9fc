/**
 * Transcripts: what background extraction reads (docs/extraction.md). Two JSONL formats, told apart line by line:
 *
 * - memdir's own: one message per line, `{"role": "user" | "assistant", "content": string | blocks}` (Messages
 *   API shape; `toJsonl` writes it, e.g. from an `Agent` run);
 * - the reference agent's session files (`~/.claude/projects/<slug>/<session>.jsonl`): lines with
 *   `type: "user" | "assistant"`, `message: {role, content}`, `uuid`, `timestamp`, `sessionId`, `cwd`. One API
 *   message may be split over several lines sharing `message.id`: they are joined back. Lines of other types
 *   (`summary`, `system`, `file-history-snapshot`, …), sub-agent lines (`isSidechain`) and injected meta lines
 *   (`isMeta`) are skipped;
 * - Codex's session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): lines `{timestamp, type, payload}`
 *   where `session_meta` gives the session id and cwd, `turn_context` a new cwd, and `response_item` one item of
 *   the Responses API: a `message` (`input_text` / `output_text` parts), a `function_call` (JSON `arguments`), a
 *   `local_shell_call`, a `custom_tool_call` (`apply_patch`: its file paths are the tool's paths), or their
 *   outputs. They become Messages-API messages: calls are `tool_use` blocks of the assistant, outputs `tool_result`
 *   blocks of the user, consecutive items of one side joined. The context Codex injects as user messages
 *   (`<environment_context>`, `<user_instructions>`, AGENTS.md), reasoning and events are skipped. The older
 *   rollout layout (a bare `{id, timestamp}` first line, then bare items) is read the same way.
 *
 * A transcript is read while its writer may still be appending: a last line without its newline that does not
 * parse yet is not a problem, just not there yet. Other unreadable lines are reported and skipped.
 *
 * `memoryWritesIn` answers "did the main agent write memory in this range?": a tool call that writes, edits or
 * deletes a path inside the memory directory, a shell command that touches it, or a memdir write command.
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { ioErrorOf } from "./Errors.js"
import { isInside } from "./internal/containment/inside.js"
import { MemoryFs } from "./MemoryFs.js"
import { isMemoryPath } from "./MemoryPaths.js"

/** One content block as found in a transcript (text, tool_use, tool_result, thinking, image, …). */
export interface TranscriptBlock {
  readonly type: string
  readonly [key: string]: unknown
}

export interface TranscriptMessage {
  readonly role: "user" | "assistant"
  readonly content: string | ReadonlyArray<TranscriptBlock>
  /** 1-based line of the file where the message starts. */
  readonly line: number
  readonly uuid?: string | undefined
  readonly timestamp?: string | undefined
  /** The working directory the main agent ran in (reference format), for relative paths in its tool calls. */
  readonly cwd?: string | undefined
}

export interface TranscriptProblem {
  readonly line: number
  readonly reason: string
}

export type TranscriptFormat = "messages" | "claude-code" | "codex" | "mixed" | "empty"

export interface ParsedTranscript {
  readonly format: TranscriptFormat
  /** From the reference format's lines, when present. */
  readonly sessionId?: string | undefined
  readonly messages: ReadonlyArray<TranscriptMessage>
  /** Lines that are valid but not conversation messages (summaries, sidechains, meta, snapshots, …). */
  readonly skippedLines: number
  readonly problems: ReadonlyArray<TranscriptProblem>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const optionalString = (value: unknown): string | undefined => typeof value === "string" ? value : undefined

/** Content as a string or an array of typed blocks; anything else is not a message. */
const toContent = (value: unknown): TranscriptMessage["content"] | undefined => {
  if (typeof value === "string") return value
  if (!Array.isArray(value)) return undefined
  if (!value.every((block) => isRecord(block) && typeof block.type === "string")) return undefined
  return value as ReadonlyArray<TranscriptBlock>
}

const isRole = (value: unknown): value is TranscriptMessage["role"] => value === "user" || value === "assistant"

type LineFormat = "messages" | "claude-code" | "codex"

type LineOutcome =
  | {
    readonly kind: "message"
    readonly format: LineFormat
    readonly message: TranscriptMessage
    readonly apiMessageId?: string | undefined
    readonly sessionId?: string | undefined
    /** Codex: an item that continues the previous message of the same side (parts of one turn). */
    readonly joins?: boolean | undefined
  }
  | {
    readonly kind: "skip"
    readonly format?: "claude-code" | "codex" | undefined
    readonly sessionId?: string | undefined
    /** Codex: the working directory from here on (`session_meta`, `turn_context`). */
    readonly cwd?: string | undefined
  }
  | { readonly kind: "problem"; readonly reason: string }

// ---------------------------------------------------------------------------------------------------------------
// Codex rollouts
// ---------------------------------------------------------------------------------------------------------------

/** The item types of a Codex rollout's `response_item` lines (also the bare lines of the older layout). */
const CODEX_ITEMS: ReadonlySet<string> = new Set([
  "message",
  "function_call",
  "function_call_output",
  "local_shell_call",
  "custom_tool_call",
  "custom_tool_call_output",
  "reasoning",
  "web_search_call",
  "tool_search_call",
  "tool_search_output",
  "image_generation_call",
  "compaction",
  "ghost_snapshot",
  "other"
])
const CODEX_LINES: ReadonlySet<string> = new Set(["session_meta", "turn_context", "event_msg", "compacted"])

/** What Codex puts in the conversation as user messages besides the user's own words. */
const CODEX_INJECTED =
  /^\s*(?:<environment_context>|<user_instructions>|<user_shell_command>|<turn_aborted>|# AGENTS\.md instructions)/

/** A shell command given as argv (`["bash", "-lc", "…"]`) as the one line a shell would run. */
const commandText = (command: unknown): string | undefined => {
  if (typeof command === "string") return command
  if (!Array.isArray(command) || !command.every((part) => typeof part === "string")) return undefined
  const shell = command.length === 3 && /(?:^|\/)(?:ba|z|da)?sh$/.test(command[0]!) && /^-l?c$/.test(command[1]!)
  return shell ? command[2]! : command.join(" ")
}

/** The files an `apply_patch` envelope adds, updates, deletes or moves to. */
const patchPaths = (patch: string): ReadonlyArray<string> =>
  [...patch.matchAll(/^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm)].map((m) => m[1]!.trim())

const parseArguments = (raw: unknown): unknown => {
  if (typeof raw !== "string") return raw ?? {}
  try {
    return JSON.parse(raw)
  } catch {
    return { arguments: raw }
  }
}

/** A tool call's input with a shell command as one string and the workdir as a path (what `memoryWritesIn` reads). */
const codexToolInput = (name: string, input: unknown): unknown => {
  if (!isRecord(input)) return input
  const command = commandText(input.command)
  return command === undefined || !/shell|exec|bash/i.test(name) ? input : { ...input, command }
}

const outputText = (output: unknown): string => {
  if (typeof output === "string") return output
  if (isRecord(output) && typeof output.content === "string") return output.content
  if (Array.isArray(output)) return toolResultText(output)
  return JSON.stringify(output ?? "")
}

const codexMessageText = (content: unknown): string | undefined => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return undefined
  const texts = content.flatMap((part) => isRecord(part) && typeof part.text === "string" ? [part.text] : [])
  return texts.join("\n")
}

/** One Codex item (a `response_item` payload, or a bare line of the older layout). */
const classifyCodexItem = (
  item: Record<string, unknown>,
  line: number,
  timestamp: string | undefined
): LineOutcome => {
  const at = (role: TranscriptMessage["role"], content: ReadonlyArray<TranscriptBlock>, joins: boolean) =>
    ({ kind: "message", format: "codex", joins, message: { role, content, line, timestamp } }) as const
  switch (item.type) {
    case "message": {
      const text = codexMessageText(item.content)
      if (text === undefined) return { kind: "problem", reason: "a Codex message without text content" }
      if (item.role === "assistant") return at("assistant", [{ type: "text", text }], true)
      if (item.role !== "user" || CODEX_INJECTED.test(text)) return { kind: "skip", format: "codex" }
      return at("user", [{ type: "text", text }], false)
    }
    case "function_call":
    case "custom_tool_call": {
      const name = optionalString(item.name) ?? "tool"
      const id = optionalString(item.call_id) ?? optionalString(item.id) ?? `line-${line}`
      const input = item.type === "function_call" ?
        codexToolInput(name, parseArguments(item.arguments)) :
        typeof item.input === "string" && name === "apply_patch"
        ? { patch: item.input, paths: patchPaths(item.input) }
        : { input: item.input }
      return at("assistant", [{ type: "tool_use", id, name, input }], true)
    }
    case "local_shell_call": {
      const action = isRecord(item.action) ? item.action : {}
      const id = optionalString(item.call_id) ?? optionalString(item.id) ?? `line-${line}`
      const input = { command: commandText(action.command) ?? "", workdir: optionalString(action.working_directory) }
      return at("assistant", [{ type: "tool_use", id, name: "shell", input }], true)
    }
    case "function_call_output":
    case "custom_tool_call_output": {
      const id = optionalString(item.call_id) ?? `line-${line}`
      const failed = isRecord(item.output) && item.output.success === false
      return at(
        "user",
        [{ type: "tool_result", tool_use_id: id, content: outputText(item.output), is_error: failed }],
        true
      )
    }
    default:
      return { kind: "skip", format: "codex" }
  }
}

/** A line of a Codex rollout, or undefined when the line is of another format. */
const classifyCodexLine = (value: Record<string, unknown>, line: number): LineOutcome | undefined => {
  const timestamp = optionalString(value.timestamp)
  if (value.type === "response_item" && isRecord(value.payload)) {
    return classifyCodexItem(value.payload, line, timestamp)
  }
  if (typeof value.type === "string" && CODEX_LINES.has(value.type) && isRecord(value.payload)) {
    const payload = value.payload
    if (value.type === "session_meta") {
      return { kind: "skip", format: "codex", sessionId: optionalString(payload.id), cwd: optionalString(payload.cwd) }
    }
    return {
      kind: "skip",
      format: "codex",
      cwd: value.type === "turn_context" ? optionalString(payload.cwd) : undefined
    }
  }
  // The older layout: bare items (no `message` key, no role at the top for tool items), a bare meta first line.
  if (typeof value.type === "string" && CODEX_ITEMS.has(value.type) && !("message" in value)) {
    if (value.type === "message" && !Array.isArray(value.content)) return undefined
    return classifyCodexItem(value, line, timestamp)
  }
  if (value.record_type === "state") return { kind: "skip", format: "codex" }
  if (
    line === 1 && typeof value.id === "string" && typeof value.timestamp === "string" && !("type" in value) &&
    !("role" in value)
  ) return { kind: "skip", format: "codex", sessionId: value.id }
  return undefined
}

const classifyLine = (value: unknown, line: number): LineOutcome => {
  if (!isRecord(value)) return { kind: "problem", reason: "not a JSON object" }
  const codex = classifyCodexLine(value, line)
  if (codex !== undefined) return codex
  // The reference agent's format: a `type` naming the line, the message under `message`.
  if (typeof value.type === "string" && !isRole(value.role)) {
    const sessionId = optionalString(value.sessionId)
    if (value.type !== "user" && value.type !== "assistant") return { kind: "skip", format: "claude-code", sessionId }
    if (value.isSidechain === true || value.isMeta === true) return { kind: "skip", format: "claude-code", sessionId }
    const message = value.message
    if (!isRecord(message)) return { kind: "problem", reason: `a "${value.type}" line without a message` }
    const content = toContent(message.content)
    const role = isRole(message.role) ? message.role : value.type
    if (content === undefined) return { kind: "problem", reason: "message content is neither text nor blocks" }
    return {
      kind: "message",
      format: "claude-code",
      sessionId,
      apiMessageId: optionalString(message.id),
      message: {
        role,
        content,
        line,
        uuid: optionalString(value.uuid),
        timestamp: optionalString(value.timestamp),
        cwd: optionalString(value.cwd)
      }
    }
  }
  if (isRole(value.role)) {
    const content = toContent(value.content)
    if (content === undefined) return { kind: "problem", reason: "message content is neither text nor blocks" }
    return {
      kind: "message",
      format: "messages",
      message: {
        role: value.role,
        content,
        line,
        uuid: optionalString(value.uuid) ?? optionalString(value.id),
        timestamp: optionalString(value.timestamp)
      }
    }
  }
  return { kind: "problem", reason: "neither a message ({role, content}) nor a session line ({type, message})" }
}

const blocksOf = (content: TranscriptMessage["content"]): ReadonlyArray<TranscriptBlock> =>
  typeof content === "string" ? [{ type: "text", text: content }] : content

/**
 * A Codex item may join the message before it: an assistant turn, or a user message of tool results only (a user's
 * own prompt starts a message of its own and is never joined to).
 */
const joinable = (message: TranscriptMessage): boolean =>
  message.role === "assistant" || blocksOf(message.content).every((block) => block.type === "tool_result")

/** Parse a JSONL transcript in either format (pure; never throws). */
export const parseTranscript = (text: string): ParsedTranscript => {
  const lines = text.split("\n")
  const endsWithNewline = text.endsWith("\n")
  const messages: Array<TranscriptMessage> = []
  const problems: Array<TranscriptProblem> = []
  const formats = new Set<LineFormat>()
  let sessionId: string | undefined
  /** Codex: the working directory its lines do not repeat. */
  let codexCwd: string | undefined
  let skippedLines = 0
  let lastApiMessageId: string | undefined

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim()
    if (raw === "") continue
    const lineNumber = i + 1
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch {
      // The writer is still appending this line: it is not there yet.
      if (i === lines.length - 1 && !endsWithNewline) break
      problems.push({ line: lineNumber, reason: "not valid JSON" })
      continue
    }
    const outcome = classifyLine(value, lineNumber)
    if (outcome.kind === "problem") {
      problems.push({ line: lineNumber, reason: outcome.reason })
      continue
    }
    sessionId ??= outcome.sessionId
    if (outcome.format !== undefined) formats.add(outcome.format)
    if (outcome.kind === "skip") {
      codexCwd = outcome.cwd ?? codexCwd
      skippedLines++
      continue
    }
    const previous = messages[messages.length - 1]
    if (outcome.format === "codex") {
      const message = codexCwd === undefined ? outcome.message : { ...outcome.message, cwd: codexCwd }
      // The parts of one Codex turn come one item per line: the assistant's text and calls, the calls' outputs.
      if (outcome.joins === true && previous !== undefined && previous.role === message.role && joinable(previous)) {
        messages[messages.length - 1] = {
          ...previous,
          content: [...blocksOf(previous.content), ...blocksOf(message.content)]
        }
      } else messages.push(message)
      lastApiMessageId = undefined
      continue
    }
    // One API message split over several lines (one per content block): join it back.
    if (
      outcome.apiMessageId !== undefined && outcome.apiMessageId === lastApiMessageId && previous !== undefined &&
      previous.role === "assistant" && outcome.message.role === "assistant"
    ) {
      messages[messages.length - 1] = {
        ...previous,
        content: [...blocksOf(previous.content), ...blocksOf(outcome.message.content)],
        uuid: outcome.message.uuid ?? previous.uuid
      }
      continue
    }
    lastApiMessageId = outcome.apiMessageId
    messages.push(outcome.message)
    formats.add(outcome.format)
  }

  const format: TranscriptFormat = formats.size === 0 ?
    "empty" :
    formats.size > 1
    ? "mixed"
    : [...formats][0]!
  return { format, sessionId, messages, skippedLines, problems }
}

/**
 * The largest transcript `readTranscript` reads: a long session's JSONL runs to tens of MB. A larger one (or one
 * that grows past it while read) fails with a `MemoryIoError` (`TooLarge`): never read in part, never hung on.
 */
export const TRANSCRIPT_READ_MAX_BYTES = 64 * 1024 * 1024

/**
 * Read and parse a transcript file. The transcript is the agent's file, not memdir's: a link to it (a user who
 * keeps sessions elsewhere) is followed, by resolving the path first; what it resolves to is read like any file
 * memdir reads (a regular file only, never blocking: a FIFO fails at once, with a size bound).
 */
export const readTranscript = Effect.fn("Transcript.read")(function*(file: string) {
  const fs = yield* MemoryFs
  const { text } = yield* fs.realPath(file).pipe(
    Effect.flatMap((real) => fs.readFile(real, { maxBytes: TRANSCRIPT_READ_MAX_BYTES })),
    Effect.mapError(ioErrorOf("read transcript", file))
  )
  return parseTranscript(text)
})

/** memdir's own transcript format: one `{role, content}` per line. */
export const toJsonl = (messages: ReadonlyArray<Pick<Anthropic.MessageParam, "role" | "content">>): string =>
  messages.map((m) => JSON.stringify({ role: m.role, content: m.content })).join("\n") +
  (messages.length > 0 ? "\n" : "")

// ---------------------------------------------------------------------------------------------------------------
// Complete query loops
// ---------------------------------------------------------------------------------------------------------------

const toolUseIds = (message: TranscriptMessage): ReadonlyArray<string> =>
  blocksOf(message.content).flatMap((b) => b.type === "tool_use" && typeof b.id === "string" ? [b.id] : [])

const toolResultIds = (message: TranscriptMessage): ReadonlyArray<string> =>
  blocksOf(message.content).flatMap((b) =>
    b.type === "tool_result" && typeof b.tool_use_id === "string" ? [b.tool_use_id] : []
  )

/**
 * How many messages (from the start) form complete query loops: the prefix that ends with an assistant answer that
 * asks for no tool, with no tool call of its loop left unanswered. What follows is a loop still running (or a user message not
 * answered yet), which extraction leaves for a later run.
 */
export const completePrefixLength = (messages: ReadonlyArray<TranscriptMessage>): number => {
  const pending = new Set<string>()
  let complete = 0
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    const results = toolResultIds(message)
    for (const id of results) pending.delete(id)
    // A new user prompt starts a new loop: a tool call never answered before it (a crash, an interrupt) is
    // abandoned, and must not hold back everything after it.
    if (message.role === "user" && results.length === 0) pending.clear()
    const uses = toolUseIds(message)
    for (const id of uses) pending.add(id)
    if (message.role === "assistant" && uses.length === 0 && pending.size === 0) complete = i + 1
  }
  return complete
}

// ---------------------------------------------------------------------------------------------------------------
// Did the main agent write memory?
// ---------------------------------------------------------------------------------------------------------------

/** Evidence that the main agent wrote memory itself. */
export interface MemoryWriteEvidence {
  /** Index of the message in the transcript's `messages`. */
  readonly message: number
  readonly line: number
  readonly tool: string
  /** The memory path written (file tools), or the command (shell). */
  readonly target: string
}

/** Tools that only read: a memory path in their input is not a write. */
const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  "read",
  "glob",
  "grep",
  "ls",
  "notebookread",
  "webfetch",
  "websearch",
  "read_file",
  "list_dir",
  "list_directory",
  "memory_read",
  "memory_list",
  "view",
  "todowrite",
  "todoread"
])

const SHELL_TOOLS: ReadonlySet<string> = new Set(["bash", "shell", "run_terminal_cmd", "execute_command", "terminal"])

const PATH_KEY = /path|file|dir|destination|target|notebook/i

/** String values under path-like keys of a tool input, nested arrays and objects included (bounded). */
const pathValues = (input: unknown, depth = 0): ReadonlyArray<string> => {
  if (depth > 3 || !isRecord(input)) return []
  const found: Array<string> = []
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === "string" && PATH_KEY.test(key)) found.push(value)
    else if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item === "string" && PATH_KEY.test(key)) found.push(item)
        else found.push(...pathValues(item, depth + 1))
      }
    } else if (isRecord(value)) found.push(...pathValues(value, depth + 1))
  }
  return found
}

/** A shell command that changes files: redirection, tee, cp/mv/rm, in-place sed, touch, mkdir, scripts, … */
const WRITING_COMMAND =
  /(?:^|[^<0-9&])>{1,2}|\btee\b|\b(?:cp|mv|rm|rmdir|touch|mkdir|ln|install|rsync|truncate|dd|unlink)\b|\bsed\s+(?:-[a-zA-Z]*i|--in-place)|\bperl\s+-[a-zA-Z]*i|\b(?:python3?|node|ruby)\b|\bgit\s+(?:mv|rm|checkout|restore|apply|stash|reset)\b/
/** memdir's own commands that write memory. */
const MEMDIR_WRITE_COMMAND = /\bmemdir\s+(?:write|log|rm|forget|dream|extract|doctor\s+[^|;&]*--fix)\b/

export interface MemoryWriteOptions {
  /** The user's home, to recognise `~/…` spellings of the memory directory in shell commands. */
  readonly homeDir?: string | undefined
}

const resolveAgainst = (cwd: string | undefined, candidate: string, homeDir: string | undefined): string => {
  if (homeDir !== undefined && (candidate === "~" || candidate.startsWith("~/"))) {
    return NodePath.join(homeDir, candidate.slice(1))
  }
  return NodePath.resolve(cwd ?? "/", candidate)
}

/** Spellings of the memory directory a shell command may use. */
const memoryDirSpellings = (memoryDir: string, homeDir: string | undefined): ReadonlyArray<string> => {
  const bare = NodePath.resolve(memoryDir)
  const spellings = [bare]
  if (homeDir !== undefined) {
    const home = NodePath.resolve(homeDir)
    if (isInside(home, bare)) {
      const rest = NodePath.sep + NodePath.relative(home, bare)
      spellings.push(`~${rest}`, `$HOME${rest}`, `\${HOME}${rest}`)
    }
  }
  return spellings
}

/** The tool calls among `messages` (assistant turns) that wrote into `memoryDir`. */
export const memoryWritesIn = (
  messages: ReadonlyArray<TranscriptMessage>,
  memoryDir: string,
  options: MemoryWriteOptions = {},
  firstIndex = 0
): ReadonlyArray<MemoryWriteEvidence> => {
  const spellings = memoryDirSpellings(memoryDir, options.homeDir)
  const evidence: Array<MemoryWriteEvidence> = []
  messages.forEach((message, offset) => {
    if (message.role !== "assistant") return
    for (const block of blocksOf(message.content)) {
      if (block.type !== "tool_use" || typeof block.name !== "string") continue
      const tool = block.name
      const lower = tool.toLowerCase()
      const at = { message: firstIndex + offset, line: message.line, tool }
      if (SHELL_TOOLS.has(lower)) {
        const command = isRecord(block.input) ? optionalString(block.input.command) ?? "" : ""
        const touchesMemory = spellings.some((spelling) => command.includes(spelling))
        if (MEMDIR_WRITE_COMMAND.test(command) || (touchesMemory && WRITING_COMMAND.test(command))) {
          evidence.push({ ...at, target: command })
        }
        continue
      }
      // memdir's own MCP tools and the like: a write-ish tool of a memdir server.
      if (/memdir/.test(lower) && /write|edit|delete|remove|forget|remember|log/.test(lower)) {
        evidence.push({ ...at, target: tool })
        continue
      }
      if (READ_ONLY_TOOLS.has(lower) || (lower.startsWith("mcp__") && /read|list|search|get/.test(lower))) continue
      for (const candidate of pathValues(block.input)) {
        const absolute = resolveAgainst(message.cwd, candidate, options.homeDir)
        if (isMemoryPath(memoryDir, absolute)) {
          evidence.push({ ...at, target: absolute })
          break
        }
      }
    }
  })
  return evidence
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering for a model
// ---------------------------------------------------------------------------------------------------------------

export interface RenderOptions {
  /** Characters of one text block at most. */
  readonly maxTextChars?: number | undefined
  /** Characters of one tool input or tool result at most. */
  readonly maxToolChars?: number | undefined
}

export const RENDER_TEXT_MAX_CHARS = 6000
export const RENDER_TOOL_MAX_CHARS = 1200

const cut = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)} [… ${text.length - max} more characters]`

const toolResultText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((part) =>
    isRecord(part) && part.type === "text" && typeof part.text === "string" ? part.text : `[${String(part?.type)}]`
  ).join("\n")
}

/** One message as plain text for the extractor: text in full (bounded), tool calls and results abridged. */
export const renderMessage = (message: TranscriptMessage, index: number, options: RenderOptions = {}): string => {
  const maxText = options.maxTextChars ?? RENDER_TEXT_MAX_CHARS
  const maxTool = options.maxToolChars ?? RENDER_TOOL_MAX_CHARS
  const when = message.timestamp === undefined ? "" : ` ${message.timestamp}`
  const parts = [`[#${index + 1} ${message.role}${when}]`]
  for (const block of blocksOf(message.content)) {
    switch (block.type) {
      case "text":
        parts.push(cut(String(block.text ?? ""), maxText))
        break
      case "tool_use":
        parts.push(`→ ${String(block.name)} ${cut(JSON.stringify(block.input ?? {}), maxTool)}`)
        break
      case "tool_result": {
        const flag = block.is_error === true ? " (error)" : ""
        parts.push(`← result${flag}: ${cut(toolResultText(block.content), maxTool)}`)
        break
      }
      case "thinking":
      case "redacted_thinking":
        break
      default:
        parts.push(`[${block.type}]`)
    }
  }
  return parts.join("\n")
}
