/**
 * `memdir mcp` fuzzed over stdio (issue 23): raw bytes written to a real child process of the bundled CLI, so the
 * malformed cases the SDK's client would never send get through — non-JSON lines, a wrong `jsonrpc`, a missing id
 * or method, huge ids, wrong parameter types, batches (arrays), a line over the SDK's 10 MiB read buffer, calls
 * before `initialize` — and random tool calls from the tools' schemas with hostile paths, many at once. The
 * invariants: the server never stops or hangs (each junk line is answered with a JSON-RPC error or ignored, and a
 * valid request afterwards is still answered), stdout carries only JSON-RPC, nothing changes outside the memory
 * directory, a team write lands in team/ and a private one outside it, concurrent writes all land with their exact
 * index lines, and no memory file is ever torn.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { requestedScope } from "@memdir/core/Containment"
import { parseMemoryFile } from "@memdir/core/Frontmatter"
import { formatIndexEntry, parseIndexLine } from "@memdir/core/Memory"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildCli, cliPath, makeScratchProject, repoRoot, scratchHomeEnv } from "./support/cli.js"

/** A request that gets no answer within this long is a hang (an answer takes milliseconds). */
const HANG_MS = 20_000

const corpus = (file: string, parse: (line: string) => string): ReadonlyArray<string> =>
  fs.readFileSync(path.join(repoRoot, "packages/core/test/fixtures", file), "utf8").split("\n")
    .filter((line) => line !== "" && !line.startsWith("#")).map(parse)
const hostilePaths: ReadonlyArray<string> = [
  ...corpus("traversal-keys.txt", (line) => JSON.parse(line.slice(line.indexOf("\t") + 1)) as string),
  ...corpus("traversal-payloads.txt", (line) => JSON.parse(line) as string),
  "../evil.md",
  "team/../evil.md",
  "team//tmp/evil.md",
  "/tmp/evil.md",
  "sub/../team/x.md",
  "%2e%2e/x.md",
  "\uff0e\uff0e/x.md",
  "a\u0000.md",
  "a\\b.md",
  "x".repeat(300) + ".md",
  "notes.md ",
  "MEMORY.md",
  "team/MEMORY.md",
  ".memory-index.lock"
]

let scratch: string
let home: string
let project: string

beforeAll(() => {
  buildCli()
  ;({ scratch, home, project } = makeScratchProject("memdir-mcpfuzz-"))
})

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

interface Message {
  readonly id?: unknown
  readonly result?: any
  readonly error?: { readonly code: number; readonly message: string }
}

/** `memdir mcp` as a child process spoken to in raw lines; answers matched to requests by id. */
class RawServer {
  readonly child: ChildProcessWithoutNullStreams
  readonly messages: Array<Message> = []
  /** stdout lines that are not JSON-RPC messages (stdout must carry the protocol only). */
  readonly strayLines: Array<string> = []
  stderr = ""
  exit: { readonly code: number | null; readonly signal: string | null } | undefined
  private buffer = ""
  private next = 0
  private readonly waiting = new Map<string, (message: Message) => void>()
  private readonly onExit: Array<() => void> = []

