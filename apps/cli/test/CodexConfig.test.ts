import { assert, describe, it } from "@effect/vitest"
import * as Toml from "effect/encoding/Toml"
import * as Result from "effect/Result"
import * as CodexConfig from "../src/hooks/CodexConfig.js"

const setup: CodexConfig.CodexSetup = { writableRoots: ["/home/me/.memdir"], mcp: { command: "memdir", args: ["mcp"] } }
const install = (text: string | undefined) => Result.getOrThrow(CodexConfig.install("config.toml", text, setup))

describe("CodexConfig", () => {
  it("a file without the tables: one marked block at the end that Codex reads, taken out byte for byte", () => {
    const own = "model = \"gpt-5\"\napproval_policy = \"on-request\"\n"
    const change = install(own)
    assert.deepStrictEqual(change.keys, ["writable_roots", "mcp_servers.memdir"])
    const parsed = Result.getOrThrow(Toml.parse(change.text)) as any
    assert.deepStrictEqual(parsed.sandbox_workspace_write.writable_roots, ["/home/me/.memdir"])
    assert.deepStrictEqual(parsed.mcp_servers.memdir, { command: "memdir", args: ["mcp"] })
    assert.strictEqual(parsed.model, "gpt-5")
    assert.strictEqual(CodexConfig.uninstall(change.text).text, own)
    assert.deepStrictEqual(install(change.text).keys, [], "idempotent")
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
