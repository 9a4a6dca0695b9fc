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
 * What memdir adds is marked: one block at the end of the file between `BLOCK_BEGIN` and `BLOCK_END`, or, when the
 * user's file already has a `[sandbox_workspace_write]` table, one line under its header ending in `LINE_MARK`.
 * Uninstall takes out exactly those, so install then uninstall gives a file ending in a newline back byte for byte.
 * What memdir would have to change in the user's own lines (a `writable_roots` of theirs without memdir's root, a
 * table written another way) it leaves alone and names in `notes`, with the line to add.
 */
import { AgentConfigError } from "@memdir/core/Errors"
import * as Toml from "effect/encoding/Toml"
import * as Result from "effect/Result"

export const BLOCK_BEGIN =
  "# >>> memdir: added by `memdir hooks install --agent codex` (`memdir hooks uninstall --agent codex` removes it)"
export const BLOCK_END = "# <<< memdir"
export const LINE_MARK = " # memdir: added by `memdir hooks install --agent codex`"

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

const isInstalled = (text: string) => text.includes(BLOCK_BEGIN) || text.includes(LINE_MARK)

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

/** Pure: the text with memdir's setup added where it is missing (nothing when memdir's marks are already there). */
export const install = (
  path: string,
  text: string | undefined,
  setup: CodexSetup
): Result.Result<CodexConfigChange, AgentConfigError> =>
  Result.map(parseCodexConfig(path, text), (config) => {
    const before = text ?? ""
    if (isInstalled(before)) return { text: before, keys: [], notes: [] }
    const keys: Array<string> = []
    const notes: Array<string> = []
    const block: Array<string> = []
    let next = before
    const sandbox = config.sandbox_workspace_write
    const roots = setup.writableRoots
    if (sandbox === undefined) {
      block.push("[sandbox_workspace_write]", `writable_roots = ${tomlArray(roots)}`)
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
      if (block.length > 0) block.push("")
      block.push(
        "[mcp_servers.memdir]",
        `command = ${tomlString(setup.mcp.command)}`,
        `args = ${tomlArray(setup.mcp.args)}`
      )
      keys.push("mcp_servers.memdir")
    }
    if (block.length > 0) {
      const separator = next === "" ? "" : next.endsWith("\n") ? "\n" : "\n\n"
      next = `${next}${separator}${[BLOCK_BEGIN, ...block, BLOCK_END].join("\n")}\n`
    }
    return { text: next, keys, notes }
  })

/** Pure: the text without what memdir added (its marked block and line), and the blank line it put before the block. */
export const uninstall = (text: string | undefined): CodexConfigChange => {
  let next = text ?? ""
  const keys: Array<string> = []
  const lines = next.split("\n")
  const marked = lines.findIndex((line) => line.endsWith(LINE_MARK))
  if (marked >= 0) {
    lines.splice(marked, 1)
    next = lines.join("\n")
    keys.push("writable_roots")
  }
  const begin = next.indexOf(`${BLOCK_BEGIN}\n`)
  const endMarker = `\n${BLOCK_END}\n`
  const end = begin < 0 ? -1 : next.indexOf(endMarker, begin)
  if (begin >= 0 && (begin === 0 || next[begin - 1] === "\n") && end >= 0) {
    const inner = next.slice(begin, end)
    if (inner.includes("[sandbox_workspace_write]")) keys.push("writable_roots")
    if (inner.includes("[mcp_servers.memdir]")) keys.push("mcp_servers.memdir")
    let start = begin
    // the blank line install put before its block
    if (start >= 2 && next[start - 1] === "\n" && next[start - 2] === "\n") start -= 1
    next = next.slice(0, start) + next.slice(end + endMarker.length)
  }
  return { text: next, keys, notes: [] }
}
