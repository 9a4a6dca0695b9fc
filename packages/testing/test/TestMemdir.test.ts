import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Memdir from "@memdir/core/Memdir"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryPaths from "@memdir/core/MemoryPaths"
import { buildMemoryPrompt } from "@memdir/core/Prompt"
import * as Recall from "@memdir/core/Recall"
import * as Scanner from "@memdir/core/Scanner"
import { writeMemory } from "@memdir/core/Write"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as Fixtures from "../src/Fixtures.js"
import * as TestMemdir from "../src/TestMemdir.js"

const DAY = 86_400_000

const memories: ReadonlyArray<TestMemdir.TestMemory> = [
  {
    type: "project",
    name: "Connection pool",
    description: "Database connection pool capped at 10 in src/db.ts:12 for the hosting plan",
    body: "Pool max is 10 (src/db.ts:12).",
    ageDays: 47
  },
  {
    type: "feedback",
    name: "Testing policy",
    description: "Integration tests must hit a real database, never mocks",
    body: "Use the docker-compose Postgres."
  }
]

describe("TestMemdir.layer: the whole memdir in memory", () => {
  it.effect("recall ages memories from the TestClock and flags the old one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(100 * DAY)
      const location = yield* (yield* MemoryPaths.MemoryPaths).resolve("/anywhere")
      const session = yield* Recall.RecallSession
      const result = yield* session.recall({ memoryDir: location.memoryDir, query: "how big is the database pool?" })
      assert.strictEqual(result.candidates, 2)
      assert.deepStrictEqual(result.selected.map((m) => m.path), ["project_connection_pool.md"])
      assert.strictEqual(result.selected[0].age, "47 days ago")
      assert.include(result.selected[0].caveat ?? "", "47 days old")
    }).pipe(Effect.provide(TestMemdir.layer({ memories, now: 100 * DAY }))))

  it.effect("a scripted selector replaces the offline one", () =>
    Effect.gen(function*() {
      const session = yield* Recall.RecallSession
      const result = yield* session.recall({ memoryDir: TestMemdir.DEFAULT_MEMORY_DIR, query: "anything at all" })
      assert.strictEqual(result.selector, "scripted")
      assert.deepStrictEqual(result.selected.map((m) => m.path), ["feedback_testing_policy.md"])
    }).pipe(
      Effect.provide(TestMemdir.layer({ memories, selector: { "anything at all": ["feedback_testing_policy.md"] } }))
    ))

  it.effect("the prompt is built from the in-memory index", () =>
    Effect.gen(function*() {
      const index = yield* (yield* MemoryIndex.MemoryIndex).load(TestMemdir.DEFAULT_MEMORY_DIR)
      const prompt = yield* buildMemoryPrompt({ memoryDir: TestMemdir.DEFAULT_MEMORY_DIR, index })
      assert.include(prompt, "[Testing policy](feedback_testing_policy.md)")
      assert.include(prompt, "Before recommending from memory")
    }).pipe(Effect.provide(TestMemdir.layer({ memories }))))
})

describe("Fixtures: real git and real files", () => {
  it.live("a worktree shares the repository's memory; written files are scanned with their age", () =>
    Effect.gen(function*() {
      const home = yield* Fixtures.scratchDirectory
      const repository = yield* Fixtures.gitRepository()
      const worktree = yield* Fixtures.gitWorktree(repository, "feature")
      yield* Effect.gen(function*() {
        const paths = yield* MemoryPaths.MemoryPaths
        const main = yield* paths.resolve(repository)
        const other = yield* paths.resolve(worktree)
        assert.strictEqual(other.memoryDir, main.memoryDir)
        assert.isTrue(main.memoryDir.startsWith(home))
        yield* Fixtures.writeMemoryFiles(main.memoryDir, memories)
        const scan = yield* (yield* Scanner.Scanner).scan(main.memoryDir)
        assert.deepStrictEqual(scan.memories.map((m) => m.path), [
          "feedback_testing_policy.md",
          "project_connection_pool.md"
        ])
        const written = yield* writeMemory({
          memoryDir: main.memoryDir,
          type: "user",
          name: "Role",
          description: "Backend engineer, new to React",
          body: "Explain frontend changes from first principles."
        })
        assert.isTrue(written.created)
      }).pipe(Effect.provide(Memdir.layer()), Fixtures.withMemdirHome(home))
    }).pipe(Effect.provide(NodeServices.layer)))
})
