/**
 * Every failure a caller of memdir can act on. Each error carries the context needed to act and a
 * `message` that says what to do. The CLI maps each `_tag` to its own exit code (see `exitCodes`).
 */
import * as Schema from "effect/Schema"
import type { MemoryFsError } from "./MemoryFs.js"

/** A memory file whose frontmatter cannot be read. Reported by the scanner and `doctor`, never fatal to recall. */
export class InvalidFrontmatterError extends Schema.TaggedError<InvalidFrontmatterError>()("InvalidFrontmatterError", {
  path: Schema.String,
  reason: Schema.Literals([
    "missing-frontmatter",
    "unclosed-frontmatter",
    "yaml-error",
    "not-a-map",
    "missing-field",
    "invalid-type",
    "binary",
    "unreadable"
  ]),
  line: Schema.optional(Schema.Number),
  detail: Schema.String
}) {
  override get message(): string {
    const at = this.line === undefined ? "" : `:${this.line}`
    return `${this.path}${at}: ${this.detail} (${this.reason}). Fix the frontmatter between the two '---' lines: ` +
      `name, description and type (user | feedback | project | reference).`
  }
}

/** A memory-directory override (env, flag or trusted setting) that memdir refuses to use. */
export class InvalidMemoryDirError extends Schema.TaggedError<InvalidMemoryDirError>()("InvalidMemoryDirError", {
  source: Schema.String,
  value: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `memory directory from ${this.source} is invalid: ${JSON.stringify(this.value)} (${this.reason}). ` +
      `Use an absolute path or ~/…, not a filesystem root, ~ alone or ~/..`
  }
}

/** A settings file that exists but cannot be read, is not a JSON object, or gives a known `key` the wrong type. */
export class SettingsError extends Schema.TaggedError<SettingsError>()("SettingsError", {
  path: Schema.String,
  key: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    const at = this.key === undefined ? "" : ` (key ${JSON.stringify(this.key)})`
    return `settings file ${this.path}${at}: ${this.detail}. Fix or remove it.`
  }
}

/** Adding an entry would push MEMORY.md over its caps (200 lines / 25,000 bytes). Nothing was written. */
export class IndexOverCapError extends Schema.TaggedError<IndexOverCapError>()("IndexOverCapError", {
  path: Schema.String,
  lines: Schema.Number,
  bytes: Schema.Number,
  maxLines: Schema.Number,
  maxBytes: Schema.Number
}) {
  override get message(): string {
    return `${this.path} would hold ${this.lines} lines / ${this.bytes} bytes (limit: ${this.maxLines} lines / ` +
      `${this.maxBytes} bytes); nothing was written. Shorten or merge entries (\`memdir doctor\`), ` +
      `or consolidate memories into fewer files.`
  }
}

/** Input to `write` (or the CLI) that memdir refuses: unknown type, empty name, multi-line description… */
export class InvalidMemoryInputError extends Schema.TaggedError<InvalidMemoryInputError>()("InvalidMemoryInputError", {
  field: Schema.String,
  value: Schema.String,
  reason: Schema.String,
  /**
   * Which rule of the memory store refused a file key, when one did: `not-markdown`, `index-file`, `hidden`
   * (memdir's own state: locks, cursors, `.dream/`, `.team.git/`), `logs-append-only`, `too-large`; or which limit
   * of every write a memory broke: `name-too-long` (over `NAME_MAX_LENGTH`), `empty-body`.
   */
  rule: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `invalid ${this.field} ${JSON.stringify(this.value)}: ${this.reason}`
  }
}

/** A memory file that does not exist. */
export class MemoryNotFoundError extends Schema.TaggedError<MemoryNotFoundError>()("MemoryNotFoundError", {
  path: Schema.String
}) {
  override get message(): string {
    return `no memory at ${this.path}. List memories with \`memdir ls\`.`
  }
}

