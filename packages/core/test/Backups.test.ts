import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { discardBackup, keepBackup, listBackups, parseStamp, readBackup, readBackups } from "../src/Backups.js"
import * as MemoryFs from "../src/MemoryFs.js"

const live = Layer.mergeAll(MemoryFs.layer, NodeServices.layer)

const scratch = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-backups-" }))
})

const put = (root: string, file: string, text: string) => {
  NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, file)), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(root, file), text)
}

describe("Backups", () => {
  it("parses run directory names, and nothing else", () => {
    assert.deepStrictEqual(parseStamp("2026-03-05T12-00-00Z"), { at: Date.parse("2026-03-05T12:00:00Z"), n: 1 })
    assert.deepStrictEqual(parseStamp("2026-03-05T12-00-00Z-3"), { at: Date.parse("2026-03-05T12:00:00Z"), n: 3 })
    for (const name of ["report.json", "2026-03-05", "2026-13-45T99-00-00Z", "..", "2026-03-05T12-00-00Z-x"]) {
      assert.isUndefined(parseStamp(name), name)
    }
  })

  it.effect("finds every program's backups of a memory, newest first; reads them; keeps and discards its own", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      put(root, ".dream/2026-03-01T03-00-00Z/feedback_x.md", "before the first dream")
      put(root, ".dream/2026-03-01T03-00-00Z/report.json", "{}")
      put(root, ".dream/2026-03-02T03-00-00Z/other.md", "another memory")
      put(root, ".extract/session-1/2026-03-03T10-00-00Z/feedback_x.md", "before extraction")
      put(root, ".extract/session-1.json", "{}")
      put(root, ".doctor/2026-03-04T08-00-00Z/MEMORY.md", "the index")
      put(root, ".dream/not-a-run/feedback_x.md", "not a run")
      yield* TestClock.setTime(Date.parse("2026-03-06T09:00:00Z"))
      const kept = yield* keepBackup(root, "delete-backup", "feedback_x.md", "before the delete")
      assert.strictEqual(kept, ".deleted/2026-03-06T09-00-00Z/feedback_x.md")

      const found = yield* listBackups(root, "feedback_x.md")
      assert.deepStrictEqual(found.map((b) => [b.source, b.file, b.session]), [
        ["delete-backup", kept, undefined],
        ["extract-backup", ".extract/session-1/2026-03-03T10-00-00Z/feedback_x.md", "session-1"],
        ["dream-backup", ".dream/2026-03-01T03-00-00Z/feedback_x.md", undefined]
      ])
      assert.strictEqual(yield* readBackup(root, found[2]!.file), "before the first dream")
      const texts = yield* readBackups(root, [...found.map((b) => b.file), ".dream/gone/feedback_x.md"])
      assert.deepStrictEqual([...texts.values()], ["before the delete", "before extraction", "before the first dream"])
      assert.deepStrictEqual((yield* listBackups(root, "MEMORY.md")).map((b) => b.source), ["doctor-backup"])

      yield* discardBackup(root, kept)
      assert.isFalse(NodeFs.existsSync(NodePath.join(root, NodePath.dirname(kept))))
      // only what keepBackup makes is ever discarded
      yield* discardBackup(root, ".dream/2026-03-01T03-00-00Z/feedback_x.md")
      assert.isTrue(NodeFs.existsSync(NodePath.join(root, ".dream/2026-03-01T03-00-00Z/feedback_x.md")))
    }).pipe(Effect.scoped, Effect.provide(live)))

  it.effect("a state directory that is a link leading out is listed but never read or written through", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const memoryDir = NodePath.join(root, "memory")
      const outside = NodePath.join(root, "outside")
      put(outside, "2026-03-01T03-00-00Z/feedback_x.md", "a file elsewhere")
      NodeFs.mkdirSync(memoryDir)
      NodeFs.symlinkSync(outside, NodePath.join(memoryDir, ".dream"))
      NodeFs.symlinkSync(outside, NodePath.join(memoryDir, ".deleted"))
      const found = yield* listBackups(memoryDir, "feedback_x.md")
      assert.strictEqual((yield* readBackups(memoryDir, found.map((b) => b.file))).size, 0)
      const error = yield* Effect.flip(readBackup(memoryDir, ".dream/2026-03-01T03-00-00Z/feedback_x.md"))
      assert.strictEqual(error._tag, "MemoryIoError")
      const refused = yield* Effect.flip(keepBackup(memoryDir, "delete-backup", "feedback_x.md", "secret"))
      assert.strictEqual(refused._tag, "PathTraversalError")
      assert.deepStrictEqual(NodeFs.readdirSync(outside), ["2026-03-01T03-00-00Z"])
    }).pipe(Effect.scoped, Effect.provide(live)))
})
