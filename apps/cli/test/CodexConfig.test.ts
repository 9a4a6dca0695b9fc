import { assert, describe, it } from "@effect/vitest"
import * as Toml from "effect/encoding/Toml"
import * as Result from "effect/Result"
import * as CodexConfig from "../src/hooks/CodexConfig.js"

const setup: CodexConfig.CodexSetup = { writableRoots: ["/home/me/.memdir"], mcp: { command: "memdir", args: ["mcp"] } }
const install = (text: string | undefined) => Result.getOrThrow(CodexConfig.install("config.toml", text, setup))

describe("CodexConfig", () => {
  it("a file without the tables: marked tables at the end that Codex reads, taken out byte for byte", () => {
    const own = "model = \"gpt-5\"\napproval_policy = \"on-request\"\n"
    const change = install(own)
    assert.deepStrictEqual(change.keys, ["writable_roots", "mcp_servers.memdir"])
    const parsed = Result.getOrThrow(Toml.parse(change.text)) as any
    assert.deepStrictEqual(parsed.sandbox_workspace_write.writable_roots, ["/home/me/.memdir"])
    assert.deepStrictEqual(parsed.mcp_servers.memdir, {
      command: "memdir",
      args: ["mcp"],
      env_vars: [...CodexConfig.MCP_ENV_VARS]
    })
    assert.includeMembers(parsed.mcp_servers.memdir.env_vars, ["MEMDIR_HOME", "MEMDIR_MEMORY_DIR", "ANTHROPIC_API_KEY"])
    assert.strictEqual(parsed.model, "gpt-5")
    assert.isTrue(
      change.text.slice(own.length).split("\n").every((line) => line === "" || line.endsWith(CodexConfig.LINE_MARK)),
      "every line memdir adds is marked"
    )
    assert.deepStrictEqual(CodexConfig.uninstall(change.text), {
      text: own,
      keys: ["writable_roots", "mcp_servers.memdir"],
      notes: []
    })
    assert.deepStrictEqual(install(change.text).keys, [], "idempotent")
    assert.strictEqual(CodexConfig.uninstall(install("").text).text, "")
  })

  it("what Codex writes after install stays: new tables at the end, keys in memdir's sandbox table", () => {
    const own = "model = \"gpt-5\"\n"
    const installed = install(own).text
    // Codex (toml_edit) appends new tables at the end: hook trust, a trusted folder, `codex mcp add other`
    const codexAdded = "\n[hooks.state.\"memdir:session_start\"]\ntrusted_hash = \"sha256:ab\"\n\n" +
      "[projects.\"/home/me/shop\"]\ntrust_level = \"trusted\"\n\n[mcp_servers.other]\ncommand = \"echo\"\nargs = [\"hi\"]\n"
    assert.strictEqual(CodexConfig.uninstall(installed + codexAdded).text, own + codexAdded)
    // a key added under memdir's sandbox header keeps the header; one added to memdir's server goes with it
    const edited = installed
      .replace(/(writable_roots = .*\n)/, "$1network_access = true\n")
      .replace(/(env_vars = .*\n)/, "$1enabled = false\n")
    const back = CodexConfig.uninstall(edited).text
    assert.strictEqual(back, own + "\n[sandbox_workspace_write]\nnetwork_access = true\n")
    assert.deepStrictEqual(Result.getOrThrow(Toml.parse(back)), {
      model: "gpt-5",
      sandbox_workspace_write: { network_access: true }
    })
  })

  it("memdir's server after Codex rewrote it without the marks (`codex mcp add`): still taken out, by its env_vars", () => {
    const own = "model = \"gpt-5\"\n"
    const installed = install(own).text
    const mark = new RegExp(` ?${CodexConfig.LINE_MARK.trim().replace(/[.*+?^${}()|[\]\\`]/g, "\\$&")}`, "g")
    // what Codex 0.171 writes: every [mcp_servers.*] table anew, comments gone, the new server after memdir's
    // (`sandbox` keeps the blank line install put before it)
    const [sandbox, server] = installed.slice(own.length).split("\n\n")
    const rewritten = `${own}${sandbox}\n\n${server!.replace(mark, "").trimEnd()}\n\n` +
      "[mcp_servers.other]\ncommand = \"echo\"\nargs = [\"hi\"]"
    assert.strictEqual(
      CodexConfig.uninstall(rewritten).text,
      `${own}\n[mcp_servers.other]\ncommand = "echo"\nargs = ["hi"]`
    )
    // a server of the user's own named memdir (other env_vars, or none) is never taken
    const theirs = `${own}\n[mcp_servers.memdir]\ncommand = "memdir"\nargs = ["mcp"]\nenv_vars = ["MEMDIR_HOME"]\n`
    assert.strictEqual(CodexConfig.uninstall(theirs).text, theirs)
  })

  it("a piece removed since (`codex mcp remove memdir`) comes back on the next install, the other untouched", () => {
    const own = "model = \"gpt-5\"\n"
    const installed = install(own).text
    const withoutServer = installed.slice(0, installed.indexOf("\n[mcp_servers.memdir]"))
    const again = install(withoutServer)
    assert.deepStrictEqual(again.keys, ["mcp_servers.memdir"])
    assert.strictEqual(again.text, installed)
  })

  it("an earlier install's block: taken out, keeping what Codex put inside it", () => {
    const own = "model = \"gpt-5\"\n"
    const block = [
      CodexConfig.BLOCK_BEGIN,
      "[sandbox_workspace_write]",
      "writable_roots = [\"/home/me/.memdir\"]",
      "",
      "[mcp_servers.memdir]",
      "command = \"memdir\"",
      "args = [\"mcp\"]"
    ]
    const earlier = `${own}\n${[...block, CodexConfig.BLOCK_END].join("\n")}\n`
    assert.deepStrictEqual(CodexConfig.uninstall(earlier), {
      text: own,
      keys: ["writable_roots", "mcp_servers.memdir"],
      notes: []
    })
    assert.deepStrictEqual(install(earlier).keys, [], "an earlier install counts as installed")
    // Codex wrote its trust above the block's last line, a comment: inside the block
    const trusted = `${own}\n${
      [...block, "", "[hooks.state.x]", "trusted_hash = \"sha256:ab\"", CodexConfig.BLOCK_END].join("\n")
    }\n`
    assert.strictEqual(CodexConfig.uninstall(trusted).text, `${own}\n[hooks.state.x]\ntrusted_hash = "sha256:ab"\n`)
  })

  it("the user's own sandbox table: one marked line under its header", () => {
    const own = "[sandbox_workspace_write] # mine\nnetwork_access = true\n"
    const change = install(own)
    const parsed = Result.getOrThrow(Toml.parse(change.text)) as any
    assert.deepStrictEqual(parsed.sandbox_workspace_write, {
      writable_roots: ["/home/me/.memdir"],
      network_access: true
    })
    assert.strictEqual(CodexConfig.uninstall(change.text).text, own)
  })

  it("the user's own writable_roots without memdir's root: left alone, with a note saying what to add", () => {
    const own = "[sandbox_workspace_write]\nwritable_roots = [\"/srv\"]\n"
    const change = install(own)
    assert.deepStrictEqual(change.keys, ["mcp_servers.memdir"])
    assert.include(change.text, own)
    assert.strictEqual(change.notes.length, 1)
    assert.include(change.notes[0]!, "\"/home/me/.memdir\"")
    // already listed: nothing to say
    assert.deepStrictEqual(install("[sandbox_workspace_write]\nwritable_roots = [\"/home/me/.memdir\"]\n").notes, [])
  })

  it("the user's own memdir MCP server is kept; a file without a final newline gets one back", () => {
    const own = "[mcp_servers.memdir]\ncommand = \"npx\"\nargs = [\"@memdir/cli\", \"mcp\"]"
    const change = install(own)
    assert.deepStrictEqual(change.keys, ["writable_roots"])
    assert.strictEqual(CodexConfig.uninstall(change.text).text, own + "\n")
  })

  it("a file that is not TOML is refused with the file named", () => {
    const error = Result.getFailure(CodexConfig.install("/x/config.toml", "model = [", setup))
    assert.strictEqual(error._tag === "Some" ? error.value._tag : undefined, "AgentConfigError")
  })
})
