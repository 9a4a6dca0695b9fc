/**
 * `TestMemdir.layer` is one in-memory world: what one live service writes, the others read, and the real disk
 * never sees it.
 */
import { assert, describe, it } from "@effect/vitest"
import { diagnose } from "@memdir/core/Doctor"
import { diffSnapshots, snapshotMemoryDir } from "@memdir/core/dream/snapshot"
import * as MemoryFs from "@memdir/core/MemoryFs"
import * as Recall from "@memdir/core/Recall"
import * as Scanner from "@memdir/core/Scanner"
import { writeMemory } from "@memdir/core/Write"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as NodeFs from "node:fs"
import * as TestMemdir from "../src/TestMemdir.js"

const memoryDir = TestMemdir.DEFAULT_MEMORY_DIR

const writeRunbook = writeMemory({
  memoryDir,
  type: "reference",
  name: "Deploy runbook",
  description: "The production deploy runbook lives in docs/deploy.md and needs the release freeze flag",
  body: "Read docs/deploy.md before any production deploy."
})

describe("TestMemdir.layer: one in-memory world", () => {
  it.effect("a write is recalled and scanned, and nothing reaches the disk", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 day") // the write's mtime comes from the clock: newer than the seeded memory
      const written = yield* writeRunbook
      assert.isTrue(written.created)
      const session = yield* Recall.RecallSession
      const result = yield* session.recall({ memoryDir, query: "where is the production deploy runbook?" })
      assert.deepStrictEqual(result.selected.map((m) => m.path), [written.file])
      const scan = yield* (yield* Scanner.Scanner).scan(memoryDir)
      assert.deepStrictEqual(scan.memories.map((m) => m.name), ["Deploy runbook", "Testing policy"])
      assert.isFalse(NodeFs.existsSync(memoryDir), "the in-memory world never touches the disk")
    }).pipe(Effect.provide(TestMemdir.layer({
      memories: [{ type: "feedback", name: "Testing policy", description: "Integration tests hit a real database" }]
    }))))

  it.effect("doctor sees a file written through MemoryFs that the index does not list", () =>
    Effect.gen(function*() {
      const fs = yield* MemoryFs.MemoryFs
      yield* fs.writeFileAtomic(
        `${memoryDir}feedback_orphan.md`,
        "---\nname: Orphan\ndescription: Not in the index\ntype: feedback\n---\nbody\n"
      )
      const { findings } = yield* diagnose(memoryDir)
      assert.deepStrictEqual(
        findings.map((f) => `${f.code} ${f.path ?? ""}`).filter((line) => line.includes("orphan")),
        ["missing-from-index feedback_orphan.md"]
      )
    }).pipe(Effect.provide(TestMemdir.layer({ memories: [] }))))

  it.effect("a dream's snapshot sees a write and diffs it", () =>
    Effect.gen(function*() {
      const before = yield* snapshotMemoryDir(memoryDir)
      const written = yield* writeRunbook
      const after = yield* snapshotMemoryDir(memoryDir)
      const diff = diffSnapshots(before, after)
      assert.deepStrictEqual(diff.created.map((created) => created.file), [written.file])
    }).pipe(Effect.provide(TestMemdir.layer({ memories: [] }))))
})
