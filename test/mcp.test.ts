/**
 * `memdir mcp` end to end: the MCP SDK's real `Client` over a real stdio child process (the bundled CLI), with a
 * scratch HOME and memory directory. Checks the tools' schemas and annotations, a write → recall → read → edit →
 * rename → delete round trip on disk, `if_version` conflicts, the team rules, errors as `isError` results, the
 * resources, session dedupe, and the config snippets of docs/mcp.md as written.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { cliPath, scratchHomeEnv } from "./support/cli.js"
import { codeBlocksIn, readRepoFile } from "./support/markdown.js"
import { connectMcp, mcpScratch } from "./support/mcp.js"

const scratch = mcpScratch("memdir-mcp-")

let dirs = 0
/** A fresh memory directory for one test. */
const freshMemoryDir = (): string => path.join(scratch.dir, `memory-${++dirs}`)

/**
 * A client connected to `node <bundle> ...args` with the scratch environment, naming itself `clientName` in
 * `initialize`. Outside any agent session: a `CLAUDE_CODE_SESSION_ID` of the shell running the tests stays out.
 */
const connect = async (
  env: Record<string, string>,
  args: ReadonlyArray<string> = ["mcp"],
  clientName = "memdir-test"
): Promise<Client> => {
  const client = await connectMcp(scratch, {
    env: scratchHomeEnv(scratch.home, { CLAUDE_CODE_SESSION_ID: "", ...env }),
    name: clientName,
    args: [cliPath, ...args]
  })
  // as clients do: the tools' output schemas are known, so every structuredContent below is validated against them
  await client.listTools()
  return client
}

interface Result {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: any
}

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<Result> =>
  (await client.callTool({ name, arguments: args })) as Result

const textOf = (result: Result): string => result.content.map((c) => c.text ?? "").join("\n")

/** A successful call's structured content (fails the test with the error text otherwise). */
const ok = async (client: Client, name: string, args: Record<string, unknown>): Promise<any> => {
  const result = await call(client, name, args)
  assert.isNotTrue(result.isError, `${name}: ${textOf(result)}`)
  return result.structuredContent
}

/** A failed call's text (fails the test if the call succeeded). */
const failed = async (client: Client, name: string, args: Record<string, unknown>): Promise<Result> => {
  const result = await call(client, name, args)
  assert.isTrue(result.isError, `${name} should fail: ${textOf(result)}`)
  return result
}

const testing = {
  type: "feedback",
  name: "Testing policy",
  description: "Integration tests hit a real database, never mocks",
  body: "Use the docker test database.\n**Why:** mocked tests hid a broken migration.\n"
}