  constructor(memoryDir: string) {
    this.child = spawn(process.execPath, [cliPath, "mcp"], {
      cwd: project,
      env: scratchHomeEnv(home, { MEMDIR_MEMORY_DIR: memoryDir, MEMDIR_TEAM_MEMORY: "1" }),
      stdio: ["pipe", "pipe", "pipe"]
    })
    // a server gone mid-write is what the test reports, not an EPIPE crash of the test process
    this.child.stdin.on("error", () => undefined)
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-4000)
    })
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.buffer += chunk.toString("utf8")
      let newline = this.buffer.indexOf("\n")
      while (newline >= 0) {
        this.received(this.buffer.slice(0, newline))
        this.buffer = this.buffer.slice(newline + 1)
        newline = this.buffer.indexOf("\n")
      }
    })
    this.child.on("exit", (code, signal) => {
      this.exit = { code, signal }
      for (const f of this.onExit.splice(0)) f()
    })
  }

  private received(line: string) {
    let message: Message
    try {
      message = JSON.parse(line) as Message
    } catch {
      this.strayLines.push(line)
      return
    }
    if (typeof message !== "object" || message === null || (message as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
      this.strayLines.push(line)
      return
    }
    this.messages.push(message)
    const resolve = typeof message.id === "string" ? this.waiting.get(message.id) : undefined
    if (resolve !== undefined) {
      this.waiting.delete(message.id as string)
      resolve(message)
    }
  }

  write(bytes: string | Buffer): void {
    this.child.stdin.write(bytes)
  }

  /** A request with a fresh string id; its answer, or a failure naming the hang or the exit. */
  request(method: string, params?: unknown): Promise<Message> {
    const id = `fuzz-${++this.next}`
    return new Promise<Message>((resolve, reject) => {
      if (this.exit !== undefined) return reject(new Error(`${method}: the server had exited ${this.describe()}`))
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        reject(new Error(`${method}: no answer within ${HANG_MS} ms ${this.describe()}`))
      }, HANG_MS)
      this.onExit.push(() => reject(new Error(`${method}: the server exited ${this.describe()}`)))
      this.waiting.set(id, (message) => {
        clearTimeout(timer)
        resolve(message)
      })
      this.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }) + "\n")
    })
  }

  /** A tool call's result (`isError` and all); a JSON-RPC error instead fails. */
  async call(name: string, args: unknown): Promise<{ isError?: boolean; structuredContent?: any; content: any }> {
    const answer = await this.request("tools/call", { name, arguments: args })
    if (answer.error !== undefined) throw new Error(`tools/call ${name}: ${JSON.stringify(answer.error)}`)
    return answer.result
  }

  async initialize(): Promise<void> {
    const answer = await this.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "memdir-fuzz", version: "0" }
    })
    assert.isDefined(answer.result, JSON.stringify(answer))
    this.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
  }

  describe(): string {
    return `(exit ${JSON.stringify(this.exit ?? null)}; stderr: ${this.stderr.slice(-600)})`
  }

  async close(): Promise<void> {
    if (this.exit !== undefined) return
    const exited = new Promise<void>((resolve) => this.onExit.push(resolve))
    this.child.stdin.end()
    await exited
  }
}

/** `<scratch>/<name>/l1/l2/memory` and an `outside/secret.md` beside it, deep enough that `../..` stays in it. */
const world = (name: string) => {
  const base = path.join(scratch, name)
  const memoryDir = path.join(base, "l1", "l2", "memory")
  fs.mkdirSync(memoryDir, { recursive: true, mode: 0o700 })
  fs.mkdirSync(path.join(base, "outside"))
  fs.writeFileSync(path.join(base, "outside", "secret.md"), "outside\n")
  return { base, memoryDir }
}

/** Every file under `dir` with its text (links as their targets), relative and `/`-separated. */
const tree = (dir: string): Map<string, string> => {
  const out = new Map<string, string>()
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name)
    const key = path.relative(dir, full).split(path.sep).join("/")
    if (entry.isFile()) out.set(key, fs.readFileSync(full, "utf8"))
    else if (entry.isSymbolicLink()) out.set(key, `-> ${fs.readlinkSync(full)}`)
    else if (entry.isDirectory()) out.set(key, "<dir>")
  }
  return out
}

/** What changed under `base` outside its memory directory. */
const changedOutside = (base: string, before: Map<string, string>): Array<string> => {
  const after = tree(base)
  const inMemory = (key: string) => key === "l1/l2/memory" || key.startsWith("l1/l2/memory/")
  const keys = new Set([...before.keys(), ...after.keys()])
  return [...keys].filter((key) => !inMemory(key) && before.get(key) !== after.get(key)).sort()
}

/**
 * What is wrong with the memory directory: a memory that does not parse (torn), one without exactly its one index
 * line rendered from its frontmatter, a line for a file that is not there.
 */
