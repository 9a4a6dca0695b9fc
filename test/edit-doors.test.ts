/**
 * One edit, three doors (issue 25): the same edit through MCP's `memory_edit` (the bundled CLI's `memdir mcp` over
 * stdio, with the MCP SDK's real client), the agents' `memory_edit` (`MemoryTools`, as extraction and dream run it)
 * and the memory tool's `str_replace` (`MemoryToolBackend`), each on its own copy of one memory directory, leaves
 * the same files; and a change that lands between a door's read and its write is refused by each, never
 * overwritten. All three are adapters over `Operations.edit`.
 *
 * The differences are the memory tool's, kept in its adapter on purpose (docs/memory-tool.md): it stores the model's
 * text line for line, so its edit leaves the memory's `modified:` as it was where the other doors stamp the time of
 * the edit; and it keeps the reference's one-line rule, so text found twice on one line replaces the first there.
 */
import { NodeServices } from "@effect/platform-node"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryStore from "@memdir/core/MemoryStore"
import * as MemoryToolBackend from "@memdir/core/MemoryToolBackend"
import * as MemoryTools from "@memdir/core/MemoryTools"
import * as Operations from "@memdir/core/Operations"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseJson, runCli, scratchHomeEnv } from "./support/cli.js"
import { connectMcp, mcpScratch } from "./support/mcp.js"

const runtime = ManagedRuntime.make(
  MemoryToolBackend.layer.pipe(
    Layer.provideMerge(MemoryStore.layerNode),
    Layer.provideMerge(MemoryIndex.layer),
    Layer.provideMerge(NodeServices.layer)
  )
)

const scratch = mcpScratch("memdir-edit-doors-")

afterAll(() => runtime.dispose())

const FILE = "feedback_testing.md"
const WRITTEN = "2026-11-01T10:00:00.000Z"
/** A memory as memdir writes it (its `modified:` stamped), and its index line. */
const MEMORY = "---\nname: Testing policy\ndescription: Integration tests hit a real database\ntype: feedback\n" +
  `modified: ${WRITTEN}\n---\n\nUse the docker test database.\nWhy: a mock hid a broken migration.\n`
const INDEX = `- [Testing policy](${FILE}) — Integration tests hit a real database\n`

const OLD = "description: Integration tests hit a real database"
const NEW = "description: Integration tests hit the docker database"

let dirs = 0
/** A fresh copy of the one memory directory. */
const memoryDir = (): string => {
  const dir = path.join(scratch.dir, `memory-${++dirs}`)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(dir, FILE), MEMORY)
  fs.writeFileSync(path.join(dir, "MEMORY.md"), INDEX)
  return dir
}

const files = (dir: string) => ({
  memory: fs.readFileSync(path.join(dir, FILE), "utf8"),
  index: fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8")
})

// -------------------------------------------------------------------------------------------------------------
// The doors
// -------------------------------------------------------------------------------------------------------------

interface Answer {
  readonly isError: boolean
  readonly text: string
}

const connect = async (dir: string): Promise<Client> => {
  const client = await connectMcp(scratch, {
    env: scratchHomeEnv(scratch.home, { MEMDIR_MEMORY_DIR: dir }),
    name: "memdir-edit-doors"
  })
  await client.listTools()
  return client
}

const mcpCall = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await client.callTool({ name, arguments: args }) as {
    readonly isError?: boolean
    readonly content: ReadonlyArray<{ readonly text?: string }>
    readonly structuredContent?: any
  }
  return {
    isError: result.isError === true,
    text: result.content.map((c) => c.text ?? "").join("\n"),
    structured: result.structuredContent
  }
}

/** A clock stopped at `ms` (sleeps still take real time): an in-process door stamps the time the MCP door did. */
const clockAt = (ms: number): Clock.Clock => {
  const real = Clock.Clock.defaultValue()
  return {
    currentTimeMillisUnsafe: () => ms,
    currentTimeMillis: Effect.succeed(ms),
    currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
    currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (duration) => real.sleep(duration)
  }
}

/** Another writer that gets in after a door has read the memory, before its write: the store, raced once. */
const racingStore = (change: (text: string) => string) =>
  Effect.map(MemoryStore.MemoryStore, (live) => {
    let raced = false
    return MemoryStore.MemoryStore.of({
      ...live,
      write: (root, key, content, options) =>
        Effect.suspend(() => {
          if (raced) return live.write(root, key, content, options)
          raced = true
          return Effect.andThen(
            live.write(root, key, (text) => change(text ?? "")),
            live.write(root, key, content, options)
          )
        })
    })
  })