describe("memdir mcp", () => {
  it("lists the tools with schemas, titles and annotations, and gives instructions", async () => {
    const client = await connect({ MEMDIR_MEMORY_DIR: freshMemoryDir() })
    assert.strictEqual(client.getServerVersion()?.name, "memdir")
    const instructions = client.getInstructions() ?? ""
    assert.include(instructions, "memory_recall")
    assert.include(instructions, "memory_write")
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    assert.deepStrictEqual(tools.map((t) => t.name), [
      "memory_recall",
      "memory_search",
      "memory_list",
      "memory_read",
      "memory_write",
      "memory_edit",
      "memory_delete",
      "memory_rename"
    ])
    for (const tool of tools) {
      assert.isAbove(tool.title?.length ?? 0, 0, tool.name)
      assert.strictEqual(tool.inputSchema.type, "object", tool.name)
      assert.strictEqual(tool.outputSchema?.type, "object", tool.name)
      assert.strictEqual(tool.annotations?.openWorldHint, false, tool.name)
    }
    for (const name of ["memory_recall", "memory_search", "memory_list", "memory_read"]) {
      assert.strictEqual(byName.get(name)!.annotations?.readOnlyHint, true, name)
    }
    for (const name of ["memory_write", "memory_edit", "memory_delete", "memory_rename"]) {
      assert.strictEqual(byName.get(name)!.annotations?.readOnlyHint, false, name)
    }
    assert.strictEqual(byName.get("memory_delete")!.annotations?.destructiveHint, true)
    assert.strictEqual(byName.get("memory_write")!.annotations?.idempotentHint, true)
    assert.strictEqual(byName.get("memory_search")!.annotations?.idempotentHint, true)
    const write = byName.get("memory_write")!.inputSchema as any
    assert.deepStrictEqual([...write.required].sort(), ["body", "description", "name", "type"])
    assert.deepStrictEqual(write.properties.type.enum, ["user", "feedback", "project", "reference"])
    assert.deepStrictEqual(write.properties.scope.enum, ["private", "team"])
    assert.deepStrictEqual(
      (byName.get("memory_search")!.inputSchema as any).properties.scope.enum,
      ["private", "team", "all"]
    )
    assert.deepStrictEqual((byName.get("memory_edit")!.inputSchema as any).required, ["path", "old_str", "new_str"])
  })

  it("round-trips write → recall → read → edit → rename → delete, file and MEMORY.md line together", async () => {
    const memoryDir = freshMemoryDir()
    const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
    const index = () => fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8")

    const written = await ok(client, "memory_write", testing)
    assert.strictEqual(written.path, "feedback_testing_policy.md")
    assert.isTrue(written.created)
    assert.include(fs.readFileSync(path.join(memoryDir, written.path), "utf8"), "name: Testing policy")
    assert.include(index(), "(feedback_testing_policy.md)")
    // the same name and type again: an update, not a duplicate
    const again = await ok(client, "memory_write", { ...testing, body: "Use the docker test database only.\n" })
    assert.strictEqual(again.path, written.path)
    assert.isFalse(again.created)
    assert.strictEqual(index().split("\n").filter((l) => l.includes("feedback_testing_policy.md")).length, 1)

    const recall = await call(client, "memory_recall", { query: "how should the integration tests use the database" })
    assert.isNotTrue(recall.isError, textOf(recall))
    assert.deepStrictEqual(recall.structuredContent.memories.map((m: any) => m.path), [written.path])
    assert.strictEqual(recall.structuredContent.memories[0].age, "today")
    assert.include(textOf(recall), "Memory feedback_testing_policy.md (feedback, saved today): Testing policy")

    const read = await ok(client, "memory_read", { path: written.path })
    assert.strictEqual(read.version, again.version)
    assert.deepStrictEqual(read.frontmatter, {
      name: "Testing policy",
      description: testing.description,
      type: "feedback"
    })
    assert.strictEqual(read.body, "Use the docker test database only.\n")
    assert.strictEqual(read.age, "today")
    assert.isNull(read.caveat)

    const edited = await ok(client, "memory_edit", {
      path: written.path,
      old_str: "description: Integration tests hit a real database, never mocks",
      new_str: "description: Integration tests hit the docker database, never mocks"
    })
    assert.notStrictEqual(edited.version, read.version)
    assert.include(index(), "Integration tests hit the docker database")
    assert.notInclude(index(), "hit a real database")

    const renamed = await ok(client, "memory_rename", { path: written.path, new_path: "feedback_db_tests.md" })
    assert.strictEqual(renamed.path, "feedback_db_tests.md")
    assert.isFalse(fs.existsSync(path.join(memoryDir, written.path)))
    assert.isTrue(fs.existsSync(path.join(memoryDir, "feedback_db_tests.md")))
    assert.include(index(), "(feedback_db_tests.md)")
    assert.notInclude(index(), "(feedback_testing_policy.md)")

    const deleted = await ok(client, "memory_delete", { path: "feedback_db_tests.md" })
    assert.deepStrictEqual(deleted, { path: "feedback_db_tests.md", fileRemoved: true, indexLinesRemoved: 1 })
    assert.isFalse(fs.existsSync(path.join(memoryDir, "feedback_db_tests.md")))
    assert.notInclude(index(), "feedback_db_tests.md")
    assert.deepStrictEqual((await ok(client, "memory_list", {})).memories, [])
  })

  it("lists and searches by scope and type, ranked", async () => {
    const memoryDir = freshMemoryDir()
    const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
    await ok(client, "memory_write", testing)
    await ok(client, "memory_write", {
      type: "reference",
      name: "Dashboards",
      description: "Checkout latency dashboards live in grafana",
      body: "grafana.internal/d/checkout\n"
    })
    const listed = await ok(client, "memory_list", {})
    assert.sameMembers(listed.memories.map((m: any) => m.path), [
      "feedback_testing_policy.md",
      "reference_dashboards.md"
    ])
    assert.isFalse(listed.teamEnabled)
    const references = await ok(client, "memory_list", { type: "reference" })
    assert.deepStrictEqual(references.memories.map((m: any) => m.path), ["reference_dashboards.md"])
    const search = await ok(client, "memory_search", { query: "grafana checkout latency" })
    assert.strictEqual(search.results[0].path, "reference_dashboards.md")
    assert.isTrue(search.results[0].relevant)
    assert.notInclude(search.results.map((r: any) => r.path), "feedback_testing_policy.md")
    const none = await ok(client, "memory_search", { query: "grafana", type: "feedback" })
    assert.deepStrictEqual(none.results, [])
  })

  it("list, search and read count a memory's age from its own modified:, as ls, show and recall do", async () => {
    const memoryDir = freshMemoryDir()
    fs.mkdirSync(memoryDir, { recursive: true })
    const modified = new Date(Date.now() - 10 * 86_400_000).toISOString()
    fs.writeFileSync(
      path.join(memoryDir, "reference_dashboards.md"),
      `---\nname: Dashboards\ndescription: Checkout latency dashboards live in grafana\ntype: reference\n` +
        `modified: ${modified}\n---\n\ngrafana.internal/d/checkout\n`
    )
    const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
    const listed = await ok(client, "memory_list", {})
    assert.strictEqual(listed.memories[0].ageDays, 10)
    const search = await ok(client, "memory_search", { query: "grafana checkout latency" })
    assert.strictEqual(search.results[0].ageDays, 10)
    const read = await ok(client, "memory_read", { path: "reference_dashboards.md" })
    assert.strictEqual(read.ageDays, 10)
    assert.isNotNull(read.caveat)
  })

  it("a stale if_version writes nothing and returns the current version and content; the current one writes", async () => {
    const memoryDir = freshMemoryDir()
    const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
    const written = await ok(client, "memory_write", testing)
    const seen = await ok(client, "memory_read", { path: written.path })
    // someone else changes it
    await ok(client, "memory_edit", {
      path: written.path,
      old_str: "docker test database",
      new_str: "staging database"
    })
    const current = await ok(client, "memory_read", { path: written.path })
    const stale = await failed(client, "memory_write", { ...testing, body: "mine\n", if_version: seen.version })
    assert.include(textOf(stale), `its version is now ${current.version}`)
    assert.include(textOf(stale), "staging database")
    assert.include(textOf(stale), `changed since version ${seen.version}`)
    assert.isUndefined(stale.structuredContent)
    assert.include(fs.readFileSync(path.join(memoryDir, written.path), "utf8"), "staging database")
    const merged = await ok(client, "memory_write", { ...testing, body: "merged\n", if_version: current.version })
    assert.isFalse(merged.created)
    assert.include(fs.readFileSync(path.join(memoryDir, written.path), "utf8"), "merged")
    // a version for a memory that no longer exists
    await ok(client, "memory_delete", { path: written.path })
    const gone = await failed(client, "memory_write", { ...testing, if_version: merged.version })
    assert.include(textOf(gone), "no longer exists")
    assert.isFalse(fs.existsSync(path.join(memoryDir, written.path)))
  })

  it("team scope: refused while team memory is off; on, secrets are refused and team/MEMORY.md is kept", async () => {
    const off = await connect({ MEMDIR_MEMORY_DIR: freshMemoryDir() })
    const refused = await failed(off, "memory_write", { ...testing, scope: "team" })
    assert.include(textOf(refused), "team memory is off")
    assert.include(textOf(await failed(off, "memory_list", { scope: "team" })), "team memory is off")

    const memoryDir = freshMemoryDir()
    const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir, MEMDIR_TEAM_MEMORY: "1" })
    const secret = await failed(client, "memory_write", {
      type: "reference",
      name: "Deploy key",
      description: "The key the deploy job uses",
      body: `key AKIA${"2Z3Y4X5W6V7UTSRQ"}\n`,
      scope: "team"
    })
    assert.include(textOf(secret), "looks like it holds a secret")
    assert.isFalse(fs.existsSync(path.join(memoryDir, "team", "reference_deploy_key.md")))
    // an edit that would add a secret to a team memory is refused too
    const team = await ok(client, "memory_write", { ...testing, scope: "team" })
    assert.strictEqual(team.path, "team/feedback_testing_policy.md")
    assert.strictEqual(team.scope, "team")
    assert.include(fs.readFileSync(path.join(memoryDir, "team", "MEMORY.md"), "utf8"), "(feedback_testing_policy.md)")
    const edit = await failed(client, "memory_edit", {
      path: team.path,
      old_str: "docker test database",
      new_str: `database with token ghp_${"a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}`
    })
    assert.include(textOf(edit), "secret")
    assert.include(fs.readFileSync(path.join(memoryDir, team.path), "utf8"), "docker test database")
    const listed = await ok(client, "memory_list", { scope: "team" })
    assert.deepStrictEqual(listed.memories.map((m: any) => [m.path, m.scope]), [[team.path, "team"]])
  })

  it("every failure is an isError result naming the problem", async () => {
    const memoryDir = freshMemoryDir()
    const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
    const bad = await failed(client, "memory_write", { type: "bogus", name: 3 })
    const text = textOf(bad)
    assert.include(text, "type: must be one of \"user\", \"feedback\", \"project\", \"reference\", got \"bogus\"")
    assert.include(text, "description: is missing")
    assert.include(text, "Accepted arguments:")
    assert.include(text, "- if_version (string, optional)")
    assert.include(textOf(await failed(client, "memory_read", { path: "x.md", extra: 1 })), "extra")
    assert.include(textOf(await failed(client, "memory_nope", {})), "memdir's tools: memory_recall")
    assert.include(textOf(await failed(client, "memory_read", { path: "../outside.md" })), "refused path")
    assert.include(textOf(await failed(client, "memory_read", { path: "missing.md" })), "no memory at")
    assert.include(textOf(await failed(client, "memory_write", { ...testing, name: "two\nlines" })), "single line")

    await ok(client, "memory_write", { ...testing, body: "zz zz\n" })
    const none = await failed(client, "memory_edit", {
      path: "feedback_testing_policy.md",
      old_str: "nope",
      new_str: "x"
    })
    assert.include(textOf(none), "does not occur")
    const twice = await failed(client, "memory_edit", {
      path: "feedback_testing_policy.md",
      old_str: "zz",
      new_str: "x"
    })
    assert.include(textOf(twice), "occurs 2 times")
    assert.include(
      textOf(
        await failed(client, "memory_rename", {
          path: "feedback_testing_policy.md",
          new_path: "MEMORY.md"
        })
      ),
      "MEMORY.md"
    )
    await ok(client, "memory_write", { ...testing, type: "user" })
    assert.include(
      textOf(
        await failed(client, "memory_rename", {
          path: "feedback_testing_policy.md",
          new_path: "user_testing_policy.md"
        })
      ),
      "already exists"
    )
    assert.include(textOf(await failed(client, "memory_delete", { path: "nothing.md" })), "no memory at")

    // an index at its cap: the write is refused with how to fix it, and nothing is written
    const full = Array.from({ length: 200 }, (_, i) => `- [M${i}](m${i}.md) — memory ${i}`).join("\n") + "\n"
    fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), full)
    const overCap = await failed(client, "memory_write", { ...testing, type: "project", name: "Freeze" })
    assert.include(textOf(overCap), "nothing was written")
    assert.include(textOf(overCap), "merge related memories")
    assert.isFalse(fs.existsSync(path.join(memoryDir, "project_freeze.md")))

    const disabled = await connect({ MEMDIR_MEMORY_DIR: freshMemoryDir(), MEMDIR_DISABLE_AUTO_MEMORY: "1" })
    assert.include(
      textOf(await failed(disabled, "memory_recall", { query: "the testing policy" })),
      "auto memory is disabled"
    )
    assert.include(textOf(await failed(disabled, "memory_list", {})), "auto memory is disabled")
  })

  it("serves the index and each memory as resources", async () => {
    const memoryDir = freshMemoryDir()
    const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir, MEMDIR_TEAM_MEMORY: "1" })
    const empty = await client.readResource({ uri: "memdir://index" })
    assert.include((empty.contents[0] as any).text, "MEMORY.md is empty")
    await ok(client, "memory_write", testing)
    await ok(client, "memory_write", { ...testing, type: "project", name: "Freeze", scope: "team" })
    const index = await client.readResource({ uri: "memdir://index" })
    const text = (index.contents[0] as any).text as string
    assert.include(text, "- [Testing policy](feedback_testing_policy.md)")
    assert.include(text, "# team/MEMORY.md")
    assert.include(text, "- [Freeze](project_freeze.md)")
    const { resources } = await client.listResources()
    assert.sameMembers(resources.map((r) => r.uri), [
      "memdir://index",
      "memdir://memory/feedback_testing_policy.md",
      "memdir://memory/team%2Fproject_freeze.md"
    ])
    const { resourceTemplates } = await client.listResourceTemplates()
    assert.deepStrictEqual(resourceTemplates.map((t) => t.uriTemplate), ["memdir://memory/{path}"])
    const memory = await client.readResource({ uri: "memdir://memory/team%2Fproject_freeze.md" })
    assert.include((memory.contents[0] as any).text, "name: Freeze")
    const plain = await client.readResource({ uri: "memdir://memory/feedback_testing_policy.md" })
    assert.strictEqual(
      (plain.contents[0] as any).text,
      fs.readFileSync(path.join(memoryDir, "feedback_testing_policy.md"), "utf8")
    )
    let refused = ""
    await client.readResource({ uri: "memdir://memory/..%2Fescape.md" }).catch((e) => (refused = String(e)))
    assert.include(refused, "refused path")
    assert.strictEqual(refused.split("MCP error").length, 2, refused) // said once
    // one JSON-RPC error, invalid params (-32602), not wrapped again as an internal error (-32603)
    let unknown: { code?: unknown; message?: unknown } = {}
    await client.readResource({ uri: "memdir://other" }).catch((e) => (unknown = e))
    assert.strictEqual(unknown.code, -32602)
    assert.strictEqual(
      unknown.message,
      "MCP error -32602: unknown resource \"memdir://other\": memdir serves memdir://index and memdir://memory/{path}"
    )
  })

  it("one session never recalls a memory twice; a new session starts afresh", async () => {
    const memoryDir = freshMemoryDir()
    const query = "how should the integration tests use the database"
    const first = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
    await ok(first, "memory_write", testing)
    const a = await ok(first, "memory_recall", { query })
    assert.deepStrictEqual(a.memories.map((m: any) => m.path), ["feedback_testing_policy.md"])
    const b = await ok(first, "memory_recall", { query })
    assert.deepStrictEqual(b.memories, [])
    const second = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
    const excluded = await ok(second, "memory_recall", { query, exclude: ["feedback_testing_policy.md"] })
    assert.deepStrictEqual(excluded.memories, [])
    const c = await ok(second, "memory_recall", { query })
    assert.deepStrictEqual(c.memories.map((m: any) => m.path), ["feedback_testing_policy.md"])
  })

  describe("what the model reads", () => {
    /** A memory written 40 days ago: recall and read give its age and the staleness caveat. */
    const oldMemory = (memoryDir: string) => {
      fs.mkdirSync(memoryDir, { recursive: true })
      const file = path.join(memoryDir, "feedback_testing_policy.md")
      fs.writeFileSync(
        file,
        `---\nname: ${testing.name}\ndescription: ${testing.description}\ntype: feedback\n---\n\n${testing.body}`
      )
      const old = new Date(Date.now() - 40 * 86_400_000 - 3_600_000)
      fs.utimesSync(file, old, old)
    }
    const query = "how should the integration tests use the database"
    const caveat = "This memory is 40 days old. Memories are point-in-time observations, not live state"
    const head = "Memory feedback_testing_policy.md (feedback, saved 40 days ago): Testing policy — Integration tests"

    for (const agent of ["claude-code", "codex-mcp-client"]) {
      it(`${agent}: the readable text alone, no output schema and no structuredContent for its model to read`, async () => {
        const memoryDir = freshMemoryDir()
        oldMemory(memoryDir)
        const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir }, ["mcp"], agent)
        const { tools } = await client.listTools()
        assert.deepStrictEqual(tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name), [])
        const recall = await call(client, "memory_recall", { query })
        assert.isNotTrue(recall.isError, textOf(recall))
        assert.isUndefined(recall.structuredContent)
        assert.deepStrictEqual(recall.content.map((c) => c.type), ["text"])
        const text = textOf(recall)
        assert.isTrue(text.startsWith(head), text)
        assert.include(text, `\n${caveat}`)
        assert.include(text, "mocked tests hid a broken migration")
        const read = await call(client, "memory_read", { path: "feedback_testing_policy.md" })
        assert.isUndefined(read.structuredContent)
        assert.include(textOf(read), "feedback_testing_policy.md (saved 40 days ago, version ")
        assert.include(textOf(read), caveat)
        // a write answers in words too
        const written = await call(client, "memory_write", { ...testing, name: "Another policy" })
        assert.isUndefined(written.structuredContent)
        assert.match(textOf(written), /^Saved feedback_another_policy\.md \(version [0-9a-f]+\)\.$/)
      })
    }

    it("any other client: the same text, with structuredContent beside it matching the output schema", async () => {
      const memoryDir = freshMemoryDir()
      oldMemory(memoryDir)
      const client = await connect({ MEMDIR_MEMORY_DIR: memoryDir })
      const { tools } = await client.listTools()
      assert.strictEqual(tools.filter((t) => t.outputSchema?.type === "object").length, tools.length)
      const recall = await call(client, "memory_recall", { query })
      const text = textOf(recall)
      assert.isTrue(text.startsWith(head), text)
      assert.include(text, caveat)
      assert.strictEqual(recall.structuredContent.memories[0].age, "40 days ago")
      assert.include(recall.structuredContent.memories[0].caveat, caveat)
    })

    it("--structured-content never and always override the choice by client", async () => {
      const memoryDir = freshMemoryDir()
      oldMemory(memoryDir)
      const never = await connect({ MEMDIR_MEMORY_DIR: memoryDir }, ["mcp", "--structured-content", "never"])
      assert.isTrue((await never.listTools()).tools.every((t) => t.outputSchema === undefined))
      const plain = await call(never, "memory_list", {})
      assert.isUndefined(plain.structuredContent)
      assert.include(textOf(plain), "feedback_testing_policy.md [feedback] Testing policy (40 days ago)")
      const always = await connect(
        { MEMDIR_MEMORY_DIR: memoryDir },
        ["mcp", "--structured-content", "always"],
        "claude-code"
      )
      assert.isTrue((await always.listTools()).tools.every((t) => t.outputSchema !== undefined))
      const structured = await ok(always, "memory_list", {})
      assert.strictEqual(structured.memories[0].path, "feedback_testing_policy.md")
    })
  })

  it("runs until stdin closes, writing nothing but the protocol on stdout", async () => {
    const child = spawn(process.execPath, [cliPath, "mcp"], {
      cwd: scratch.project,
      env: scratchHomeEnv(scratch.home, { MEMDIR_MEMORY_DIR: freshMemoryDir() }),
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
    }
    child.stdin.write(JSON.stringify(init) + "\n")
    // the answer's line has arrived (the listener above appended it first)
    await new Promise<void>((resolve) => {
      const answered = () => {
        if (!stdout.includes("\n")) return
        child.stdout.off("data", answered)
        resolve()
      }
      child.stdout.on("data", answered)
      answered()
    })
    assert.strictEqual(child.exitCode, null, "still serving while stdin is open")
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    child.stdin.end()
    assert.strictEqual(await exited, 0, stderr)
    const lines = stdout.split("\n").filter((l) => l !== "")
    assert.deepStrictEqual(lines.map((l) => JSON.parse(l).id), [1])
    assert.strictEqual(JSON.parse(lines[0]!).result.serverInfo.name, "memdir")
    assert.include(stderr, "serving on stdio")
  })
})