/** A path or key that would leave the memory (or team) directory. Fails closed. */
export class PathTraversalError extends Schema.TaggedError<PathTraversalError>()("PathTraversalError", {
  key: Schema.String,
  reason: Schema.Literals([
    "null-byte",
    "encoded-traversal",
    "unicode-traversal",
    "backslash",
    "absolute",
    "escapes-root",
    "symlink-escape",
    "dangling-symlink",
    "symlink-loop",
    "unverifiable",
    "not-regular-file",
    "too-large",
    "case-alias",
    "leaves-team"
  ]),
  /** What exactly was refused (e.g. where a symlink points), when there is more to say than the reason. */
  detail: Schema.optional(Schema.String)
}) {
  override get message(): string {
    const detail = this.detail === undefined ? "" : ` (${this.detail})`
    return `refused path ${
      JSON.stringify(this.key)
    }: ${this.reason}${detail}. Memory paths must stay inside the memory directory.`
  }
}

/**
 * Who decided a switch (auto memory, team memory, automatic model calls), as it reads in a sentence: the
 * `enabledBy` of a location ("env MEMDIR_TEAM_MEMORY", "user settings /…/settings.json"), "default" as "the default".
 */
export const switchSourceText = (source: string): string => source === "default" ? "the default" : source

/** A settings file that decided a switch: `<source> settings <path>` (MemoryPaths, teamSwitch). */
const settingsSource = (source: string): { readonly kind: string; readonly path: string } | undefined => {
  const match = /^(policy|project|local|user) settings (.+)$/.exec(source)
  return match === null ? undefined : { kind: match[1]!, path: match[2]! }
}

/** How to turn auto memory back on, for what turned it off: a setting never overrides the variables. */
const autoMemoryHowTo = (source: string): string => {
  if (source === "env MEMDIR_DISABLE_AUTO_MEMORY") {
    return "Unset MEMDIR_DISABLE_AUTO_MEMORY to turn it on; no setting overrides it."
  }
  if (source === "env MEMDIR_SIMPLE") return "Unset MEMDIR_SIMPLE, or set MEMDIR_DISABLE_AUTO_MEMORY=0 to force it on."
  if (source.startsWith("env MEMDIR_REMOTE ")) {
    return "Set MEMDIR_REMOTE_MEMORY_DIR to the directory memory should live in, or unset MEMDIR_REMOTE."
  }
  const settings = settingsSource(source)
  if (settings !== undefined) {
    return `Set "autoMemoryEnabled": true in ${settings.path}, or MEMDIR_DISABLE_AUTO_MEMORY=0 to force it on.`
  }
  return `Unset MEMDIR_DISABLE_AUTO_MEMORY or set "autoMemoryEnabled": true in your settings.`
}

/** Auto memory is disabled by the enable chain; `source` names who disabled it, the message how to undo it. */
export class MemoryDisabledError extends Schema.TaggedError<MemoryDisabledError>()("MemoryDisabledError", {
  source: Schema.String
}) {
  override get message(): string {
    return `auto memory is disabled (${switchSourceText(this.source)}). ${autoMemoryHowTo(this.source)}`
  }
}

/** Another process held a memdir lock for longer than we were willing to wait. */
export class LockTimeoutError extends Schema.TaggedError<LockTimeoutError>()("LockTimeoutError", {
  path: Schema.String,
  waitedMs: Schema.Number,
  holder: Schema.optional(Schema.String)
}) {
  override get message(): string {
    const by = this.holder === undefined ? "" : ` (held by pid ${this.holder})`
    return `timed out after ${this.waitedMs} ms waiting for lock ${this.path}${by}. ` +
      `If no memdir process is running, remove it (\`rm -r\` the lock directory).`
  }
}

/**
 * What the system's refusal means and what to do, for the errno codes a user can act on (docs/cli.md#exit-codes);
 * any other code gets the generic advice.
 */
