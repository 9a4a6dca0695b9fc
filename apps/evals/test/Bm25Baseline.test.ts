/**
 * The BM25 baseline is one module with one behaviour: suite (c)'s `bm25` variant answers every query exactly as the
 * generalization run's baseline does for the same directory and query at the same threshold; a trial says why
 * (each scored memory's score, matched words and verdict); a suite's bm25 variant takes only a threshold.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import * as ScannerModule from "@memdir/core/Scanner"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import { fileURLToPath } from "node:url"
import {
  BM25_DEFAULT_THRESHOLD,
  BM25_THRESHOLDS,
  BM25_TOP,
  explainBm25,
  makeBm25Index,
  selectWithBm25
} from "../src/Bm25Baseline.js"
import { bm25Baseline, type LabelledDirectory } from "../src/Generalization.js"
import { harnessCatalog } from "../src/Harness.js"
import { loadDirectory } from "../src/LabelledSets.js"
import { runCommand } from "../src/Run.js"
import { loadSuite } from "../src/Suite.js"

const evalsDir = fileURLToPath(new URL("../../../evals", import.meta.url))
const noKey = Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({}))
const services = ScannerModule.layerNode.pipe(Layer.provideMerge(NodeServices.layer))

layer(services)("BM25 baseline", (it) => {
  it.effect("suite (c)'s bm25 variant answers as the generalization baseline does, query by query", () =>
    Effect.gen(function*() {
      const files = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const runsDir = yield* files.makeTempDirectoryScoped()
      const suite = yield* loadSuite(evalsDir, "selector", harnessCatalog)
      if (suite.kind !== "selector") return assert.fail(`suite (c) is a ${suite.kind} suite`)
      const variant = suite.variants.find((v) => v.name === "bm25")
      assert.deepStrictEqual(variant?.options, { threshold: BM25_DEFAULT_THRESHOLD })
      const generalization = bm25Baseline.settings.find((s) => s.label === `score >= ${BM25_DEFAULT_THRESHOLD}`)!

      const { run } = yield* runCommand({ evalsDir, runsDir, suite: "selector", variants: ["bm25"] }).pipe(noKey)
      assert.strictEqual(run.provenance.mode, "offline")
      assert.isAtLeast(run.results.length, 150)
      const scenarios = new Map(suite.scenarios.map((s) => [s.id, s]))
      const directories = new Map<string, LabelledDirectory>()
      let answered = 0
      for (const r of run.results) {
        const scenario = scenarios.get(r.scenario)!
        const dir = scenario.dir!
        let directory = directories.get(dir)
        if (directory === undefined) {
          directory = yield* loadDirectory(dir, path.join(evalsDir, "selector", "memories", dir))
          directories.set(dir, directory)
        }
        const output = r.output as { selected: Array<string>; explain: { candidates: Array<any> } }
        const expected = generalization.select(directory, scenario.query)
        assert.deepStrictEqual(output.selected, [...expected], `${r.scenario}: ${scenario.query}`)
        if (expected.length > 0) answered++
        // why: the kept candidates are the selection, each at or above the threshold
        const kept = output.explain.candidates.filter((c) => c.verdict === "kept")
        assert.deepStrictEqual(kept.map((c) => c.path), output.selected)
        for (const c of kept) assert.isAtLeast(c.score, BM25_DEFAULT_THRESHOLD)
      }
      // not a vacuous agreement: the baseline selects something for many queries, and nothing for some
      assert.isAtLeast(answered, 40)
      assert.isAtLeast(run.results.length - answered, 20)
    }))

  it("explains each scored memory: score, matched words and fields, kept or cut and why", () => {
    const index = makeBm25Index([
      { path: "a.md", name: "Deploy freeze", description: "no deploys on Friday", body: "freeze freeze deploy" },
      { path: "b.md", name: "Deploy runbook", description: "how to deploy", body: "steps" },
      { path: "c.md", name: "Coffee", description: "office machine", body: "beans" }
    ])
    const { explain, selected } = explainBm25(index, "can I deploy during the freeze?", 1)
    assert.deepStrictEqual(selected, ["a.md", "b.md"])
    assert.deepStrictEqual([...selected], [...selectWithBm25(index, "can I deploy during the freeze?", 1)])
    assert.strictEqual(explain.selector, "BM25 baseline")
    assert.match(explain.summary, /^kept 2 of 2 sharing a word with the request \(score ≥ 1, best 5\)$/)
    assert.include(explain.queryTerms, "freeze")
    assert.strictEqual(explain.unmatched, 1)
    const [first, second] = explain.candidates
    assert.isAbove(first!.score, second!.score)
    assert.include(first!.matched, "freeze (name, body)")
    assert.match(first!.reason, /^score [\d.]+ ≥ 1, rank 1$/)

    const high = explainBm25(index, "can I deploy during the freeze?", 1000)
    assert.deepStrictEqual(high.selected, [])
    assert.match(high.explain.summary, /^nothing kept: the best score is [\d.]+ \(score ≥ 1000, best 5\)$/)
    assert.match(high.explain.candidates[0]!.reason, /^score [\d.]+ < 1000$/)
    assert.strictEqual(
      explainBm25(index, "kubernetes", 1).explain.summary,
      "nothing kept: no memory shares a word with the request"
    )

    // at most the best five, the sixth said to be cut for its rank
    const many = makeBm25Index(
      Array.from({ length: 7 }, (_, i) => ({ path: `m${i}.md`, name: `deploy ${i}`, description: "deploy", body: "" }))
    )
    const six = explainBm25(many, "deploy", 0)
    assert.strictEqual(six.selected.length, BM25_TOP)
    assert.match(six.explain.candidates[BM25_TOP]!.reason, /^rank 6: only the best 5 are kept$/)
    assert.include(BM25_THRESHOLDS, BM25_DEFAULT_THRESHOLD)
  })

  it.effect("a bm25 variant takes only a threshold, and the offline selector no threshold", () =>
    Effect.gen(function*() {
      const files = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const root = yield* files.makeTempDirectoryScoped()
      const write = (variants: ReadonlyArray<unknown>) =>
        Effect.gen(function*() {
          yield* files.makeDirectory(path.join(root, "sel", "memories"), { recursive: true })
          yield* files.writeFileString(
            path.join(root, "sel", "memories", "user_role.md"),
            "---\nname: Role\ndescription: Staff engineer\ntype: user\n---\n"
          )
          yield* files.writeFileString(
            path.join(root, "sel", "suite.json"),
            JSON.stringify({
              name: "sel",
              kind: "selector",
              description: "d",
              memories: { dir: "memories" },
              variants,
              scenarios: [{ id: "q", query: "who am I", relevant: ["user_role.md"] }]
            })
          )
        })
      yield* write([{ name: "bm25", selector: "bm25", options: { threshold: 10 } }])
      const ok = yield* loadSuite(root, "sel", harnessCatalog)
      assert.strictEqual(ok.variants[0]!.name, "bm25")

      yield* write([
        { name: "bm25", selector: "bm25", options: { threshold: 10, minEvidence: 0.3 }, prompt: "strict" },
        { name: "offline", selector: "offline", options: { threshold: 10 } }
      ])
      const error = yield* Effect.flip(loadSuite(root, "sel", harnessCatalog))
      assert.strictEqual(error._tag, "InvalidSuiteError")
      const problems = error._tag === "InvalidSuiteError" ? error.problems.map((p) => `${p.path}: ${p.message}`) : []
      assert.include(problems, "variants[0].prompt: the BM25 baseline has no prompt (use options)")
      assert.include(
        problems,
        "variants[0].options.minEvidence: minEvidence tunes the offline selector; the BM25 baseline takes only threshold"
      )
      assert.include(
        problems,
        "variants[1].options.threshold: threshold is the BM25 baseline's (selector: bm25); the offline selector's " +
          "bar is minEvidence"
      )

      yield* write([{ name: "bm25", selector: "bm25", options: { threshold: -1 } }])
      const negative = yield* Effect.flip(loadSuite(root, "sel", harnessCatalog))
      assert.strictEqual(negative._tag, "InvalidSuiteError")
    }))
})
