/**
 * `Memdir.layer` is the whole of memdir in one layer: team sync (over real git, a bare remote in a temp dir) and,
 * when asked for, a session's `Extractor` come from it with no wiring by the caller; `Memdir.locationLayer` alone
 * says where the memory lives.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Extractor } from "../src/Extract.js"
import * as Memdir from "../src/Memdir.js"
import { MemoryPaths } from "../src/MemoryPaths.js"
import * as Model from "../src/Model.js"
import { RecallSession } from "../src/Recall.js"
import type { TeamLocation } from "../src/TeamMemory.js"
import { TeamSync } from "../src/TeamSync.js"

// memdir's git never inherits GIT_* variables; an empty scratch HOME keeps the machine's configuration out.
process.env.GIT_CONFIG_GLOBAL = "/dev/null"
process.env.GIT_CONFIG_NOSYSTEM = "1"
process.env.HOME = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "memdir-layer-home-"))

const scratch = Effect.acquireRelease(
  Effect.sync(() => NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "memdir-layer-")))),
  (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
)

const memoryText = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: project\n---\n\n${body}\n`

describe("Memdir.layer", () => {
  it.effect("provides team sync over real git: a team memory is committed and pushed to the remote", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const remote = NodePath.join(root, "remote.git")
      execFileSync("git", ["init", "-q", "--bare", "-b", "main", remote])
      const memoryDir = NodePath.join(root, "memory") + NodePath.sep
      NodeFs.mkdirSync(NodePath.join(memoryDir, "team"), { recursive: true })
      NodeFs.writeFileSync(
        NodePath.join(memoryDir, "team", "project_pool.md"),
        memoryText("Connection pool", "The database pool is capped at 10", "Capped at 10.")
      )
      const team: TeamLocation = {
        memory: { root: { root, kind: "none" }, memoryDir, source: "flag", enabled: true, enabledBy: "test" },
        teamDir: NodePath.join(memoryDir, "team") + NodePath.sep,
        enabled: true,
        enabledBy: "test",
        remote
      }
      const result = yield* Effect.flatMap(TeamSync, (sync) => sync.sync(team)).pipe(
        Effect.provide(Memdir.layer({ flagMemoryDir: memoryDir }).pipe(Layer.provide(NodeServices.layer)))
      )
      assert.isTrue(result.pushed)
      const pushed = execFileSync("git", ["--git-dir", remote, "ls-tree", "-r", "--name-only", "main"], {
        encoding: "utf8"
      })
      assert.include(pushed.split("\n"), "project_pool.md")
    }))

  it.effect("with an extractor input, provides the session's Extractor, running over the layer's own services", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const memoryDir = NodePath.join(root, "memory")
      NodeFs.mkdirSync(memoryDir)
      const transcript = NodePath.join(root, "session.jsonl")
      NodeFs.writeFileSync(transcript, "")
      const layer = Memdir.layer({
        flagMemoryDir: memoryDir,
        extractor: { memoryDir, projectRoot: root, transcript },
        // no key: the run reaches the model and ends with a typed "not configured" failure, recorded in its runs
        model: Model.layerWith({ apiKey: Option.none() })
      }).pipe(Layer.provide(NodeServices.layer))
      const runs = yield* Effect.gen(function*() {
        const extractor = yield* Extractor
        yield* extractor.onQueryLoopEnd()
        const drained = yield* extractor.drain("30 seconds")
        assert.isTrue(drained.drained)
        // the layer's other services are the same world: recall still answers
        const recalled = yield* (yield* RecallSession).recall({ memoryDir, query: "what did we decide on pools?" })
        assert.strictEqual(recalled.candidates, 0)
        return yield* extractor.runs
      }).pipe(Effect.provide(layer))
      assert.strictEqual(runs.length, 1)
      const outcome = runs[0]!.outcome
      assert.isTrue(Result.isFailure(outcome))
      if (Result.isFailure(outcome)) assert.strictEqual(outcome.failure._tag, "ModelError")
    }))
})

describe("Memdir.locationLayer", () => {
  it.effect("says where the memory lives and whether it is on, from the trusted flag", () =>
    Effect.gen(function*() {
      const root = yield* scratch
      const memoryDir = NodePath.join(root, "flagged")
      const location = yield* Effect.flatMap(MemoryPaths, (paths) => paths.locate(root)).pipe(
        Effect.provide(Memdir.locationLayer({ flagMemoryDir: memoryDir }).pipe(Layer.provide(NodeServices.layer))),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnvRecord({ MEMDIR_HOME: NodePath.join(root, "home") })
        )
      )
      assert.strictEqual(location.memoryDir, memoryDir + NodePath.sep)
      assert.strictEqual(location.source, "flag")
      assert.isTrue(location.enabled)
    }))
})
