/**
 * The command line as a prompt engineer meets it: `evals list` fails on an invalid suite, a misspelt field is
 * named, the no-key error says whether the cassette exists, and `rerecord` leaves an unchanged cassette alone.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import { rerecordSuite, runCommand } from "../src/Run.js"
import { parseSuiteText } from "../src/Suite.js"
import { demoSuite, runEvals } from "./fixtures.js"

const noKey = Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({}))
describe("suite parsing", () => {
  it("a misspelt patch field is named, not reported as the other kind of suite", () => {
    const parsed = parseSuiteText(demoSuite({ patchField: "heding" }))
    assert.isTrue(Result.isFailure(parsed))
    const problems = Result.isFailure(parsed) ? parsed.failure : []
    assert.deepStrictEqual(problems.map((p) => p.path), ["variants[1].patch.heding"])
    assert.include(problems[0]!.message, "unknown field")
    assert.isDefined(problems[0]!.line)
    assert.notInclude(problems.map((p) => `${p.path}: ${p.message}`).join("\n"), "Expected \"selector\"")
  })
})

layer(NodeServices.layer)("the evals command line", (it) => {
  const setUp = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = yield* fs.makeTempDirectoryScoped()
    yield* fs.makeDirectory(path.join(root, "demo"))
    yield* fs.writeFileString(path.join(root, "demo", "suite.yaml"), demoSuite())
    return { root, runsDir: path.join(root, "runs"), cassette: path.join(root, "demo", "cassette.json"), fs, path }
  })

  it.effect(
    "`evals list` exits 3 on an invalid suite, after listing every suite, and 0 when all load",
    () =>
      Effect.gen(function*() {
        const { fs, path, root } = yield* setUp
        const good = yield* runEvals(["list", "--dir", root])
        assert.strictEqual(good.code, 0, good.stderr)
        assert.include(good.stdout, "demo  [agent, section recall-trust]  1 scenario × 1 trial\n")

        yield* fs.makeDirectory(path.join(root, "broken"))
        yield* fs.writeFileString(
          path.join(root, "broken", "suite.yaml"),
          demoSuite({ patchField: "heding" }).replace("name: demo", "name: broken")
        )
        const bad = yield* runEvals(["list", "--dir", root])
        assert.strictEqual(bad.code, 3, bad.stdout + bad.stderr)
        assert.include(bad.stdout, "broken  INVALID")
        assert.include(bad.stdout, "variants[1].patch.heding: unknown field")
        assert.include(bad.stdout, "demo  [agent") // the valid suite is still listed
        assert.include(bad.stderr, "1 invalid suite")
        const json = yield* runEvals(["list", "--dir", root, "--json"])
        assert.strictEqual(json.code, 3)
        assert.strictEqual(JSON.parse(json.stdout).suites.length, 2)
      }),
    240_000
  )

  it.effect("`evals list` names the selector variants that run with no key: the offline ones and the BM25 baseline", () =>
    Effect.gen(function*() {
      const list = yield* runEvals(["list"])
      assert.strictEqual(list.code, 0, list.stderr)
      assert.include(
        list.stdout,
        "offline variants: offline, offline-loose, offline-strict, bm25; others need a model or --replay"
      )
    }))

  it.effect("help piped has no terminal escape codes, also with NO_COLOR and TERM=dumb", () =>
    Effect.gen(function*() {
      for (const env of [{}, { NO_COLOR: "1", TERM: "dumb" }]) {
        const help = yield* runEvals(["--help"], env)
        assert.strictEqual(help.code, 0, help.stderr)
        assert.include(help.stdout, "list")
        assert.notInclude(help.stdout, "\u001b[", JSON.stringify(env))
      }
    }), 120_000)

  it.effect("with no key, the error says whether the cassette exists", () =>
    Effect.gen(function*() {
      const { fs, root, runsDir } = yield* setUp
      const without = yield* Effect.flip(runCommand({ evalsDir: root, runsDir, suite: "demo" }).pipe(noKey))
      assert.strictEqual(without._tag, "ModelUnavailableError")
      assert.include(without.message, "no cassette at")

      yield* runCommand({ evalsDir: root, runsDir, suite: "demo", scripted: true, record: true })
      const withCassette = yield* Effect.flip(runCommand({ evalsDir: root, runsDir, suite: "demo" }).pipe(noKey))
      assert.strictEqual(withCassette._tag, "ModelUnavailableError")
      assert.notInclude(withCassette.message, "no cassette")
      assert.include(withCassette.message, "exists")
      assert.include(withCassette.message, "--replay")
      // and the advice is right: the replay it suggests runs
      const replay = yield* runCommand({ evalsDir: root, runsDir, suite: "demo", replay: true }).pipe(noKey)
      assert.isUndefined(replay.gate, replay.gate?.message)
      yield* fs.remove(runsDir, { recursive: true })
    }))

  it.effect("rerecord leaves a cassette byte for byte when its requests are unchanged, rewrites it when not", () =>
    Effect.gen(function*() {
      const { cassette, fs, path, root, runsDir } = yield* setUp
      const first = yield* rerecordSuite({ evalsDir: root, runsDir, suite: "demo" })
      assert.strictEqual(first.status, "recorded")
      const recorded = yield* fs.readFileString(cassette)

      const again = yield* rerecordSuite({ evalsDir: root, runsDir, suite: "demo" })
      assert.strictEqual(again.status, "unchanged")
      assert.strictEqual(yield* fs.readFileString(cassette), recorded)

      yield* fs.writeFileString(
        path.join(root, "demo", "suite.yaml"),
        demoSuite({ heading: "Verify the code before you rely on a memory" })
      )
      const changed = yield* rerecordSuite({ evalsDir: root, runsDir, suite: "demo" })
      assert.strictEqual(changed.status, "rewritten")
      const rewritten = yield* fs.readFileString(cassette)
      assert.notStrictEqual(rewritten, recorded)
      assert.include(rewritten, "Verify the code before you rely on a memory")
    }))
})