const ioCauses: Readonly<Record<string, { readonly cause: string; readonly fix: string }>> = {
  EROFS: {
    cause: "the file system is read-only",
    fix: "remount it read-write, or give memdir a writable memory directory (--memory-dir or MEMDIR_MEMORY_DIR)"
  },
  ENOSPC: { cause: "the disk is full", fix: "free space on it, then run the command again" },
  EDQUOT: { cause: "the disk quota is used up", fix: "free space within your quota, then run the command again" },
  EACCES: {
    cause: "permission denied",
    fix: "this user may not write there: fix the owner or mode of the memory directory (it should be yours, 0700)"
  },
  EPERM: {
    cause: "operation not permitted",
    fix: "fix the owner or mode of the memory directory (it should be yours, 0700), or its immutable flag"
  },
  ENOTDIR: {
    cause: "a file is where a directory should be",
    fix: "the memory directory and the directories above it must be directories: move the file away, or give " +
      "another memory directory (--memory-dir or MEMDIR_MEMORY_DIR)"
  }
}

/** What an errno code means and what to do about it, when memdir knows (else `undefined`: the generic advice). */
export const ioCauseOf = (code: string | undefined): { readonly cause: string; readonly fix: string } | undefined =>
  code === undefined ? undefined : ioCauses[code]

/** The errno code (`EROFS`, `ENOSPC`, …) of a refused system call: the `code` of the Node error kept as `cause`. */
export const errnoCodeOf = (error: { readonly cause?: unknown }): string | undefined => {
  const code = typeof error.cause === "object" && error.cause !== null && "code" in error.cause ?
    error.cause.code :
    undefined
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined
}

/** A file-system failure memdir cannot recover from (permissions, disk full, …). */
export class MemoryIoError extends Schema.TaggedError<MemoryIoError>()("MemoryIoError", {
  op: Schema.String,
  path: Schema.String,
  detail: Schema.String,
  /** The errno code when the system refused (`EROFS`, `ENOSPC`, `EACCES`, `ENOTDIR`, …): it names the cause. */
  code: Schema.optional(Schema.String)
}) {
  override get message(): string {
    const known = ioCauseOf(this.code)
    if (known !== undefined) return `${this.op} ${this.path} failed: ${known.cause} (${this.code}); ${known.fix}.`
    return `${this.op} ${this.path} failed: ${this.detail.replace(/\.$/, "")}. Check permissions and free space.`
  }
}

/** A prompt section variant that does not exist (e.g. a typo in an eval's variant name). */
export class UnknownPromptVariantError extends Schema.TaggedError<UnknownPromptVariantError>()(
  "UnknownPromptVariantError",
  {
    section: Schema.String,
    variant: Schema.String,
    known: Schema.Array(Schema.String)
  }
) {
  override get message(): string {
    const known = this.known.length === 0 ? "none (there is no such section)" : this.known.join(", ")
    return `no prompt variant ${JSON.stringify(this.variant)} for section ${JSON.stringify(this.section)}. ` +
      `Known variants: ${known}.`
  }
}

/** A model call that failed; `kind` says what to do (see `message`). Offline paths never produce it. */
export class ModelError extends Schema.TaggedError<ModelError>()("ModelError", {
  kind: Schema.Literals([
    "not-configured",
    "authentication",
    "permission",
    "invalid-request",
    "not-found",
    "rate-limited",
    "overloaded",
    "server",
    "timeout",
    "connection",
    "malformed-output"
  ]),
  role: Schema.String,
  model: Schema.String,
  status: Schema.optional(Schema.Number),
  detail: Schema.String
}) {
  override get message(): string {
    const what: Record<ModelError["kind"], string> = {
      "not-configured": "no model is configured: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL)",
      authentication: "the API key was refused: check ANTHROPIC_API_KEY",
      permission: "the key may not use this model: pick another with MEMDIR_MODEL_<ROLE>",
      "invalid-request": "the request was refused as invalid: report it with the detail",
      "not-found": "unknown model or endpoint: check MEMDIR_MODEL_<ROLE> and ANTHROPIC_BASE_URL",
      "rate-limited": "rate limited even after retries: slow down or raise MEMDIR_MODEL_MAX_RETRIES",
      overloaded: "the API is overloaded even after retries: try again later",
      server: "the API failed even after retries: try again later",
      timeout: "the model did not answer in time: raise MEMDIR_MODEL_TIMEOUT",
      connection: "could not reach the API: check ANTHROPIC_BASE_URL and the network",
      "malformed-output": "the model's answer did not match the expected shape"
    }
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `${this.role} model ${this.model}${status}: ${what[this.kind]}. ${this.detail}`.trim()
  }
}

