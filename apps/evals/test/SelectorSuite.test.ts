/**
 * Suite (c), the one CI gates on: the selector suite of the repository runs offline (no key, no network), its
 * figures clear the floors, it does not regress against the committed baseline, and `pnpm evals` exits with the
 * gate's code.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { renderTerminal } from "../src/Report.js"
import { summarize } from "../src/Results.js"
import { runCommand } from "../src/Run.js"
import { readRun } from "../src/RunFiles.js"
import { evalsCommand } from "./fixtures.js"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const evalsDir = path.join(repoRoot, "evals")
const baselinePath = path.join(evalsDir, "baselines", "selector.json")
/** The variants that need no key: memdir's offline selector at three bars, and the BM25 baseline beside them. */
const NO_KEY = ["offline", "offline-loose", "offline-strict", "bm25"]

/** No key from the environment: this is what CI has. */
const noKey = Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({}))

/** Every tag must close in order: enough to catch a chart that is not well-formed XML. */
const assertWellFormedXml = (xml: string) => {
  const stack: Array<string> = []
  for (const m of xml.matchAll(/<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g)) {
    const [, closing, name, , selfClosing] = m
    if (selfClosing === "/") continue
    if (closing === "/") assert.strictEqual(stack.pop(), name, `</${name}> closes <${stack.at(-1)}>`)
    else stack.push(name!)
  }
  assert.deepStrictEqual(stack, [], "unclosed tags")
  const stray = xml.replace(/<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g, "")
  assert.notInclude(stray, "<", "a '<' outside a tag")
  assert.notMatch(stray, /&(?!amp;|lt;|gt;|quot;|#39;)/, "an unescaped '&'")
}

layer(NodeServices.layer)("selector suite, offline", (it) => {
  it.effect("runs with no key, reports precision/recall with intervals, and clears the floors", () =>
    Effect.gen(function*() {
      const files = yield* FileSystem.FileSystem
      const runsDir = yield* files.makeTempDirectoryScoped()
      const { directory, gate, run } = yield* runCommand({
        evalsDir,
        runsDir,
        suite: "selector",
        minPassRate: 0.45,
        baseline: baselinePath
      }).pipe(noKey)
      assert.strictEqual(run.provenance.mode, "offline")
      assert.isFalse(run.provenance.realModel)
      assert.deepStrictEqual(run.variants.map((v) => v.name), NO_KEY)
      assert.isAtLeast(run.scenarios.length, 70)
      assert.isUndefined(gate, gate?.message)

      const summary = summarize(run)
      const offline = summary.variants.find((v) => v.name === "offline")!
      // floors well under what the shipped selector measures (precision 0.91, recall 0.86, empty 0.94)
      assert.isAtLeast(offline.retrieval!.precision, 0.75)
      assert.isAtLeast(offline.retrieval!.recall, 0.65)
      assert.isAtLeast(offline.emptyWhenNothingRelevant!, 0.8)
      assert.isBelow(offline.interval.low, offline.passRate)
      assert.isAbove(offline.interval.high, offline.passRate)
      // the looser bar buys recall with precision: the trade-off the suite exists to show
      const loose = summary.variants.find((v) => v.name === "offline-loose")!
      assert.isAbove(loose.retrieval!.recall, offline.retrieval!.recall)
      assert.isBelow(loose.retrieval!.precision, offline.retrieval!.precision)
      // the BM25 baseline is in the same table, on the same queries, with its own figures and its paired test
      const bm25 = summary.variants.find((v) => v.name === "bm25")!
      assert.isDefined(bm25.retrieval)
      assert.isDefined(bm25.emptyWhenNothingRelevant)
      assert.strictEqual(bm25.total, offline.total)
      // a reference, not memdir: it is not held to --min-pass-rate (it passes fewer than 0.45), but to the baseline
      assert.isTrue(run.variants.find((v) => v.name === "bm25")!.reference)
      assert.match(renderTerminal(run), /\nbm25 \(reference\)\s+\d+\/173\s+\d+%/)
      assert.isBelow(bm25.passRate, 0.45)
      assert.strictEqual(summary.comparisons.length, 3)

      // what it wrote reads back as the same run, and the chart is well-formed
      const reread = yield* readRun(directory)
      assert.deepStrictEqual(reread, run)
      assertWellFormedXml(fs.readFileSync(path.join(directory, "chart.svg"), "utf8"))
      const html = fs.readFileSync(path.join(directory, "report.html"), "utf8")
      assert.include(html, "<svg")
      assert.include(html, "No model involved")

      // every trial (offline and BM25) says why: its explanation's kept candidates are what it selected
      for (const r of run.results) {
        const output = r.output as any
        const kept = output.explain.candidates.filter((c: any) => c.verdict === "kept").map((c: any) => c.path)
        assert.deepStrictEqual(kept, output.selected, `${r.variant} ${r.scenario}`)
        if (output.selected.length === 0) assert.match(output.explain.summary, /^nothing kept: /)
      }
      assert.include(html, "Why (offline selector): kept 1 of ")
      assert.include(html, "cut: ")
      assert.include(html, "Why (BM25 baseline): kept 1 of ")
      assert.include(html, "BM25 baseline settings")
      assert.include(html, "bm25</a> <i>(reference, not memdir)</i>")
    }))

  it.effect("is deterministic: two runs give the same trials", () =>
    Effect.gen(function*() {
      const files = yield* FileSystem.FileSystem
      const runsDir = yield* files.makeTempDirectoryScoped()
      const first = yield* runCommand({ evalsDir, runsDir, suite: "selector", variants: ["offline"] }).pipe(noKey)
      const second = yield* runCommand({ evalsDir, runsDir, suite: "selector", variants: ["offline"] }).pipe(noKey)
      const strip = (r: typeof first.run) => r.results.map(({ latencyMs: _, ...rest }) => rest)
      assert.deepStrictEqual(strip(second.run), strip(first.run))
    }))

  it.effect("the gate catches a regression against a baseline, naming the scenario", () =>
    Effect.gen(function*() {
      const files = yield* FileSystem.FileSystem
      const scratch = yield* files.makeTempDirectoryScoped()
      // A baseline in which a query the offline selector fails had passed: the run must be flagged.
      const baseline = JSON.parse(fs.readFileSync(baselinePath, "utf8"))
      const failing = baseline.results.find((r: any) => r.variant === "offline" && !r.passed)
      failing.passed = true
      const doctored = path.join(scratch, "baseline.json")
      fs.writeFileSync(doctored, JSON.stringify(baseline))
      const { gate } = yield* runCommand({
        evalsDir,
        runsDir: scratch,
        suite: "selector",
        variants: ["offline"],
        baseline: doctored
      }).pipe(noKey)
      assert.isDefined(gate)
      assert.include(gate!.message, `${failing.scenario}#1`)
    }))

  it.effect("an unknown variant, and asking for the model selector with no key and no cassette, fail clearly", () =>
    Effect.gen(function*() {
      const files = yield* FileSystem.FileSystem
      const runsDir = yield* files.makeTempDirectoryScoped()
      const unknown = yield* Effect.flip(
        runCommand({ evalsDir, runsDir, suite: "selector", variants: ["nope"] }).pipe(noKey)
      )
      assert.strictEqual(unknown._tag, "InvalidRunOptionError")
      assert.include(unknown.message, "offline, offline-loose")
      const replay = yield* Effect.flip(
        runCommand({ evalsDir, runsDir, suite: "selector", replay: true, cassette: path.join(runsDir, "none.json") })
          .pipe(noKey)
      )
      assert.strictEqual(replay._tag, "ModelUnavailableError")
      assert.include(replay.message, "ANTHROPIC_API_KEY")
    }))
})

describe("pnpm evals (the process)", () => {
  const evals = (args: ReadonlyArray<string>) => {
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !k.startsWith("ANTHROPIC_") && !k.startsWith("MEMDIR_")) env[k] = v
    }
    const command = evalsCommand(args)
    const result = spawnSync(command.file, command.args, {
      cwd: command.cwd,
      env,
      encoding: "utf8",
      timeout: 55_000
    })
    return { status: result.status, stdout: result.stdout, stderr: result.stderr }
  }

  it("exits 0 when the gate passes and 2 when it fails, after writing the run", () => {
    const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-evals-cli-"))
    try {
      const ok = evals(["run", "selector", "--variants", "offline", "--min-pass-rate", "0.5", "--runs-dir", runsDir])
      assert.strictEqual(ok.status, 0, ok.stderr)
      assert.include(ok.stdout, "gate: passed")
      assert.match(ok.stdout, /offline \(baseline\)\s+\d+\/\d+\s+\d+%\s+\[\d+%, \d+%\]/)
      const failed = evals([
        "run",
        "selector",
        "--variants",
        "offline",
        "--min-pass-rate",
        "0.99",
        "--runs-dir",
        runsDir
      ])
      assert.strictEqual(failed.status, 2, failed.stderr)
      assert.include(failed.stderr, "gate failed")
      assert.include(failed.stderr, "under --min-pass-rate 99%")
      assert.strictEqual(fs.readdirSync(runsDir).length, 2)
    } finally {
      fs.rmSync(runsDir, { recursive: true, force: true })
    }
  })

  it("exits 4 for an unknown suite, naming the known ones", () => {
    const missing = evals(["run", "no-such-suite"])
    assert.strictEqual(missing.status, 4, missing.stderr)
    assert.include(missing.stderr, "Known suites:")
    assert.include(missing.stderr, "selector")
  })
})
