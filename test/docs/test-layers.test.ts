/**
 * The test-layer example of docs/library.md, as a test that runs: the docs show the code below the imports
 * exactly (test/docs-links.test.ts checks that), so a change to `TestMemdir` that breaks it fails here.
 */
import { assert, it } from "@effect/vitest"
import { Recall } from "@memdir/core"
import { TestMemdir } from "@memdir/testing"
import { Effect } from "effect"
import { TestClock } from "effect/testing"

const DAY = 86_400_000

it.effect("recalls the stale pool memory with its age", () =>
  Effect.gen(function*() {
    yield* TestClock.setTime(100 * DAY) // what "today" is
    const session = yield* Recall.RecallSession
    const result = yield* session.recall({
      memoryDir: TestMemdir.DEFAULT_MEMORY_DIR,
      query: "how big is the database connection pool?"
    })
    assert.strictEqual(result.selected[0]?.age, "47 days ago")
    assert.match(result.selected[0]?.caveat ?? "", /47 days old/)
  }).pipe(Effect.provide(TestMemdir.layer({
    now: 100 * DAY,
    memories: [
      {
        type: "project",
        name: "Connection pool",
        description: "DB connection pool capped at 10 in src/db.ts:12",
        ageDays: 47
      }
    ]
  }))))