const unsoundness = (memoryDir: string): Array<string> => {
  const problems: Array<string> = []
  const files = [...tree(memoryDir)].filter(([key, text]) =>
    text !== "<dir>" && !text.startsWith("-> ") && !key.split("/").some((s) => s.startsWith(".")) &&
    key !== "MEMORY.md" && key !== "team/MEMORY.md"
  )
  const indexLines = (key: string) => {
    const file = path.join(memoryDir, key)
    return fs.existsSync(file) ?
      fs.readFileSync(file, "utf8").split("\n").filter((line) => parseIndexLine(line) !== undefined) :
      []
  }
  const lines = { private: indexLines("MEMORY.md"), team: indexLines("team/MEMORY.md") }
  const linked = { private: new Set<string>(), team: new Set<string>() }
  for (const [key, text] of files) {
    const scope = key.startsWith("team/") ? "team" : "private"
    const link = scope === "team" ? key.slice("team/".length) : key
    linked[scope].add(link)
    const parsed = parseMemoryFile(text, key)
    if (Result.isFailure(parsed)) {
      problems.push(`${key}: does not parse (${parsed.failure.message})`)
      continue
    }
    const { description, name } = parsed.success.frontmatter
    const expected = formatIndexEntry({ title: String(name), file: link, hook: String(description) })
    const mine = lines[scope].filter((line) => parseIndexLine(line)?.file === link)
    if (mine.length !== 1 || mine[0] !== expected) {
      problems.push(`${key}: index lines ${JSON.stringify(mine)}, expected ${JSON.stringify(expected)}`)
    }
  }
  for (const scope of ["private", "team"] as const) {
    for (const line of lines[scope]) {
      if (!linked[scope].has(parseIndexLine(line)!.file)) problems.push(`${scope} index: ${line} has no file`)
    }
  }
  return problems
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------------------------

const anything = FastCheck.anything({ maxDepth: 2, maxKeys: 4 })

/** A line that is not a valid JSON-RPC message, or one with wrong parts (no newline inside). */
const junkLine: FastCheck.Arbitrary<string> = FastCheck.oneof(
  FastCheck.string({ unit: "binary", maxLength: 60 }),
  FastCheck.json({ maxDepth: 3 }),
  FastCheck.constantFrom(
    "",
    "{",
    "}",
    "[]",
    "null",
    "\u0000\u0001",
    "{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}",
    `{"jsonrpc":"2.0","id":${"9".repeat(400)},"method":"ping"}`,
    `{"jsonrpc":"2.0","id":"${"i".repeat(100_000)}","method":"ping"}`,
    "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}",
    "\uFEFF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
  ),
  FastCheck.record({
    jsonrpc: FastCheck.constantFrom("1.0", "2", 2, null),
    id: FastCheck.integer(),
    method: FastCheck.constantFrom("ping", "tools/list", "tools/call")
  }).map((m) => JSON.stringify(m)),
  // a missing id or method, or params of the wrong type
  FastCheck.record({
    jsonrpc: FastCheck.constant("2.0"),
    id: FastCheck.oneof(FastCheck.integer(), FastCheck.string({ maxLength: 8 }), FastCheck.constant(null)),
    method: FastCheck.constantFrom("tools/call", "tools/list", "resources/read", "initialize", "nope", 42),
    params: anything
  }, { requiredKeys: ["jsonrpc"] }).map((m) => JSON.stringify(m)),
  // a batch
  FastCheck.array(
    FastCheck.record({
      jsonrpc: FastCheck.constant("2.0"),
      id: FastCheck.integer({ min: 1, max: 1000 }),
      method: FastCheck.constantFrom("ping", "tools/list")
    }),
    { maxLength: 4 }
  ).map((batch) => JSON.stringify(batch))
).map((line) => line.replace(/\n/g, " "))

const hostilePath: FastCheck.Arbitrary<string> = FastCheck.oneof(
  { arbitrary: FastCheck.constantFrom(...hostilePaths), weight: 3 },
  // where memory_write puts the memories it is given (type_name.md), so reads, edits and renames find them
  {
    arbitrary: FastCheck.tuple(
      FastCheck.constantFrom("", "team/"),
      FastCheck.constantFrom("user", "feedback", "project", "reference"),
      FastCheck.constantFrom("fuzz_one", "fuzz_two")
    ).map(([dir, type, stem]) => `${dir}${type}_${stem}.md`),
    weight: 4
  },
  { arbitrary: FastCheck.string({ unit: "binary", maxLength: 20 }), weight: 1 }
)
const text = FastCheck.oneof(FastCheck.string({ maxLength: 40 }), FastCheck.constantFrom("Fuzz", "---", "a\nb"))
const memoryType = FastCheck.oneof(
  { arbitrary: FastCheck.constantFrom("user", "feedback", "project", "reference"), weight: 4 },
  { arbitrary: anything, weight: 1 }
)
const maybe = <A>(arbitrary: FastCheck.Arbitrary<A>) => FastCheck.option(arbitrary, { nil: undefined })

/** A tool call: a tool and arguments drawn from its schema (hostile paths), now and then wrong types or extras. */
const toolCall: FastCheck.Arbitrary<{ readonly name: string; readonly args: unknown }> = FastCheck.oneof(
  FastCheck.record({
    name: FastCheck.constant("memory_write"),
    args: FastCheck.record({
      type: memoryType,
      name: FastCheck.oneof(FastCheck.constantFrom("Fuzz one", "Fuzz two"), text),
      description: text,
      body: text,
      scope: maybe(FastCheck.oneof(FastCheck.constantFrom("private", "team"), anything))
    }, { requiredKeys: ["type", "name", "description", "body"] })
  }),
  FastCheck.record({
    name: FastCheck.constantFrom("memory_read", "memory_delete"),
    args: FastCheck.record({ path: hostilePath })
  }),
  FastCheck.record({
    name: FastCheck.constant("memory_edit"),
    args: FastCheck.record({ path: hostilePath, old_str: text, new_str: text })
  }),
  FastCheck.record({
    name: FastCheck.constant("memory_rename"),
    args: FastCheck.record({ path: hostilePath, new_path: hostilePath })
  }),
  FastCheck.record({
    name: FastCheck.constantFrom("memory_list", "memory_search", "memory_recall"),
    args: FastCheck.record({
      query: text,
      scope: maybe(FastCheck.constantFrom("private", "team", "all", "../x")),
      limit: maybe(FastCheck.integer({ min: -5, max: 100 }))
    }, { requiredKeys: [] })
  }),
  FastCheck.record({ name: FastCheck.oneof(FastCheck.constantFrom("memory_nope"), text), args: anything })
)

// ---------------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------------

describe("memdir mcp fuzzed over raw stdio", () => {
  it("answers calls before initialize, then initialize, and keeps serving", async () => {
    const w = world("before-init")
    const server = new RawServer(w.memoryDir)
    try {
      const listed = await server.call("memory_list", {})
      assert.isNotTrue(listed.isError, JSON.stringify(listed))
      assert.isDefined((await server.request("ping")).result)
      await server.initialize()
      assert.isDefined((await server.request("tools/list")).result)
      assert.deepStrictEqual(server.strayLines, [])
    } finally {
      await server.close()
    }
  })

  it(
    "junk lines (non-JSON, wrong version, no id or method, huge ids, wrong params, batches) never stop it",
    { timeout: 60_000 },
    () =>
      FastCheck.assert(
        FastCheck.asyncProperty(FastCheck.array(junkLine, { minLength: 1, maxLength: 6 }), async (lines) => {
          const server = junkServer!
          server.write(lines.map((line) => `${line}\n`).join(""))
          const answer = await server.request("ping")
          assert.isDefined(answer.result, `after ${JSON.stringify(lines)}: ${JSON.stringify(answer)}`)
          assert.deepStrictEqual(server.strayLines, [], "stdout carries only JSON-RPC")
        }),
        { numRuns: 100 }
      )
  )

  it("a 10 MB request is answered; a line over the 10 MiB read buffer is dropped and the server keeps serving", async () => {
    const w = world("oversized")
    const server = new RawServer(w.memoryDir)
    try {
      await server.initialize()
      const big = await server.call("memory_write", {
        type: "project",
        name: "Big",
        description: "too big",
        body: "x".repeat(10_000_000)
      })
      assert.isTrue(big.isError, "a 10 MB memory is refused")
      assert.include(JSON.stringify(big.content), "over the limit")
      server.write(`{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":"${"y".repeat(12 * 1024 * 1024)}"}}\n`)
      const after = await server.request("ping")
      assert.isDefined(after.result, server.describe())
      const written = await server.call("memory_write", { type: "user", name: "After", description: "d", body: "b" })
      assert.isNotTrue(written.isError, JSON.stringify(written))
      assert.deepStrictEqual(unsoundness(w.memoryDir), [])
      assert.deepStrictEqual(server.strayLines, [])
    } finally {
      await server.close()
    }
  })

  it(
    "random tool calls with hostile paths, many at once: nothing outside, scopes kept, every file indexed",
    { timeout: 60_000 },
    () =>
      FastCheck.assert(
        FastCheck.asyncProperty(FastCheck.array(toolCall, { minLength: 1, maxLength: 8 }), async (calls) => {
          const server = toolServer!
          const before = tree(toolWorld!.base)
          // arguments that are not an object are a JSON-RPC error (the SDK's request schema), anything else a result
          const answers = await Promise.all(
            calls.map((c) => server.request("tools/call", { name: c.name, arguments: c.args }))
          )
          for (const [i, answer] of answers.entries()) {
            const { args, name } = calls[i]!
            const at = `${name} ${JSON.stringify(args)}`
            assert.isTrue(
              (answer.result === undefined) !== (answer.error === undefined),
              `${at}: ${JSON.stringify(answer)}`
            )
            if (answer.result === undefined || answer.result.isError === true) continue
            const out = answer.result.structuredContent
            if (name === "memory_write") {
              const team = (args as { scope?: unknown }).scope === "team"
              assert.strictEqual(out.scope, team ? "team" : "private", at)
              assert.strictEqual(out.path.startsWith("team/"), team, `${at}: landed at ${out.path}`)
            }
            if (name === "memory_rename") {
              assert.strictEqual(out.scope, out.path.startsWith("team/") ? "team" : "private", `${at}: ${out.path}`)
              const asked = String((args as { new_path: unknown }).new_path)
              if (requestedScope(asked) === "team") {
                assert.strictEqual(out.scope, "team", `${at}: landed at ${out.path}`)
              }
            }
          }
          assert.deepStrictEqual(changedOutside(toolWorld!.base, before), [], "outside the memory directory")
          assert.deepStrictEqual(unsoundness(toolWorld!.memoryDir), [], "the memory directory")
          assert.deepStrictEqual(server.strayLines, [], "stdout carries only JSON-RPC")
          assert.isDefined((await server.request("ping")).result, "still serving")
        }),
        { numRuns: 30 }
      )
  )

  it(
    "concurrent writes of different and of the same memory all land, reads meanwhile see whole files",
    { timeout: 60_000 },
    () =>
      FastCheck.assert(
        FastCheck.asyncProperty(
          FastCheck.integer({ min: 1, max: 8 }),
          // bodies that are not blank: a blank body is refused by every door (docs/file-format.md)
          FastCheck.array(FastCheck.stringMatching(/^[A-Za-z0-9.,][A-Za-z0-9 .,]{0,59}$/), {
            minLength: 2,
            maxLength: 6
          }),
          FastCheck.boolean(),
          async (distinct, sameBodies, team) => {
            const server = toolServer!
            const run = ++concurrentRuns
            const scope = team ? "team" : "private"
            const write = (name: string, body: string) =>
              server.call("memory_write", { type: "project", name, description: `run ${run}`, body, scope })
            const sameName = `Shared ${run}`
            const first = await write(sameName, "the first version")
            assert.isNotTrue(first.isError, JSON.stringify(first))
            const sharedPath: string = first.structuredContent.path
            const answers = await Promise.all([
              ...Array.from({ length: distinct }, (_, i) => write(`Distinct ${run} ${i}`, `body ${i}`)),
              ...sameBodies.map((body) => write(sameName, body)),
              ...sameBodies.map(() => server.call("memory_read", { path: sharedPath }))
            ])
            const writes = answers.slice(0, distinct + sameBodies.length)
            for (const answer of writes) assert.isNotTrue(answer.isError, JSON.stringify(answer.content))
            // every read saw a whole file: the first version or one of the concurrent ones
            const bodies = ["the first version", ...sameBodies].map((b) => b.trim())
            for (const read of answers.slice(distinct + sameBodies.length)) {
              assert.isNotTrue(read.isError, JSON.stringify(read.content))
              assert.include(bodies, String(read.structuredContent.body).trim(), "a read during the writes")
            }
            const distinctPaths = new Set(writes.slice(0, distinct).map((w) => w.structuredContent.path as string))
            assert.strictEqual(distinctPaths.size, distinct, "each distinct memory has its own file")
            for (const p of [...distinctPaths, sharedPath]) {
              assert.strictEqual(p.startsWith("team/"), team, p)
              assert.isTrue(fs.existsSync(path.join(toolWorld!.memoryDir, p)), p)
            }
            assert.strictEqual(writes.slice(distinct).every((w) => w.structuredContent.path === sharedPath), true)
            const shared = parseMemoryFile(
              fs.readFileSync(path.join(toolWorld!.memoryDir, sharedPath), "utf8"),
              sharedPath
            )
            assert.include(bodies, Result.getOrThrow(shared).body.trim(), "the shared memory is one whole version")
            assert.deepStrictEqual(unsoundness(toolWorld!.memoryDir), [], "the memory directory")
          }
        ),
        { numRuns: 10 }
      )
  )
})

let junkServer: RawServer | undefined
let toolServer: RawServer | undefined
let toolWorld: ReturnType<typeof world> | undefined
let concurrentRuns = 0

beforeAll(async () => {
  junkServer = new RawServer(world("junk").memoryDir)
  await junkServer.initialize()
  toolWorld = world("tools")
  toolServer = new RawServer(toolWorld.memoryDir)
  await toolServer.initialize()
})

afterAll(async () => {
  await junkServer?.close()
  await toolServer?.close()
})
