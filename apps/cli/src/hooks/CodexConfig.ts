/**
 * What `memdir hooks install --agent codex` adds to Codex's `config.toml` beside its hooks (docs/hooks.md#codex-memory-and-mcp),
 * as pure functions over the file's text, so that the user's own file keeps every byte memdir did not add:
 *
 * - `[sandbox_workspace_write] writable_roots`: memdir's memory base, so that a session in Codex's default
 *   workspace-write sandbox can write memdir's memory (outside the workspace) with its file tools, as memdir's rules
 *   tell the model to. Codex sandboxes the commands and patches its model runs; a root it does not list is read-only.
 * - `[mcp_servers.memdir]`: memdir's MCP server (`memdir mcp`, docs/mcp.md). Codex starts MCP servers outside its
 *   sandbox, so its tools write memory whatever the sandbox.
 *
 * What memdir adds is marked line by line: each line ends in `LINE_MARK` (its tables at the end of the file, or one
 * `writable_roots` line under the user's own `[sandbox_workspace_write]` header). Not a block between two comments:
 * Codex edits this file itself (hook trust, trusted folders, `codex mcp add`, its TUI's state) and puts new tables
 * at the end, above a trailing comment, so they would land inside such a block and go with it. Uninstall takes out
 * exactly the marked lines, memdir's `[mcp_servers.memdir]` table whole (with what Codex may have added to it; known
 * by its `env_vars` once Codex has rewritten it without the marks), and the blank line install put before each of its
 * tables: install then uninstall gives a file ending in a newline back
 * byte for byte, and whatever Codex or the user added meanwhile stays. A file from an earlier install, with the
 * block between `BLOCK_BEGIN` and `BLOCK_END`, is taken out the same way, keeping what Codex put inside the block.
 * What memdir would have to change in the user's own lines (a `writable_roots` of theirs without memdir's root, a
 * table written another way) it leaves alone and names in `notes`, with the line to add.
 *
 * Codex starts an MCP server with a few variables only (HOME, PATH…), where hooks get the whole environment: the
 * server's `env_vars` pass on those that choose memdir's directory, its switches and its model, so that the hooks and
 * the MCP server use the same memory.
 */
import { AgentConfigError } from "@memdir/core/Errors"
import * as Toml from "effect/encoding/Toml"
import * as Result from "effect/Result"

/** The block an earlier install wrote (uninstall still takes it out). */
export const BLOCK_BEGIN =
  "# >>> memdir: added by `memdir hooks install --agent codex` (`memdir hooks uninstall --agent codex` removes it)"
export const BLOCK_END = "# <<< memdir"
export const LINE_MARK = " # memdir: added by `memdir hooks install --agent codex`"

/** The variables Codex passes on to memdir's MCP server (`env_vars`): those its hooks read too. */
export const MCP_ENV_VARS: ReadonlyArray<string> = [
  "MEMDIR_HOME",
  "MEMDIR_MEMORY_DIR",
  "MEMDIR_DISABLE_AUTO_MEMORY",
  "MEMDIR_TEAM_MEMORY",
  "MEMDIR_SIMPLE",
  "MEMDIR_POLICY_FILE",
  "MEMDIR_REMOTE",
  "MEMDIR_REMOTE_MEMORY_DIR",
  "MEMDIR_AUTOMATIC_MODEL_CALLS",
  "MEMDIR_MODEL_SELECTOR",
  "MEMDIR_MODEL_TIMEOUT",
  "MEMDIR_MODEL_MAX_RETRIES",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL"
]

/** What memdir sets up in Codex's config. */
export interface CodexSetup {
  /** Absolute directories the workspace-write sandbox may write: memdir's memory base (and a memory dir elsewhere). */
  readonly writableRoots: ReadonlyArray<string>
  /** The MCP server's command and arguments (`memdir mcp`). */
  readonly mcp: { readonly command: string; readonly args: ReadonlyArray<string> }
}

export interface CodexConfigChange {
  readonly text: string
  /** What was added (install) or removed (uninstall): `writable_roots`, `mcp_servers.memdir`. */
  readonly keys: ReadonlyArray<string>
  /** What memdir left to the user, each with what to do. */
  readonly notes: ReadonlyArray<string>
}