describe("docs/mcp.md", () => {
  const doc = readRepoFile("docs/mcp.md")
  const blocks = codeBlocksIn(doc).filter((b) => b.marker?.startsWith("mcp-config:"))

  /** The documented command with the bundle in place of `memdir`, and the placeholders filled. */
  const launch = (command: string, args: ReadonlyArray<string>) => {
    assert.strictEqual(command, "memdir")
    const filled = args.map((a) => a === "/path/to/your/project" || a === "${workspaceFolder}" ? scratch.project : a)
    return connect({}, filled)
  }

  it("shows a snippet for Claude Desktop, Claude Code (command and .mcp.json) and Cursor", () => {
    assert.deepStrictEqual(blocks.map((b) => b.marker), [
      "mcp-config: claude-desktop",
      "mcp-config: claude-code-cli",
      "mcp-config: claude-code",
      "mcp-config: cursor"
    ])
  })

  for (const block of codeBlocksIn(readRepoFile("docs/mcp.md")).filter((b) => b.marker?.startsWith("mcp-config:"))) {
    it(`${block.marker} starts a server that initializes and lists the tools`, async () => {
      let command: string
      let args: ReadonlyArray<string>
      if (block.lang === "json") {
        const server = JSON.parse(block.code).mcpServers.memdir
        assert.oneOf(server.type ?? "stdio", ["stdio"])
        command = server.command
        args = server.args
      } else {
        const words = block.code.trim().split(/\s+/)
        assert.deepStrictEqual(words.slice(0, 5), ["claude", "mcp", "add", "memdir", "--"])
        ;[command, ...args] = words.slice(5) as [string, ...Array<string>]
      }
      const client = await launch(command!, args!)
      const { tools } = await client.listTools()
      assert.include(tools.map((t) => t.name), "memory_recall")
      // the project's own memory: a write lands in the memory directory of the project the snippet names
      const written = await ok(client, "memory_write", testing)
      assert.strictEqual(written.path, "feedback_testing_policy.md")
      const where = execFileSync(process.execPath, [cliPath, "path", "--json", "--cwd", scratch.project], {
        env: scratchHomeEnv(scratch.home),
        encoding: "utf8"
      })
      assert.isTrue(fs.existsSync(path.join(JSON.parse(where).memoryDir, "feedback_testing_policy.md")))
    })
  }
})
