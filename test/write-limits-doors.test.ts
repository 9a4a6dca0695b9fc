/**
 * The write limits of `memdir write` (a name of at most 100 characters, a body that is not empty: docs/file-format.md)
 * hold in the MCP server's doors too: `memory_write` and `memory_edit` over the bundled CLI's `memdir mcp` on stdio,
 * with the MCP SDK's real client. Each refusal names the limit, and nothing is written.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { scratchHomeEnv } from "./support/cli.js"
import { connectMcp, mcpScratch } from "./support/mcp.js"

const scratch = mcpScratch("memdir-write-limits-")

const FILE = "project_release_train.md"
const MEMORY = "---\nname: Release train\ndescription: Releases leave on Fridays\ntype: project\n---\n\n" +
  "Ship on Fridays.\n"
const INDEX = `- [Release train](${FILE}) — Releases leave on Fridays\n`

let dirs = 0
/** A memory directory holding one memory and its index line. */
const memoryDir = (): string => {
  const dir = path.join(scratch.dir, `memory-${++dirs}`)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(dir, FILE), MEMORY)
  fs.writeFileSync(path.join(dir, "MEMORY.md"), INDEX)
  return dir
}

const connect = (dir: string): Promise<Client> =>
  connectMcp(scratch, { env: scratchHomeEnv(scratch.home, { MEMDIR_MEMORY_DIR: dir }), name: "memdir-write-limits" })

const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await client.callTool({ name, arguments: args }) as {
    readonly isError?: boolean
    readonly content: ReadonlyArray<{ readonly text?: string }>
  }
  return { isError: result.isError === true, text: result.content.map((c) => c.text ?? "").join("\n") }
}

const files = (dir: string) => fs.readdirSync(dir).sort()

describe("the write limits through MCP", () => {
  it("memory_write: a name over 100 characters or an empty body is refused, naming the limit; nothing written", async () => {
    const dir = memoryDir()
    const client = await connect(dir)
    const fields = { type: "project", name: "Deploys", description: "How deploys go" }
    const named = await call(client, "memory_write", { ...fields, name: "N".repeat(5000), body: "b" })
    assert.isTrue(named.isError, named.text)
    assert.include(named.text, "name is 5000 characters, at most 100")
    assert.isBelow(named.text.length, 1000)
    for (const body of ["", " \n\t\n"]) {
      const empty = await call(client, "memory_write", { ...fields, body })
      assert.isTrue(empty.isError, empty.text)
      assert.include(empty.text, "the body is empty")
    }
    assert.deepStrictEqual(files(dir), ["MEMORY.md", FILE])
    assert.strictEqual(fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8"), INDEX)
  })

  it("memory_edit: an edit that makes the name too long or empties the body is refused; the memory stays", async () => {
    const dir = memoryDir()
    const client = await connect(dir)
    const named = await call(client, "memory_edit", {
      path: FILE,
      old_str: "name: Release train",
      new_str: `name: ${"N".repeat(101)}`
    })
    assert.isTrue(named.isError, named.text)
    assert.include(named.text, "name is 101 characters, at most 100")
    const emptied = await call(client, "memory_edit", { path: FILE, old_str: "Ship on Fridays.\n", new_str: "" })
    assert.isTrue(emptied.isError, emptied.text)
    assert.include(emptied.text, "the body is empty")
    assert.strictEqual(fs.readFileSync(path.join(dir, FILE), "utf8"), MEMORY)
    assert.strictEqual(fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8"), INDEX)
  })
})
