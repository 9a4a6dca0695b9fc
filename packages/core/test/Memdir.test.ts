/**
 * `Memdir.layer` composes every service, team sync and the session's extractor included, with no hand wiring:
 * the layer alone (over `NodeContext`) answers for each of them.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Extract from "../src/Extract.js"
import * as Git from "../src/Git.js"
import * as Memdir from "../src/Memdir.js"
import type { MemoryLocation } from "../src/MemoryPaths.js"
import * as MemoryStore from "../src/MemoryStore.js"
import * as Model from "../src/Model.js"
import * as Recall from "../src/Recall.js"
import * as TeamMemory from "../src/TeamMemory.js"
import * as TeamSync from "../src/TeamSync.js"

const memory: MemoryLocation = {
  root: { root: "/nonexistent/project", kind: "none" },
  memoryDir: "/nonexistent/memory/",
  source: "default",
  enabled: true,
  enabledBy: "default"
}

const session: Extract.ExtractInput = {
  memoryDir: memory.memoryDir,
  projectRoot: memory.root.root,
  transcript: "/nonexistent/session.jsonl"
}

describe("Memdir.layer", () => {
  it.scoped("holds team sync (live: its gates answer) and, with `extractor`, the session's Extractor", () =>
    Effect.gen(function*() {
      yield* Effect.all([Git.Git, MemoryStore.MemoryStore, Recall.RecallSession, TeamMemory.TeamMemory])
      const extractor = yield* Extract.Extractor
      assert.deepStrictEqual(yield* extractor.runs, [])
      const sync = yield* TeamSync.TeamSync
      const refused = yield* Effect.flip(
        sync.sync({ memory, teamDir: `${memory.memoryDir}team/`, enabled: false, enabledBy: "test" })
      )
      assert.strictEqual(refused._tag, "TeamMemoryDisabledError")
    }).pipe(
      Effect.provide(Memdir.layer({ model: Model.layerTest([]), extractor: session })),
      Effect.provide(NodeContext.layer)
    ))
})
