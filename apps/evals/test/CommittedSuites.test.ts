/**
 * Every suite of the repository that has a cassette runs in replay mode here, as CI runs it: no key, no network,
 * no missing answer, no errored trial, and every trial passes or fails exactly as it did when recorded.
 *
 * A failure here after a change to a prompt section, a tool description or a scenario means the cassette is stale:
 * the message says which request differs. Cassettes made with the scripted responder are re-recorded with
 * `pnpm evals rerecord` (no key); a cassette from a real model needs the key again.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { readCassette } from "../src/Cassette.js"
import { summarize } from "../src/Results.js"
import { runCommand } from "../src/Run.js"

const evalsDir = fileURLToPath(new URL("../../../evals", import.meta.url))
const noKey = Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({}))

const suitesWithCassettes = fs.readdirSync(evalsDir).filter((name) =>
  fs.existsSync(path.join(evalsDir, name, "cassette.json"))
).sort()

layer(NodeServices.layer)("committed cassettes", (it) => {
  it("every suite but the offline selector has one", () => {
    for (const suite of ["staleness", "exclusion", "extraction", "dream", "selector"]) {
      assert.include(suitesWithCassettes, suite)
    }
  })

  for (const suite of suitesWithCassettes) {
    it.effect(`${suite} replays with no key, as recorded, and says where its answers came from`, () =>
      Effect.gen(function*() {
        const files = yield* FileSystem.FileSystem
        const runsDir = yield* files.makeTempDirectoryScoped()
        const cassette = yield* readCassette(path.join(evalsDir, suite, "cassette.json"))
        const { gate, run } = yield* runCommand({ evalsDir, runsDir, suite, replay: true, concurrency: 4 }).pipe(
          noKey,
          Effect.mapError((error) =>
            new Error(`${error.message}\nIf a prompt or tool changed: pnpm evals rerecord ${suite}`)
          )
        )
        assert.isUndefined(gate, gate?.message)
        assert.strictEqual(run.provenance.mode, "replay")
        // never claim a model the answers did not come from
        assert.strictEqual(run.provenance.realModel, cassette.meta.realModel)
        if (cassette.meta.source !== "anthropic-api") assert.isFalse(run.provenance.realModel)
        const summary = summarize(run)
        assert.strictEqual(summary.errored, 0, JSON.stringify(run.results.find((r) => r.error !== undefined)))
        assert.deepStrictEqual(run.variants.map((v) => v.name), [...cassette.meta.variants])
        assert.isDefined(cassette.meta.outcomes)
        assert.strictEqual(run.results.length, Object.keys(cassette.meta.outcomes!).length)
      }))
  }
})
