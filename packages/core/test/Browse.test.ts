import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { listMemories, memoryVersion, searchMemories } from "../src/Browse.js"
import * as Scanner from "../src/Scanner.js"

const live = Scanner.layerNode.pipe(Layer.provideMerge(NodeServices.layer))

const memory = (name: string, description: string, type = "feedback") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\nbody of ${name}\n`

/** A memory directory on disk: two private memories, one team memory; mtimes one minute apart (newest first). */
const withDir = <A, E>(f: (dir: string) => Effect.Effect<A, E, Scanner.Scanner>) =>
  Effect.gen(function*() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-browse-"))
    const files: ReadonlyArray<readonly [string, string]> = [
      ["feedback_testing.md", memory("Testing policy", "Integration tests hit a real database")],
      ["reference_dashboards.md", memory("Dashboards", "Checkout latency lives in grafana", "reference")],
      ["team/project_freeze.md", memory("Freeze", "Merge freeze before the mobile release", "project")]
    ]
    const now = Date.now() / 1000
    files.forEach(([file, text], i) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
      fs.writeFileSync(path.join(dir, file), text)
      fs.utimesSync(path.join(dir, file), now - 60 * (i + 1), now - 60 * (i + 1))
    })
    return yield* f(dir).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))))
  }).pipe(Effect.provide(live))

describe("Browse", () => {
  it.effect("lists by scope and type, newest first; team/ only while team memory is on", () =>
    withDir((dir) =>
      Effect.gen(function*() {
        const paths = (ms: ReadonlyArray<{ readonly path: string }>) => ms.map((m) => m.path)
        assert.deepStrictEqual(paths(yield* listMemories({ memoryDir: dir, teamEnabled: false })), [
          "feedback_testing.md",
          "reference_dashboards.md"
        ])
        const all = yield* listMemories({ memoryDir: dir, teamEnabled: true })
        assert.deepStrictEqual(paths(all), ["feedback_testing.md", "reference_dashboards.md", "team/project_freeze.md"])
        assert.deepStrictEqual(all.map((m) => m.scope), ["private", "private", "team"])
        assert.deepStrictEqual(paths(yield* listMemories({ memoryDir: dir, teamEnabled: true, scope: "team" })), [
          "team/project_freeze.md"
        ])
        assert.deepStrictEqual(
          paths(yield* listMemories({ memoryDir: dir, teamEnabled: true, type: "reference" })),
          ["reference_dashboards.md"]
        )
        // each listed memory is its scanned header whole, with its scope (team paths under team/)
        const scanner = yield* Scanner.Scanner
        const privateScan = yield* scanner.scan(dir, { skipDirs: ["team"] })
        const teamScan = yield* scanner.scan(path.join(dir, "team"))
        assert.deepStrictEqual(all, [
          ...privateScan.memories.map((m) => ({ ...m, scope: "private" })),
          ...teamScan.memories.map((m) => ({ ...m, path: `team/${m.path}`, scope: "team" }))
        ])
        const off = yield* Effect.flip(listMemories({ memoryDir: dir, teamEnabled: false, scope: "team" }))
        assert.strictEqual(off._tag, "TeamMemoryDisabledError")
      })
    ))

  it.live("lists by the written time its ages count from (modified:), not by mtime, as ls does", () =>
    withDir((dir) =>
      Effect.gen(function*() {
        // the newest file on disk says it was written 40 days ago: it lists last, with the age it shows
        const old = new Date(Date.now() - 40 * 86_400_000).toISOString()
        fs.writeFileSync(
          path.join(dir, "feedback_old.md"),
          `---\nname: Old\ndescription: written long ago\ntype: feedback\nmodified: ${old}\n---\n\nold\n`
        )
        const listed = yield* listMemories({ memoryDir: dir, teamEnabled: true })
        assert.deepStrictEqual(listed.map((m) => m.path), [
          "feedback_testing.md",
          "reference_dashboards.md",
          "team/project_freeze.md",
          "feedback_old.md"
        ])
      })
    ))

  it.effect("searches with the offline selector's evidence, best first, only what matches, at most limit", () =>
    withDir((dir) =>
      Effect.gen(function*() {
        const hits = yield* searchMemories({ memoryDir: dir, teamEnabled: true, query: "grafana checkout latency" })
        assert.deepStrictEqual(hits.map((h) => h.memory.path), ["reference_dashboards.md"])
        assert.isTrue(hits[0]!.relevant)
        assert.isAbove(hits[0]!.score, 0)
        const team = yield* searchMemories({ memoryDir: dir, teamEnabled: true, query: "merge freeze", scope: "team" })
        assert.deepStrictEqual(team.map((h) => h.memory.path), ["team/project_freeze.md"])
        const hidden = yield* searchMemories({ memoryDir: dir, teamEnabled: false, query: "merge freeze" })
        assert.deepStrictEqual(hidden, [])
        const one = yield* searchMemories({ memoryDir: dir, teamEnabled: true, query: "testing dashboards", limit: 1 })
        assert.strictEqual(one.length, 1)
      })
    ))

  it("a version is a stable hash of the text: equal for equal text, different for any change", () => {
    assert.strictEqual(memoryVersion("a\n"), memoryVersion("a\n"))
    assert.notStrictEqual(memoryVersion("a\n"), memoryVersion("a \n"))
    assert.match(memoryVersion(""), /^[0-9a-f]{16}$/)
  })
})