/** How to turn team memory on, for what turned it off (the team switch's chain, docs/team-memory.md). */
const teamMemoryHowTo = (source: string): string => {
  if (source === "env MEMDIR_TEAM_MEMORY") return "Set MEMDIR_TEAM_MEMORY=1, or unset it to let your settings decide."
  const settings = settingsSource(source)
  if (settings?.kind === "policy") {
    return "The policy file decides for everyone; only MEMDIR_TEAM_MEMORY=1 overrides it."
  }
  if (settings?.kind === "project") {
    return `The project opted out: remove "teamMemory": false from ${settings.path}, or set MEMDIR_TEAM_MEMORY=1.`
  }
  if (settings !== undefined) return `Set "teamMemory": true in ${settings.path}, or MEMDIR_TEAM_MEMORY=1.`
  return `Turn it on with "teamMemory": true in your user or local settings, or MEMDIR_TEAM_MEMORY=1 ` +
    `(auto memory must be on too).`
}

/**
 * Team memory is off for this project; `source` names the link of the team switch that decided (docs/team-memory.md).
 */
export class TeamMemoryDisabledError extends Schema.TaggedError<TeamMemoryDisabledError>()("TeamMemoryDisabledError", {
  source: Schema.String
}) {
  override get message(): string {
    return `team memory is off (${switchSourceText(this.source)}). ${teamMemoryHowTo(this.source)}`
  }
}

/** A team file that looks like it holds a secret (private key, cloud or API token…): never written, committed or pushed. */
export class SecretDetectedError extends Schema.TaggedError<SecretDetectedError>()("SecretDetectedError", {
  path: Schema.String,
  pattern: Schema.String,
  line: Schema.optional(Schema.Number),
  /** What memdir refused to do with the file. */
  action: Schema.Literals(["write", "sync"])
}) {
  override get message(): string {
    const at = this.line === undefined ? "" : `:${this.line}`
    const refused = this.action === "write" ? "memdir did not write it" : "nothing was committed or pushed"
    return `${this.path}${at} looks like it holds a secret (${this.pattern}); ${refused}. Remove the secret ` +
      `(and rotate it if it was ever shared), then try again.`
  }
}

/** A team sync git could not complete: no remote configured, remote unreachable, push refused after retries… */
export class TeamSyncError extends Schema.TaggedError<TeamSyncError>()("TeamSyncError", {
  step: Schema.String,
  remote: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    // before any remote is used (none set, or one git would misread): nothing was fetched, merged or pushed
    if (this.step === "configure") return `team sync cannot start: ${this.detail}.`
    return `team sync with ${JSON.stringify(this.remote)} failed at ${this.step}: ${this.detail}. Nothing incoming ` +
      `was merged; run \`memdir team sync\` again once the cause is fixed.`
  }
}

/**
 * A team update refused whole because some entry fails the guard (symlink, submodule, traversal name, oversized
 * file, likely secret…): nothing was merged (incoming) or pushed (outgoing), the working tree is untouched.
 */
