import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import { fileURLToPath } from "node:url"
import { parseMemoryFile } from "../src/Frontmatter.js"
import { stampHeader, writtenAt } from "../src/MemoryAge.js"
import { layer as memoryIndexLayer } from "../src/MemoryIndex.js"
import { detectLayout, kebabName, renderMemory, sameMemoryName, stampModified } from "../src/MemoryLayout.js"
import * as MemoryStore from "../src/MemoryStore.js"
import { layerNode as scannerLayer, Scanner } from "../src/Scanner.js"
import { writeMemory } from "../src/Write.js"

/** Copies of real memory directories of the reference agent (fixtures/reference-memories/SOURCES.md). */
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/reference-memories/${name}`, import.meta.url))

const DAY = 86_400_000

describe("MemoryAge (pure)", () => {
  const header = (extra: Record<string, unknown>) => ({ extra, mtime: 5 * DAY })

  it("counts from a sane modified:, top-level or under metadata:", () => {
    const at = Date.parse("2026-08-03T22:34:12.076Z")
    const now = at + 40 * DAY
    assert.deepStrictEqual(writtenAt(header({ metadata: { modified: "2026-08-03T22:34:12.076Z" } }), now), {
      at,
      from: "modified"
    })
    assert.deepStrictEqual(writtenAt(header({ modified: new Date(at) }), now), { at, from: "modified" })
    // Top-level wins over metadata's.
    assert.strictEqual(
      writtenAt(header({ modified: "2026-08-01", metadata: { modified: "2026-08-03" } }), now).at,
      Date.parse("2026-08-01")
    )
  })

  it("ignores a modified: in the future or not a time, with a reason, and falls back to commit, then mtime", () => {
    const now = 10 * DAY
    const future = writtenAt(header({ modified: new Date(now + DAY).toISOString() }), now)
    assert.strictEqual(future.at, 5 * DAY)
    assert.strictEqual(future.from, "mtime")
    assert.include(future.warning, "is in the future")
    const bogus = writtenAt(header({ modified: "last tuesday" }), now, 3 * DAY)
    assert.deepStrictEqual([bogus.at, bogus.from], [3 * DAY, "commit"])
    assert.include(bogus.warning, "not an ISO 8601 timestamp")
    assert.deepStrictEqual(writtenAt(header({}), now, 2 * DAY), { at: 2 * DAY, from: "commit" })
    // A clock skew of a minute is "now", not the future.
    assert.deepStrictEqual(writtenAt(header({ modified: new Date(now + 60_000).toISOString() }), now), {
      at: now,
      from: "modified"
    })
  })

  it("stamps a header, keeping any earlier warning", () => {
    const stamped = stampHeader(
      {
        path: "a.md",
        absolutePath: "/m/a.md",
        name: "a",
        description: "d",
        type: "user",
        mtime: DAY,
        extra: { modified: "3000-01-01" },
        warning: "no description"
      },
      2 * DAY
    )
    assert.strictEqual(stamped.writtenAt, DAY)
    assert.strictEqual(stamped.writtenFrom, "mtime")
    assert.match(stamped.warning!, /^no description; modified: .* is in the future/)
  })
})

describe("MemoryLayout (pure)", () => {
  it("kebab slugs and names of one memory", () => {
    assert.strictEqual(kebabName("Testing Policy"), "testing-policy")
    assert.strictEqual(kebabName("Café: déjà vu!"), "cafe-deja-vu")
    assert.strictEqual(kebabName("테스트"), undefined)
    assert.isTrue(sameMemoryName("testing-policy", "Testing Policy"))
    assert.isTrue(sameMemoryName("Testing policy", "testing POLICY"))
    assert.isFalse(sameMemoryName("C tips", "C++ tips"))
  })

  it("stampModified edits in place: replaces a nested modified:, adds one beside a nested type, else top-level", () => {
    const nested =
      "---\nname: a\nmetadata: \n  node_type: memory\n  type: feedback\n  modified: 2026-01-01T00:00:00.000Z\n" +
      "---\n\nbody\n"
    assert.strictEqual(
      stampModified(nested, "2026-12-01T00:00:00.000Z"),
      nested.replace("2026-01-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z")
    )
    const noModified = "---\nname: a\nmetadata:\n  type: user\n  originSessionId: x\nlinks: 1\n---\nb\n"
    assert.strictEqual(
      stampModified(noModified, "T"),
      "---\nname: a\nmetadata:\n  type: user\n  originSessionId: x\n  modified: T\nlinks: 1\n---\nb\n"
    )
    assert.strictEqual(
      stampModified("---\r\nname: a\r\ntype: user\r\n---\r\nb", "T"),
      "---\r\nname: a\r\ntype: user\r\nmodified: T\r\n---\r\nb"
    )
    assert.strictEqual(
      stampModified("---\nmodified: |\n  old\n  lines\ntype: user\n---\n", "T"),
      "---\nmodified: T\ntype: user\n---\n"
    )
    assert.strictEqual(stampModified("no header", "T"), "no header")
  })

  it("renders both layouts, moving type (and modified) without losing a key", () => {
    const extra = { metadata: { node_type: "memory", type: "user", modified: "2026-01-01" }, originSessionId: "s" }
    const fields = { name: "n", description: "d", type: "feedback" as const }
    const flat = Result.getOrThrow(parseMemoryFile(renderMemory(fields, extra, "b\n", "flat"), "x.md")).frontmatter
    assert.strictEqual(flat.type, "feedback")
    assert.deepStrictEqual(flat.extra, {
      metadata: { node_type: "memory" },
      originSessionId: "s",
      modified: "2026-01-01"
    })
    const back = renderMemory(fields, flat.extra, "b\n", "nested")
    const nested = Result.getOrThrow(parseMemoryFile(back, "x.md")).frontmatter
    assert.notMatch(back, /^type:/m)
    assert.deepStrictEqual(nested.extra, {
      metadata: { node_type: "memory", type: "feedback", modified: "2026-01-01" },
      originSessionId: "s"
    })
  })
})

const live = MemoryStore.layerNode.pipe(
  Layer.provideMerge(Layer.mergeAll(memoryIndexLayer, scannerLayer)),
  Layer.provideMerge(NodeServices.layer)
)

/** A writable copy of a fixture directory. */
const copyOf = (name: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = path.join(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-layout-" }), "memory")
    yield* fs.copy(fixture(name), dir)
    return dir
  })

const headerOf = (file: string) =>
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) =>
      Effect.map(fs.readFileString(file), (text) => [text, Result.getOrThrow(parseMemoryFile(text, file))] as const)
  )

layer(live)("writes in the directory's own layout (copies of real directories)", (it) => {
  it.effect("detects nested metadata: and kebab names in KoEnVue and haAutomation, top-level keys in RaceIQ", () =>
    Effect.gen(function*() {
      const scanner = yield* Scanner
      for (const name of ["koenvue", "haautomation"]) {
        const scan = yield* scanner.scan(fixture(name))
        assert.deepStrictEqual(detectLayout(scan.memories), { layout: "nested", nameStyle: "kebab" }, name)
      }
      const raceiq = yield* scanner.scan(fixture("raceiq"))
      assert.deepStrictEqual(detectLayout(raceiq.memories), { layout: "flat", nameStyle: "text" })
    }))

  it.effect("a new memory in a nested directory is nested, kebab-named and stamped under metadata:", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-09-01T10:00:00.000Z"))
      const dir = yield* copyOf("koenvue")
      const result = yield* writeMemory({
        memoryDir: dir,
        type: "feedback",
        name: "Build Both Configurations",
        description: "Always build debug and release",
        body: "Both."
      })
      const [text, parsed] = yield* headerOf(result.path)
      assert.notMatch(text, /^type:/m)
      assert.match(text, /^metadata:\n {2}type: feedback\n {2}modified: 2026-09-01T10:00:00\.000Z$/m)
      assert.strictEqual(parsed.frontmatter.name, "build-both-configurations")
      assert.strictEqual(parsed.frontmatter.type, "feedback")
      const scan = yield* (yield* Scanner).scan(dir)
      const header = scan.memories.find((m) => m.path === result.file)!
      assert.deepStrictEqual([header.writtenAt, header.writtenFrom], [
        Date.parse("2026-09-01T10:00:00.000Z"),
        "modified"
      ])
    }))

  it.effect("an update keeps every key (originSessionId, node_type), the slug name and the nested layout", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-09-02T00:00:00.000Z"))
      const dir = yield* copyOf("koenvue")
      const path = yield* Path.Path
      const [before] = yield* headerOf(path.join(dir, "record-only-what-was-verified.md"))
      const result = yield* writeMemory({
        memoryDir: dir,
        type: "feedback",
        name: "Record only what was verified",
        description: "Check whether done means verified or untracked",
        body: "Updated body."
      })
      assert.strictEqual(result.file, "record-only-what-was-verified.md")
      assert.isFalse(result.created)
      const [after, parsed] = yield* headerOf(result.path)
      assert.strictEqual(parsed.frontmatter.name, "record-only-what-was-verified")
      const metadata = parsed.frontmatter.extra.metadata as Record<string, unknown>
      assert.strictEqual(metadata.node_type, "memory")
      assert.strictEqual(metadata.type, "feedback")
      assert.strictEqual(metadata.originSessionId, "65b5b97e-a7b3-4bbd-ae8a-7f3c5686bfb1")
      assert.strictEqual(new Date(metadata.modified as string).toISOString(), "2026-09-02T00:00:00.000Z")
      assert.notMatch(after, /^type:/m)
      assert.include(before, "modified: 2026-08-03T22:34:12.076Z")
    }))

  it.effect("a forced layout wins: top-level keys in a nested directory, nested in a flat one", () =>
    Effect.gen(function*() {
      const flatInNested = yield* writeMemory({
        memoryDir: yield* copyOf("koenvue"),
        type: "project",
        name: "Release train",
        description: "Releases leave on Fridays",
        body: "Ship on Fridays.",
        layout: "flat"
      })
      const [flatText] = yield* headerOf(flatInNested.path)
      assert.match(flatText, /^type: project$/m)
      assert.notMatch(flatText, /^metadata:/m)
      const nestedInFlat = yield* writeMemory({
        memoryDir: yield* copyOf("raceiq"),
        type: "project",
        name: "Release train",
        description: "Releases leave on Fridays",
        body: "Ship on Fridays.",
        layout: "nested"
      })
      const [nestedText, parsed] = yield* headerOf(nestedInFlat.path)
      assert.notMatch(nestedText, /^type:/m)
      assert.strictEqual(parsed.frontmatter.type, "project")
      // RaceIQ names are titles: no slug there.
      assert.strictEqual(parsed.frontmatter.name, "Release train")
    }))

  it.effect("an update in a flat directory stays flat and keeps originSessionId", () =>
    Effect.gen(function*() {
      const dir = yield* copyOf("raceiq")
      const result = yield* writeMemory({
        memoryDir: dir,
        type: "feedback",
        name: "Use bunx over npx",
        description: "Always bunx, never npx",
        body: "bunx."
      })
      assert.strictEqual(result.file, "feedback_bunx_over_npx.md")
      const [text, parsed] = yield* headerOf(result.path)
      assert.match(text, /^type: feedback$/m)
      assert.match(text, /^modified: /m)
      assert.strictEqual(parsed.frontmatter.extra.originSessionId, "4e00fe23-a834-4643-80c0-efe052a4ee0c")
    }))
})