/** TOML basic strings take JSON's escapes. */
const tomlString = (value: string) => JSON.stringify(value)
const tomlArray = (values: ReadonlyArray<string>) => `[${values.map(tomlString).join(", ")}]`

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const SANDBOX_HEADER = /^[ \t]*\[[ \t]*sandbox_workspace_write[ \t]*\][ \t]*(?:#.*)?$/m

/** Parses `config.toml` (absent or empty: `{}`); a file Codex could not read either is refused, named. */
export const parseCodexConfig = (
  path: string,
  text: string | undefined
): Result.Result<Record<string, unknown>, AgentConfigError> =>
  text === undefined || text.trim() === ""
    ? Result.succeed({})
    : Result.mapError(
      Toml.parse(text),
      (error) => new AgentConfigError({ path, at: "", detail: `not valid TOML (${error.message.split("\n")[0]})` })
    )

/** Pure: the text with memdir's setup added where it is missing (nothing when both pieces are there already). */
export const install = (
  path: string,
  text: string | undefined,
  setup: CodexSetup
): Result.Result<CodexConfigChange, AgentConfigError> =>
  Result.map(parseCodexConfig(path, text), (config) => {
    // each piece on its own: one the user removed (`codex mcp remove memdir`) comes back, the other stays as it is
    const before = text ?? ""
    const keys: Array<string> = []
    const notes: Array<string> = []
    /** memdir's tables, each a list of lines, marked when written. */
    const tables: Array<ReadonlyArray<string>> = []
    let next = before
    const sandbox = config.sandbox_workspace_write
    const roots = setup.writableRoots
    if (sandbox === undefined) {
      tables.push(["[sandbox_workspace_write]", `writable_roots = ${tomlArray(roots)}`])
      keys.push("writable_roots")
    } else {
      const theirs = isObject(sandbox) ? sandbox.writable_roots : undefined
      const header = SANDBOX_HEADER.exec(before)
      if (theirs === undefined && header !== null) {
        const at = header.index + header[0].length
        next = `${before.slice(0, at)}\nwritable_roots = ${tomlArray(roots)}${LINE_MARK}${before.slice(at)}`
        keys.push("writable_roots")
      } else {
        const listed = Array.isArray(theirs) ? theirs : []
        const missing = roots.filter((root) => !listed.includes(root))
        if (missing.length > 0) {
          notes.push(
            `Codex's sandbox cannot write memdir's memory yet: add ${
              missing.map(tomlString).join(", ")
            } to writable_roots under [sandbox_workspace_write] in ${path} (memdir leaves your own lines as they are)`
          )
        }
      }
    }
    const servers = config.mcp_servers
    if (!(isObject(servers) && servers.memdir !== undefined)) {
      tables.push([
        "[mcp_servers.memdir]",
        `command = ${tomlString(setup.mcp.command)}`,
        `args = ${tomlArray(setup.mcp.args)}`,
        `env_vars = ${tomlArray(MCP_ENV_VARS)}`
      ])
      keys.push("mcp_servers.memdir")
    }
    for (const table of tables) {
      // a blank line before each table (none at the top of an empty file): uninstall takes it out with the table
      const separator = next === "" ? "" : next.endsWith("\n") ? "\n" : "\n\n"
      next = `${next}${separator}${table.map((line) => line + LINE_MARK).join("\n")}\n`
    }
    return { text: next, keys, notes }
  })

const TABLE_HEADER = /^[ \t]*\[/
const MEMDIR_SERVER_HEADER = /^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*memdir[ \t]*\]/
const isBlank = (line: string) => line.trim() === ""

/**
 * An earlier install's block, marked the way install marks lines now: its begin and end lines dropped, memdir's own
 * tables and keys in it marked; anything else inside (what Codex added) unmarked.
 */
const markOldBlock = (lines: Array<string>): Array<string> => {
  const begin = lines.indexOf(BLOCK_BEGIN)
  const end = begin < 0 ? -1 : lines.indexOf(BLOCK_END, begin)
  if (begin < 0 || end < 0) return lines
  let table: "sandbox" | "memdir" | "other" = "other"
  const inner = lines.slice(begin + 1, end).map((line) => {
    if (TABLE_HEADER.test(line)) {
      table = SANDBOX_HEADER.test(line) ? "sandbox" : MEMDIR_SERVER_HEADER.test(line) ? "memdir" : "other"
      return table === "other" ? line : line + LINE_MARK
    }
    const ours = (table === "sandbox" && /^\s*writable_roots\s*=/.test(line)) ||
      (table === "memdir" && /^\s*(command|args)\s*=/.test(line))
    return ours ? line + LINE_MARK : line
  })
  // the begin and end lines go; the blank line before the block stays, to go with the first table as install's does
  return [...lines.slice(0, begin), ...inner, ...lines.slice(end + 1)]
}

/**
 * memdir's MCP server after Codex rewrote it: `codex mcp add` and the like write every `[mcp_servers.*]` table anew,
 * without comments, so memdir's marks on its server are gone. It is still memdir's when its `env_vars` are exactly
 * the ones install writes (`MCP_ENV_VARS`: no one writes that list by hand); its header is marked again.
 */
const markMemdirServer = (text: string, lines: Array<string>): Array<string> => {
  const parsed = Toml.parse(text)
  if (Result.isFailure(parsed)) return lines
  const servers = parsed.success.mcp_servers
  const server = isObject(servers) ? servers.memdir : undefined
  const envVars = isObject(server) ? server.env_vars : undefined
  const ours = Array.isArray(envVars) && envVars.length === MCP_ENV_VARS.length &&
    envVars.every((name, i) => name === MCP_ENV_VARS[i])
  return ours
    ? lines.map((line) => MEMDIR_SERVER_HEADER.test(line) && !line.endsWith(LINE_MARK) ? line + LINE_MARK : line)
    : lines
}

/**
 * Pure: the text without what memdir added: its marked lines; its `[mcp_servers.memdir]` table whole (what Codex or
 * the user put in it belongs to memdir's server); a marked `[sandbox_workspace_write]` header only when nothing of
 * the user's is left under it (else the header stays, unmarked); and the blank line before each table it removes.
 */
export const uninstall = (text: string | undefined): CodexConfigChange => {
  const keys = new Set<string>()
  const lines = markMemdirServer(text ?? "", markOldBlock((text ?? "").split("\n")))
  const out: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (!line.endsWith(LINE_MARK)) {
      out.push(line)
      continue
    }
    const bare = line.slice(0, -LINE_MARK.length)
    if (!TABLE_HEADER.test(bare)) {
      // a marked key: writable_roots under the user's header, or one of memdir's tables' keys
      if (/^\s*writable_roots\s*=/.test(bare)) keys.add("writable_roots")
      continue
    }
    // a marked table: its body runs to the next table header (comments and blank lines before that belong to it)
    let end = i + 1
    while (end < lines.length && !TABLE_HEADER.test(lines[end]!)) end++
    let last = end - 1
    while (last > i && (isBlank(lines[last]!) || /^\s*#/.test(lines[last]!))) last--
    const body = lines.slice(i + 1, last + 1)
    const memdirServer = MEMDIR_SERVER_HEADER.test(bare)
    const theirs = body.filter((l) => !l.endsWith(LINE_MARK) && !isBlank(l) && !/^\s*#/.test(l))
    if (memdirServer) keys.add("mcp_servers.memdir")
    else if (body.some((l) => /^\s*writable_roots\s*=/.test(l) && l.endsWith(LINE_MARK))) keys.add("writable_roots")
    if (!memdirServer && theirs.length > 0) {
      // the user's (or Codex's) keys under memdir's sandbox header: the header stays, memdir's lines go
      out.push(bare, ...body.filter((l) => !l.endsWith(LINE_MARK)))
    } else if (out.length > 0 && isBlank(out[out.length - 1]!)) {
      // the blank line install put before the table
      out.pop()
    }
    i = last
  }
  return { text: out.join("\n"), keys: [...keys], notes: [] }
}