export class TeamSyncRejectedError extends Schema.TaggedError<TeamSyncRejectedError>()("TeamSyncRejectedError", {
  direction: Schema.Literals(["incoming", "outgoing"]),
  remote: Schema.String,
  /** The commit that was refused. */
  commit: Schema.String,
  violations: Schema.Array(Schema.Struct({ path: Schema.String, reason: Schema.String, detail: Schema.String }))
}) {
  override get message(): string {
    const shown = this.violations.slice(0, 5).map((v) => `${v.path}: ${v.reason} (${v.detail})`).join("; ")
    const more = this.violations.length > 5 ? `; and ${this.violations.length - 5} more` : ""
    const what = this.direction === "incoming"
      ? `refused the incoming team update ${this.commit.slice(0, 12)} from ${JSON.stringify(this.remote)}; nothing ` +
        `was merged`
      : `refused to push local team changes; nothing was pushed`
    return `${what}: ${shown}${more}. Ask whoever committed it to remove these entries (\`memdir team audit\` ` +
      `checks the local copy).`
  }
}

/** An agent's hook configuration file (`~/.claude/settings.json`, `~/.codex/hooks.json`, …) memdir will not edit. */
export class AgentConfigError extends Schema.TaggedError<AgentConfigError>()("AgentConfigError", {
  path: Schema.String,
  /** Where in the file, as a JSON pointer-ish path (`hooks.Stop[0].hooks`), or "" for the whole file. */
  at: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    const at = this.at === "" ? "" : ` at ${this.at}`
    return `agent configuration ${this.path}${at}: ${this.detail}. Nothing was written: fix the file (or move it ` +
      `away) and run the command again.`
  }
}

/**
 * A write given the version of the memory it was based on (`ifVersion`, the MCP tools' `if_version`) found another
 * text there: someone changed (or removed) the memory since it was read. Checked under the write's lock; nothing
 * was written. `current`/`content` are the memory's version and text now (null: it no longer exists).
 */
export class VersionConflictError extends Schema.TaggedError<VersionConflictError>()("VersionConflictError", {
  path: Schema.String,
  expected: Schema.String,
  current: Schema.NullOr(Schema.String),
  content: Schema.NullOr(Schema.String),
  /** `edit`: the memory changed between an edit's read and its write (the edit was not given a version). */
  operation: Schema.optional(Schema.Literals(["write", "edit"]))
}) {
  override get message(): string {
    if (this.operation === "edit") {
      return this.current === null ?
        `${this.path} was removed while it was being edited; nothing was written.` :
        `${this.path} changed while it was being edited (another writer); nothing was written. Read it again and ` +
        `redo the edit on its current text.`
    }
    return this.current === null ?
      `${this.path} no longer exists (if_version ${this.expected} was given). Write without if_version to ` +
      `create it again.` :
      `${this.path} changed since version ${this.expected}: its version is now ${this.current}. Nothing was ` +
      `written. Merge your change into the current content below and retry with if_version ${this.current}.`
  }
}

/**
 * An edit's text to replace (`old`) does not name one place: it does not occur, occurs several times without
 * `replaceAll`, or the replacement is the same text. Nothing was changed.
 */
export class EditMatchError extends Schema.TaggedError<EditMatchError>()("EditMatchError", {
  path: Schema.String,
  reason: Schema.Literals(["no-match", "multiple-matches", "no-change"]),
  /** Occurrences of the text to replace in the memory. */
  count: Schema.Number
}) {
  override get message(): string {
    switch (this.reason) {
      case "no-match":
        return `the text to replace does not occur in ${this.path}; nothing was changed. Read the memory again and ` +
          `copy the text exactly (spaces and line breaks too).`
      case "multiple-matches":
        return `the text to replace occurs ${this.count} times in ${this.path}; it must occur exactly once. Nothing ` +
          `was changed: include more surrounding text so it names one place, or replace all ${this.count}.`
      case "no-change":
        return `the replacement is the text it replaces; nothing was changed in ${this.path}. Give the new text.`
    }
  }
}

/** A rename onto a memory that already exists. Nothing was renamed. */
export class PathExistsError extends Schema.TaggedError<PathExistsError>()("PathExistsError", {
  path: Schema.String
}) {
  override get message(): string {
    return `${this.path} already exists; nothing was renamed. Delete it first or choose another new path.`
  }
}