type Store = MemoryStore.MemoryStore["Service"]

/** The agents' `memory_edit` (the tool extraction and dream give the model). */
const agentsEdit = (
  dir: string,
  input: Record<string, unknown>,
  options: { readonly store?: Store; readonly clock?: Clock.Clock } = {}
): Promise<Answer> =>
  runtime.runPromise(
    Effect.gen(function*() {
      const toolset = yield* MemoryTools.make({ memoryDir: dir })
      const tool = toolset.tools.find((t) => t.definition.name === "memory_edit")!
      const result = yield* tool.run(input)
      return { isError: result.isError === true, text: String(result.content) }
    }).pipe(
      (e) => options.store === undefined ? e : Effect.provideService(e, MemoryStore.MemoryStore, options.store),
      (e) => options.clock === undefined ? e : Effect.provideService(e, Clock.Clock, options.clock)
    )
  )

/** The memory tool's `str_replace`. */
const memoryToolEdit = (dir: string, input: Record<string, unknown>, store?: Store): Promise<Answer> =>
  runtime.runPromise(
    Effect.gen(function*() {
      const backend = store === undefined ?
        yield* MemoryToolBackend.MemoryToolBackend :
        yield* MemoryToolBackend.make.pipe(Effect.provideService(MemoryStore.MemoryStore, store))
      const answer = yield* backend.answer({ memoryDir: dir, teamEnabled: false }, input)
      return { isError: answer.is_error, text: answer.content }
    })
  )

