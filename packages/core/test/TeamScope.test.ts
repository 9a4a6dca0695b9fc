/**
 * The scope of a key is the one the caller asked for, decided before `..` is collapsed (issue 23): the public
 * traversal payloads of `fixtures/traversal-payloads.txt`, each used as a team key through every door of the
 * library that names a team path (the store, `writeTeamFile`, `writeTeamMemory`, the agents' `memory_write`, the
 * memory-tool backend's `/memories/team/…`), are refused or land inside `team/`: nothing in private memory,
 * nothing outside the memory directory. A private key that collapses into `team/` gets the team rules.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { AgentTool } from "../src/Agent.js"
import { lexicalScoped, requestedScope } from "../src/Containment.js"
import * as MemoryIndex from "../src/MemoryIndex.js"
import * as MemoryStore from "../src/MemoryStore.js"
import { keyOfToolPath } from "../src/MemoryToolBackend.js"
import * as MemoryToolBackend from "../src/MemoryToolBackend.js"
import { make as makeMemoryTools } from "../src/MemoryTools.js"
import * as Scanner from "../src/Scanner.js"
import { writeTeamFile, writeTeamMemory } from "../src/TeamMemory.js"

const live = MemoryToolBackend.layer.pipe(
  Layer.provideMerge(MemoryStore.layerNode),
  Layer.provideMerge(Layer.mergeAll(MemoryIndex.layer, Scanner.layerNode)),
  Layer.provideMerge(NodeServices.layer)
)

const payloads: ReadonlyArray<string> = fs.readFileSync(
  path.join(import.meta.dirname, "fixtures", "traversal-payloads.txt"),
  "utf8"
).split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => JSON.parse(line) as string)

const memoryText = (name: string) => `---\nname: ${name}\ndescription: a payload\ntype: reference\n---\n\nBody.\n`

/** Every file under `dir` (relative, `/`-separated), links included as themselves. */
const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort()

/** <base>/outside/secret.md, <base>/l1/l2/memory (the memory directory): deep enough for `../../..` to stay in base. */
const scratch = () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-scope-")))
  const memoryDir = path.join(base, "l1", "l2", "memory")
  fs.mkdirSync(memoryDir, { recursive: true, mode: 0o700 })
  fs.mkdirSync(path.join(base, "outside"))
  fs.writeFileSync(path.join(base, "outside", "secret.md"), "outside\n")
  return { base, memoryDir, root: { memoryDir, teamEnabled: true } }
}

type Scratch = ReturnType<typeof scratch>

/**
 * After a door took every payload: nothing outside the memory directory, no private memory (only hidden state and
 * the private index, which a team write never creates), every team file has its line in team/MEMORY.md.
 */
const assertOnlyTeam = (s: Scratch, door: string, accepted: number) => {
  const outside = filesUnder(s.base).filter((file) => !file.startsWith("l1/l2/memory/"))
  assert.deepStrictEqual(outside, ["outside/secret.md"], `${door}: files outside the memory directory`)
  assert.strictEqual(fs.readFileSync(path.join(s.base, "outside", "secret.md"), "utf8"), "outside\n")
  const inMemory = filesUnder(s.memoryDir).filter((file) => !file.split("/").some((seg) => seg.startsWith(".")))
  const privateFiles = inMemory.filter((file) => !file.startsWith("team/"))
  assert.deepStrictEqual(privateFiles, [], `${door}: team keys stored as private memory`)
  const teamFiles = inMemory.filter((file) => file.startsWith("team/") && file !== "team/MEMORY.md")
  assert.strictEqual(teamFiles.length, accepted, `${door}: accepted writes and team files`)
  const index = teamFiles.length === 0 ? "" : fs.readFileSync(path.join(s.memoryDir, "team", "MEMORY.md"), "utf8")
  // each file has a line whose link leads back to it (names with `%`, `#`, `(` … are linked encoded)
  const linked = new Set(MemoryIndex.indexEntries(index).map((entry) => MemoryIndex.normalizeIndexLink(entry.file)))
  for (const file of teamFiles) {
    assert.isTrue(linked.has(MemoryIndex.indexKeyOf(file.slice("team/".length))), `${door}: ${file} has no line`)
  }
}

/** Runs `write` for every payload; counts the writes that succeeded, every failure must be a typed refusal. */
const throughDoor = <E extends { readonly _tag: string }, R>(
  door: string,
  write: (s: Scratch, payload: string, i: number) => Effect.Effect<{ readonly inTeam: boolean }, E, R>
) =>
  Effect.gen(function*() {
    const s = scratch()
    let accepted = 0
    const unexpected: Array<string> = []
    for (const [i, payload] of payloads.entries()) {
      const result = yield* Effect.result(write(s, payload, i))
      if (Result.isSuccess(result)) {
        accepted++
        if (!result.success.inTeam) unexpected.push(`${JSON.stringify(payload)}: accepted outside team/`)
      }
    }
    assert.deepStrictEqual(unexpected, [], door)
    return { s, accepted }
  })