/**
 * A memory-tool command (`memory_20250818`) the backend answers with an error result. `message` is exactly the text
 * the SDK's reference backend (`BetaLocalFilesystemMemoryTool`) gives for the same case, so a model sees the same
 * thing; the memdir-only reasons say what memdir refuses and what to do instead (docs/memory-tool.md). It is a tool
 * result, never a CLI exit.
 */
export class MemoryToolError extends Schema.TaggedError<MemoryToolError>()("MemoryToolError", {
  reason: Schema.Literals([
    "not-under-memories",
    "escapes-memories",
    "leaves-team",
    "symlink-escape",
    "not-found",
    "already-exists",
    "not-a-file",
    "no-match",
    "multiple-matches",
    "invalid-insert-line",
    "too-many-lines",
    "unsupported-file-type",
    "delete-root",
    "rename-root",
    "destination-exists",
    "directory-refused",
    "unknown-command",
    "invalid-input"
  ]),
  /** The path as the model gave it (`/memories/...`), or the command name for `unknown-command`. */
  path: Schema.String,
  /** The command, for the messages that name it. */
  command: Schema.optional(Schema.String),
  /** What the message quotes: the old_str, the matching lines, the insert line and line count, the destination. */
  detail: Schema.optional(Schema.String),
  /** The line numbers (several matches) or `[insert_line, lines]` (a bad insert line). */
  numbers: Schema.optional(Schema.Array(Schema.Number))
}) {
  override get message(): string {
    const detail = this.detail ?? ""
    const numbers = this.numbers ?? []
    switch (this.reason) {
      case "not-under-memories":
        return `Path must start with /memories, got: ${this.path}`
      case "escapes-memories":
        return `Path ${this.path} would escape /memories directory`
      case "leaves-team":
        return `Path ${this.path} leaves /memories/team: a team path must name a file inside /memories/team ` +
          "(no .. out of it), or give a path outside /memories/team for private memory"
      case "symlink-escape":
        return "Path would escape /memories directory via symlink"
      case "not-found":
        // view, str_replace and insert ask for a valid path; delete and rename only say it is missing
        return this.command === "delete" || this.command === "rename" ?
          `The path ${this.path} does not exist` :
          `The path ${this.path} does not exist. Please provide a valid path.`
      case "already-exists":
        return `File ${this.path} already exists`
      case "not-a-file":
        return `The path ${this.path} is not a file.`
      case "no-match":
        return `No replacement was performed, old_str \`${detail}\` did not appear verbatim in ${this.path}.`
      case "multiple-matches":
        return `No replacement was performed. Multiple occurrences of old_str \`${detail}\` in lines: ${
          numbers.join(", ")
        }. Please ensure it is unique`
      case "invalid-insert-line":
        return `Invalid \`insert_line\` parameter: ${
          numbers[0]
        }. It should be within the range of lines of the file: [0, ${numbers[1]}]`
      case "too-many-lines":
        return `File ${this.path} has too many lines (${numbers[0]}). Maximum is ${
          (numbers[1] ?? 0).toLocaleString()
        } lines.`
      case "unsupported-file-type":
        return `Unsupported file type for ${this.path}`
      case "delete-root":
        return "Cannot delete the /memories directory itself"
      case "rename-root":
        return "Cannot rename the /memories directory itself"
      case "destination-exists":
        return `The destination ${this.path} already exists`
      case "directory-refused":
        return `${this.path} cannot be ${this.command === "rename" ? "renamed" : "deleted"} whole: ${detail}`
      case "unknown-command":
        // the SDK's own text for a command it has no handler for (helpers/beta/memory.ts)
        return `${this.path} not implemented`
      case "invalid-input":
        return `invalid memory tool input: ${detail}. Give {"command": "view" | "create" | "str_replace" | ` +
          `"insert" | "delete" | "rename", ...} with the fields of that command, paths under /memories`
    }
  }
}