describe("one edit through every door", () => {
  it("leaves the same memory and MEMORY.md through MCP, the agents' tool and the memory tool", async () => {
    const viaMcp = memoryDir()
    const viaAgents = memoryDir()
    const viaMemoryTool = memoryDir()

    const mcp = await mcpCall(await connect(viaMcp), "memory_edit", { path: FILE, old_str: OLD, new_str: NEW })
    assert.isFalse(mcp.isError, mcp.text)
    const stamped = /^modified: (.+)$/m.exec(files(viaMcp).memory)?.[1]
    assert.isDefined(stamped)
    assert.notStrictEqual(stamped, WRITTEN)
    // the agents' door runs at the moment the MCP server stamped, so the two stamps can be compared byte for byte
    const agents = await agentsEdit(viaAgents, { path: FILE, old_string: OLD, new_string: NEW }, {
      clock: clockAt(Date.parse(stamped!))
    })
    assert.isFalse(agents.isError, agents.text)
    const tool = await memoryToolEdit(viaMemoryTool, {
      command: "str_replace",
      path: `/memories/${FILE}`,
      old_str: OLD,
      new_str: NEW
    })
    assert.isFalse(tool.isError, tool.text)
    assert.include(tool.text, "The memory file has been edited.")

    const edited = MEMORY.replace(OLD, NEW)
    // MCP and the agents' tool: the edit, its `modified:` stamped; byte for byte the same
    assert.strictEqual(files(viaMcp).memory, edited.replace(`modified: ${WRITTEN}`, `modified: ${stamped}`))
    assert.strictEqual(files(viaAgents).memory, files(viaMcp).memory)
    // the memory tool: the same edit, the model's lines kept as they were (no stamp)
    assert.strictEqual(files(viaMemoryTool).memory, edited)
    // the index line follows the new description, the same in all three
    assert.strictEqual(files(viaMcp).index, INDEX.replace("hit a real database", "hit the docker database"))
    assert.strictEqual(files(viaAgents).index, files(viaMcp).index)
    assert.strictEqual(files(viaMemoryTool).index, files(viaMcp).index)
  })

  it("refuses the same ambiguous edit through every door, changing nothing", async () => {
    const dirs = [memoryDir(), memoryDir(), memoryDir()] as const
    // "test" occurs twice: not one place
    const mcp = await mcpCall(await connect(dirs[0]), "memory_edit", { path: FILE, old_str: "test", new_str: "x" })
    const agents = await agentsEdit(dirs[1], { path: FILE, old_string: "test", new_string: "x" })
    const tool = await memoryToolEdit(dirs[2], {
      command: "str_replace",
      path: `/memories/${FILE}`,
      old_str: "test",
      new_str: "x"
    })
    assert.isTrue(mcp.isError)
    assert.include(mcp.text, "occurs 2 times")
    assert.isTrue(agents.isError)
    assert.include(agents.text, "occurs 2 times")
    assert.isTrue(tool.isError)
    // the reference's words for it: the lines that hold it
    assert.include(tool.text, "Multiple occurrences of old_str `test` in lines: 3, 8")
    for (const dir of dirs) assert.deepStrictEqual(files(dir), { memory: MEMORY, index: INDEX })
  })

  it("the memory tool keeps the reference's rule: twice on one line replaces the first; the others refuse", async () => {
    const dirs = [memoryDir(), memoryDir(), memoryDir()] as const
    // " m" occurs twice, both on one line ("a mock", "migration"): the reference's one-line rule accepts it
    const mcp = await mcpCall(await connect(dirs[0]), "memory_edit", { path: FILE, old_str: " m", new_str: " M" })
    const agents = await agentsEdit(dirs[1], { path: FILE, old_string: " m", new_string: " M" })
    const tool = await memoryToolEdit(dirs[2], {
      command: "str_replace",
      path: `/memories/${FILE}`,
      old_str: " m",
      new_str: " M"
    })
    for (const refused of [mcp, agents]) {
      assert.isTrue(refused.isError)
      assert.include(refused.text, "occurs 2 times")
    }
    assert.isFalse(tool.isError, tool.text)
    assert.include(tool.text, "     9\tWhy: a Mock hid a broken migration.")
    assert.deepStrictEqual(files(dirs[0]), { memory: MEMORY, index: INDEX })
    assert.deepStrictEqual(files(dirs[1]), { memory: MEMORY, index: INDEX })
    assert.deepStrictEqual(files(dirs[2]), { memory: MEMORY.replace("a mock", "a Mock"), index: INDEX })
  })

  it("a change between a door's read and its write is refused by every door, never overwritten", async () => {
    const otherWriter = (text: string) => text.replace("Why: a mock hid", "Why: mocks hid")

    // MCP: the client read version v; another process edits; the client's edit based on v is refused
    const viaMcp = memoryDir()
    const client = await connect(viaMcp)
    const read = await mcpCall(client, "memory_read", { path: FILE })
    const other = await mcpCall(await connect(viaMcp), "memory_edit", {
      path: FILE,
      old_str: "Why: a mock hid",
      new_str: "Why: mocks hid"
    })
    assert.isFalse(other.isError, other.text)
    const afterOther = files(viaMcp)
    const stale = await mcpCall(client, "memory_edit", {
      path: FILE,
      old_str: OLD,
      new_str: NEW,
      if_version: read.structured.version
    })
    assert.isTrue(stale.isError)
    assert.include(stale.text, "changed while it was being edited")
    assert.include(stale.text, "Why: mocks hid")
    assert.deepStrictEqual(files(viaMcp), afterOther)

    // the agents' tool and the memory tool: another writer gets in after the door read the memory
    for (const door of ["agents", "memory tool"] as const) {
      const dir = memoryDir()
      const store = await runtime.runPromise(racingStore(otherWriter))
      const answer = door === "agents" ?
        await agentsEdit(dir, { path: FILE, old_string: OLD, new_string: NEW }, { store }) :
        await memoryToolEdit(
          dir,
          { command: "str_replace", path: `/memories/${FILE}`, old_str: OLD, new_str: NEW },
          store
        )
      assert.isTrue(answer.isError, `${door}: ${answer.text}`)
      assert.include(answer.text, "changed while it was being edited", door)
      const now = files(dir)
      assert.include(now.memory, "Why: mocks hid", door)
      assert.include(now.memory, OLD, door)
      assert.strictEqual(now.index, INDEX, door)
    }
  })
})

describe("one recalled memory through every door", () => {
  it("memdir recall --json and MCP memory_recall give the same memory in the same shape", async () => {
    const viaCli = memoryDir()
    const viaMcp = memoryDir()
    const query = "should the integration tests use the docker database or mocks"
    const cli = parseJson(
      await Effect.runPromise(
        runCli(["recall", query, "--json"], {
          cwd: scratch.project,
          env: scratchHomeEnv(scratch.home, { MEMDIR_MEMORY_DIR: viaCli })
        })
      )
    )
    const mcp = await mcpCall(await connect(viaMcp), "memory_recall", { query })
    assert.isFalse(mcp.isError, mcp.text)
    const decode = Schema.decodeUnknownSync(Schema.Array(Operations.RecalledMemory), { onExcessProperty: "error" })
    const fromCli = decode(cli.selected)
    assert.deepStrictEqual(fromCli.map((m) => m.path), [FILE])
    assert.deepStrictEqual(decode(mcp.structured.memories), fromCli)
  })
})