describe("a key's scope is decided before normalization", () => {
  it("requestedScope reads the key as written", () => {
    for (const key of ["team/x.md", "./team/x.md", "team/../x.md", "team//tmp/x.md", "team"]) {
      assert.strictEqual(requestedScope(key), "team", key)
    }
    for (const key of ["x.md", "teams/x.md", "sub/../team/x.md", "../team/x.md", "/team/x.md"]) {
      assert.strictEqual(requestedScope(key), "private", key)
    }
    assert.strictEqual(requestedScope("/m/team/../x.md", "/m"), "team")
  })

  it("a team key that leaves team/ or is absolute is refused; one that collapses inside stays team", () => {
    for (const key of ["team/../evil.md", "team//tmp/evil.md", "team/a/../../evil.md", "./team/../evil.md"]) {
      const result = lexicalScoped("/m", key)
      assert.isTrue(Result.isFailure(result) && result.failure.reason === "leaves-team", key)
    }
    const inside = lexicalScoped("/m", "team/a/../b.md")
    assert.deepStrictEqual(Result.map(inside, (c) => [c.key, c.scope]), Result.succeed(["team/b.md", "team"]))
    // asked as private, collapsing into team/: a team key (the store then applies the team rules)
    const collapsed = lexicalScoped("/m", "sub/../team/b.md")
    assert.deepStrictEqual(Result.map(collapsed, (c) => [c.key, c.scope]), Result.succeed(["team/b.md", "team"]))
  })

  it("the memory tool's /memories/team/.. is refused, not read as a private path", () => {
    const left = keyOfToolPath("/memories/team/../evil.md")
    assert.isTrue(Result.isFailure(left) && left.failure.reason === "leaves-team")
    assert.deepStrictEqual(keyOfToolPath("/memories/team/a/../b.md"), Result.succeed("team/b.md"))
    assert.deepStrictEqual(keyOfToolPath("/memories/notes/../b.md"), Result.succeed("b.md"))
  })
})

describe("the traversal corpus as team keys, through every door of the library", () => {
  it("has the payloads issue 23 found stored in private memory", () => {
    assert.isAtLeast(payloads.length, 500)
    for (const key of ["../evil.md", "/../evil.md", "/tmp/evil.md", "/0x2e0x2e/0x2e0x2e/evil.md"]) {
      assert.include(payloads, key)
    }
  })

  it.effect("MemoryStore.write of team/<payload>", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const { accepted, s } = yield* throughDoor("store", (current, payload, i) =>
        store.write(current.root, `team/${payload}`, memoryText(`P${i}`)).pipe(
          Effect.map((written) => ({ inTeam: written.scope === "team" && written.key.startsWith("team/") }))
        ))
      assertOnlyTeam(s, "store", accepted)
    }).pipe(Effect.provide(live)))

  it.effect("writeTeamFile (memdir team write KEY)", () =>
    Effect.gen(function*() {
      const { accepted, s } = yield* throughDoor("writeTeamFile", (current, payload, i) =>
        writeTeamFile({ memoryDir: current.memoryDir, key: payload, content: memoryText(`P${i}`) }).pipe(
          Effect.map((written) => ({ inTeam: written.scope === "team" }))
        ))
      assertOnlyTeam(s, "writeTeamFile", accepted)
    }).pipe(Effect.provide(live)))

  it.effect("writeTeamMemory with a file (memdir write --team --file, MCP memory_write scope team)", () =>
    Effect.gen(function*() {
      const { accepted, s } = yield* throughDoor("writeTeamMemory", (current, payload, i) =>
        writeTeamMemory({
          memoryDir: current.memoryDir,
          type: "reference",
          name: `P${i}`,
          description: "a payload",
          body: "Body.",
          file: payload
        }).pipe(Effect.map((written) => ({ inTeam: written.scope === "team" }))))
      assertOnlyTeam(s, "writeTeamMemory", accepted)
    }).pipe(Effect.provide(live)))

  it.effect("the agents' memory_write of team/<payload> (extractor, dream)", () =>
    Effect.gen(function*() {
      const { accepted, s } = yield* throughDoor("memory_write", (current, payload, i) =>
        Effect.gen(function*() {
          const toolset = yield* makeMemoryTools({ memoryDir: current.memoryDir, team: true })
          const tool: AgentTool = toolset.tools.find((t) => t.definition.name === "memory_write")!
          const answer = yield* tool.run({ path: `team/${payload}`, content: memoryText(`P${i}`) })
          if (answer.isError === true) return yield* Effect.fail({ _tag: "Refused" as const })
          return { inTeam: true }
        }))
      assertOnlyTeam(s, "memory_write", accepted)
    }).pipe(Effect.provide(live)))

  it.effect("the memory-tool backend's create of /memories/team/<payload>", () =>
    Effect.gen(function*() {
      const backend = yield* MemoryToolBackend.MemoryToolBackend
      const { accepted, s } = yield* throughDoor("memory tool", (current, payload, i) =>
        Effect.gen(function*() {
          const answer = yield* backend.answer(current.root, {
            command: "create",
            path: `/memories/team/${payload}`,
            file_text: memoryText(`P${i}`)
          })
          if (answer.is_error) return yield* Effect.fail({ _tag: "Refused" as const })
          return { inTeam: true }
        }))
      assertOnlyTeam(s, "memory tool", accepted)
    }).pipe(Effect.provide(live)))
})