export type MemdirError =
  | InvalidFrontmatterError
  | InvalidMemoryDirError
  | SettingsError
  | IndexOverCapError
  | InvalidMemoryInputError
  | MemoryNotFoundError
  | PathTraversalError
  | MemoryDisabledError
  | LockTimeoutError
  | MemoryIoError
  | UnknownPromptVariantError
  | ModelError
  | TeamMemoryDisabledError
  | SecretDetectedError
  | TeamSyncError
  | TeamSyncRejectedError
  | AgentConfigError
  | VersionConflictError
  | EditMatchError
  | PathExistsError

/** The CLI's exit code for each error (documented in the README). 1 is reserved for defects. */
export const exitCodes: Record<MemdirError["_tag"], number> = {
  InvalidMemoryInputError: 2,
  InvalidFrontmatterError: 3,
  InvalidMemoryDirError: 4,
  SettingsError: 5,
  IndexOverCapError: 6,
  MemoryNotFoundError: 7,
  PathTraversalError: 8,
  MemoryDisabledError: 9,
  LockTimeoutError: 10,
  MemoryIoError: 11,
  UnknownPromptVariantError: 12,
  ModelError: 13,
  TeamMemoryDisabledError: 14,
  SecretDetectedError: 15,
  TeamSyncError: 16,
  TeamSyncRejectedError: 17,
  AgentConfigError: 18,
  VersionConflictError: 19,
  // 20 and 21 are doctor's and team audit's findings
  EditMatchError: 22,
  PathExistsError: 23
}

/**
 * A `MemoryFsError` of memdir's own state (a log, a cursor, a lock, a snapshot: not a memory file the user names) as
 * the `MemoryIoError` a caller acts on: `op` says what memdir was doing, the errno code is kept.
 */
export const ioErrorOf = (op: string, path?: string) => (error: MemoryFsError): MemoryIoError =>
  new MemoryIoError({
    op,
    path: path ?? error.path,
    detail: `${error.reason} (${error.detail})`,
    code: errnoCodeOf(error)
  })

/** The file (or a directory on its path) is not there. */
export const isMissingFile = (error: MemoryFsError): boolean => error.reason === "NotFound"

export interface FromMemoryFsErrorOptions {
  /** The path `MemoryNotFoundError` names (default: the key). */
  readonly notFoundPath?: string | undefined
  /** A directory where a memory file was expected is an I/O failure (a write onto it), not a refusal. */
  readonly directoryIsIo?: boolean | undefined
}

/**
 * The one mapping of a `MemoryFsError` (a read or write of a memory file under `key`) into what the caller can
 * act on: not found, a refusal naming why (a link, not a regular file, too large, escaping, unverifiable), or an
 * I/O failure.
 */
export const fromMemoryFsError = (key: string, options: FromMemoryFsErrorOptions = {}) =>
(
  error: MemoryFsError
): PathTraversalError | MemoryNotFoundError | MemoryIoError => {
  const refuse = (reason: PathTraversalError["reason"], detail: string) =>
    new PathTraversalError({ key, reason, detail })
  switch (error.reason) {
    case "NotFound":
      return new MemoryNotFoundError({ path: options.notFoundPath ?? key })
    case "SymbolicLink":
      return refuse("not-regular-file", "a symbolic link")
    case "NotRegularFile":
      if (options.directoryIsIo === true && error.detail === "a directory") {
        return new MemoryIoError({ op: error.op, path: error.path, detail: "is a directory, not a memory file" })
      }
      return refuse("not-regular-file", error.detail)
    case "TooLarge":
      return refuse("too-large", error.detail)
    case "Escapes":
      return refuse("symlink-escape", error.detail)
    case "SymlinkLoop":
      return refuse("symlink-loop", `${error.path}: ${error.detail}`)
    case "DanglingSymlink":
      return refuse("dangling-symlink", `${error.path} ${error.detail}`)
    case "Changed":
    case "NotDirectory":
      return refuse("unverifiable", `${error.path}: ${error.detail}`)
    default:
      return new MemoryIoError({
        op: error.op,
        path: error.path,
        detail: `${error.reason} (${error.detail})`,
        code: errnoCodeOf(error)
      })
  }
}
