/**
 * `pnpm evals list | run SUITE | report RUN | compare RUN_A RUN_B | rerecord [SUITE…]`.
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import { readCassette } from "./Cassette.js"
import { pText, renderComparisonTerminal, significantDrops } from "./Compare.js"
import { GateFailedError, InvalidRunOptionError, InvalidSuitesError } from "./Errors.js"
import { harnessCatalog, suiteNeedsModel } from "./Harness.js"
import type { Price } from "./Pricing.js"
import { makeProgressState, progressLine } from "./Progress.js"
import { formatCost, formatMs, formatTokens, plural, renderPlan, renderTerminal } from "./Report.js"
import { summarize } from "./Results.js"
import { compareCommandProgram, rerecordSuite, runCommand, writeReport } from "./Run.js"
import { readRun, resolveRun, RESULTS_FILE } from "./RunFiles.js"
import { SCRIPTED_NOTE } from "./Scripted.js"
import { trialsToDetect } from "./Stats.js"
import { listSuites, loadSuite } from "./Suite.js"

/**
 * The repository's `evals/` directory (this file is `apps/evals/src/Cli.ts`, or in the bundle `pnpm evals` runs,
 * `apps/evals/dist/main.js`: as deep in the repository).
 */
export const defaultEvalsDir = (path: Path.Path): string => path.resolve(import.meta.dirname, "..", "..", "..", "evals")

const dirOption = Flag.Directory("dir").pipe(
  Flag.withDescription("Directory of suites (default: the repository's evals/)"),
  Flag.optional
)
/** A boolean flag that is off unless given (effect/cli makes a boolean flag required without a default). */
const switchFlag = (name: string, description: string) =>
  Flag.Boolean(name).pipe(Flag.withDescription(description), Flag.withDefault(false))

const jsonOption = switchFlag("json", "Machine-readable JSON on stdout")

const evalsDirOf = (dir: Option.Option<string>) =>
  Effect.map(
    Path.Path,
    (path) => Option.match(dir, { onNone: () => defaultEvalsDir(path), onSome: (d) => path.resolve(d) })
  )

// ---------------------------------------------------------------------------------------------------------------
// list
// ---------------------------------------------------------------------------------------------------------------

const listCommand = Command.make(
  "list",
  { dir: dirOption, json: jsonOption },
  ({ dir, json }) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const evalsDir = yield* evalsDirOf(dir)
      const rows = []
      for (const name of yield* listSuites(evalsDir)) {
        const suite = yield* loadSuite(evalsDir, name, harnessCatalog).pipe(Effect.result)
        if (suite._tag === "Failure") {
          rows.push({ name, error: suite.failure.message })
          continue
        }
        const s = suite.success
        const cassettePath = path.join(s.directory, "cassette.json")
        const cassette = (yield* fs.exists(cassettePath).pipe(Effect.orElseSucceed(() => false))) ?
          yield* readCassette(cassettePath).pipe(Effect.result) :
          undefined
        rows.push({
          name,
          kind: s.kind,
          section: s.section,
          description: s.description,
          variants: s.variants.map((v) => v.name),
          scenarios: s.scenarios.length,
          trials: s.trials,
          needsModel: suiteNeedsModel(s, s.variants.map((v) => v.name)),
          offlineVariants: s.kind === "selector"
            ? s.variants.filter((v) => v.selector !== "llm").map((v) => v.name)
            : [],
          cassette: cassette === undefined ?
            null :
            cassette._tag === "Failure" ?
            { error: cassette.failure.message } :
            {
              source: cassette.success.meta.source,
              realModel: cassette.success.meta.realModel,
              note: cassette.success.meta.note
            }
        })
      }
      const invalid = rows.flatMap((row) => "error" in row ? [row.name] : [])
      // Every suite is listed first; an invalid one then fails the command, so a script or CI step sees it.
      const failIfInvalid = invalid.length === 0 ?
        Effect.void :
        Effect.fail(new InvalidSuitesError({ directory: evalsDir, suites: invalid }))
      if (json) {
        yield* Console.log(JSON.stringify({ directory: evalsDir, suites: rows }, null, 2))
        return yield* failIfInvalid
      }
      if (rows.length === 0) return yield* Console.log(`no suites in ${evalsDir}`)
      for (const row of rows) {
        if ("error" in row) {
          yield* Console.log(`${row.name}  INVALID\n${row.error}\n`)
          continue
        }
        const cassette = row.cassette === null ?
          "no cassette" :
          "error" in row.cassette ?
          `cassette unreadable` :
          `cassette: ${row.cassette.source}${row.cassette.realModel ? " (real model)" : " (not a real model)"}`
        const runnable = !row.needsModel ?
          "runs offline" :
          row.offlineVariants.length > 0 ?
          `offline variants: ${row.offlineVariants.join(", ")}; others need a model or --replay` :
          "needs a model (ANTHROPIC_API_KEY) or --replay"
        yield* Console.log(
          `${row.name}  [${row.kind}, section ${row.section}]  ${plural(row.scenarios, "scenario")} × ${
            plural(row.trials, "trial")
          }\n` +
            `  ${row.description}\n  variants: ${row.variants.join(", ")}\n  ${runnable}; ${cassette}\n`
        )
      }
      return yield* failIfInvalid
    })
).pipe(Command.withDescription("List the suites, their variants and how they can run"))

// ---------------------------------------------------------------------------------------------------------------
// run
// ---------------------------------------------------------------------------------------------------------------

const parsePrice = (text: string) =>
  Effect.gen(function*() {
    const parts = text.split(",").map((s) => Number(s.trim()))
    if (parts.length !== 2 || parts.some((n) => !Number.isFinite(n) || n < 0)) {
      return yield* new InvalidRunOptionError({
        option: "--price",
        value: text,
        reason: "give USD per million input and output tokens, e.g. 3,15"
      })
    }
    return { inputPerMTok: parts[0]!, outputPerMTok: parts[1]! } satisfies Price
  })

const list = (text: Option.Option<string>): ReadonlyArray<string> | undefined =>
  Option.match(text, {
    onNone: () => undefined,
    onSome: (s) => s.split(",").map((x) => x.trim()).filter((x) => x !== "")
  })

const runOptions = {
  dir: dirOption,
  runsDir: Flag.Directory("runs-dir").pipe(
    Flag.withDescription("Where to write the run (default: <dir>/runs)"),
    Flag.optional
  ),
  variants: Flag.String("variants").pipe(
    Flag.withDescription("Comma-separated variants to run (default: all)"),
    Flag.optional
  ),
  trials: Flag.Int("trials").pipe(
    Flag.withDescription("Trials per scenario (default: the suite's)"),
    Flag.optional
  ),
  model: Flag.String("model").pipe(Flag.withDescription("Model id for the suite's role"), Flag.optional),
  concurrency: Flag.Int("concurrency").pipe(
    Flag.withDescription("Trials run at once (default 4)"),
    Flag.withDefault(4)
  ),
  record: switchFlag("record", "Keep every model exchange in the suite's cassette"),
  replay: switchFlag("replay", "Answer from the suite's cassette: no key, no network"),
  scripted: switchFlag(
    "scripted",
    "Answer with the scripted responder on a local Messages API server (no key; tests the harness, not a prompt)"
  ),
  cassette: Flag.File("cassette").pipe(
    Flag.withDescription("Cassette file (default: <suite>/cassette.json)"),
    Flag.optional
  ),
  minPassRate: Flag.Finite("min-pass-rate").pipe(
    Flag.withDescription("Gate: fail (exit 2) when a variant passes less than this share (0–1)"),
    Flag.optional
  ),
  baseline: Flag.String("baseline").pipe(
    Flag.withDescription("Gate: fail (exit 2) on a regression against this stored run (results.json)"),
    Flag.optional
  ),
  price: Flag.String("price").pipe(
    Flag.withDescription("USD per million input,output tokens for every model (default: the built-in table)"),
    Flag.optional
  ),
  detect: Flag.Finite("detect").pipe(
    Flag.withDescription(
      "Planning: say how many trials detect a pass-rate difference of this size (0–1) at 80% power"
    ),
    Flag.optional
  ),
  assumeRate: Flag.Finite("assume-rate").pipe(
    Flag.withDescription("Planning: the pass rate to plan from (default: the baseline variant's observed rate)"),
    Flag.optional
  ),
  untilCiWidth: Flag.Finite("until-ci-width").pipe(
    Flag.withDescription(
      "Add one trial per scenario until every variant's 95% interval is at most this wide (0–1); live runs"
    ),
    Flag.optional
  ),
  maxTrials: Flag.Int("max-trials").pipe(
    Flag.withDescription("The most trials per scenario --until-ci-width may reach (default 30)"),
    Flag.optional
  ),
  json: jsonOption,
  suite: Argument.String("SUITE")
}

const runCommandCli = Command.make("run", runOptions, (args) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const evalsDir = yield* evalsDirOf(args.dir)
    const price = Option.isSome(args.price) ? yield* parsePrice(args.price.value) : undefined
    const tty = process.stderr.isTTY === true
    for (const [option, value] of [["--detect", args.detect], ["--assume-rate", args.assumeRate]] as const) {
      if (Option.isSome(value) && !(value.value > 0 && value.value <= 1)) {
        return yield* new InvalidRunOptionError({ option, value: String(value.value), reason: "must be from 0 to 1" })
      }
    }
    const progress = makeProgressState(yield* Clock.currentTimeMillis)
    const result = yield* runCommand({
      evalsDir,
      runsDir: Option.getOrUndefined(args.runsDir),
      suite: args.suite,
      variants: list(args.variants),
      trials: Option.getOrUndefined(args.trials),
      model: Option.getOrUndefined(args.model),
      concurrency: args.concurrency,
      record: args.record,
      replay: args.replay,
      scripted: args.scripted,
      cassette: Option.getOrUndefined(args.cassette),
      minPassRate: Option.getOrUndefined(args.minPassRate),
      baseline: Option.getOrUndefined(args.baseline),
      price,
      untilCiWidth: Option.getOrUndefined(args.untilCiWidth),
      maxTrials: Option.getOrUndefined(args.maxTrials),
      onNote: (note) => Console.error(`${tty ? "\r\x1b[2K" : ""}note: ${note}`),
      onTrial: (trial) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const { done, result, total } = trial
          const counts = progressLine(progress, trial, now)
          const status = result.error !== undefined ? "errored" : result.passed ? "pass" : "FAIL"
          const usage = result.usage === undefined ?
            "" :
            `, ${
              formatTokens(
                result.usage.inputTokens + result.usage.cacheReadInputTokens + result.usage.cacheCreationInputTokens
              )
            } in / ${formatTokens(result.usage.outputTokens)} out, ${formatCost(result.costUsd ?? null)}`
          const line = `${result.variant} · ${result.scenario} #${result.trial}: ${status}` +
            ` (${formatMs(result.latencyMs)}${result.calls === undefined ? "" : `, ${result.calls} calls`}${usage})`
          // On a terminal one line, rewritten: the last trial, then the counts per variant and the time left.
          if (tty) {
            return Console.error(
              `\r\x1b[2K${done === total ? counts : `${counts} · last: ${line}`}${done === total ? "\n" : ""}`
            )
              .pipe(Effect.asVoid)
          }
          // Offline trials take microseconds: on a pipe, one line per trial would only be noise.
          return result.calls === undefined && done !== total ? Effect.void : Console.error(`${line}\n  ${counts}`)
        })
    })
    if (args.json) {
      const summary = summarize(result.run)
      yield* Console.log(JSON.stringify(
        {
          directory: result.directory,
          provenance: result.run.provenance,
          variants: summary.variants,
          comparisons: summary.comparisons,
          ...(Option.isNone(args.detect) ? {} : {
            planning: trialsToDetect(
              Option.getOrElse(
                args.assumeRate,
                () => summary.variants.find((v) => v.name === result.run.baseline)?.passRate ?? 0.5
              ),
              args.detect.value
            )
          }),
          ...(result.comparison === undefined ? {} : { againstBaseline: result.comparison }),
          gate: result.gate === undefined ? { passed: true } : { passed: false, reasons: result.gate.reasons }
        },
        null,
        2
      ))
    } else {
      yield* Console.log(renderTerminal(result.run))
      if (Option.isSome(args.detect)) {
        yield* Console.log(`\n${renderPlan(result.run, args.detect.value, Option.getOrUndefined(args.assumeRate))}`)
      }
      if (result.comparison !== undefined) {
        yield* Console.log(`\nAgainst the baseline:\n${renderComparisonTerminal(result.comparison)}`)
      }
      const shown = path.relative(process.cwd(), result.directory) || result.directory
      yield* Console.log(
        `\nresults: ${shown}/results.json\nreport:  ${shown}/report.html${
          result.comparison === undefined ? "" : `\ncompare: ${shown}/compare.html`
        }`
      )
      if (result.cassette !== undefined) {
        yield* Console.log(`cassette: ${path.relative(process.cwd(), result.cassette) || result.cassette}`)
      }
    }
    if (result.gate !== undefined) return yield* result.gate
    if (!args.json && (Option.isSome(args.minPassRate) || Option.isSome(args.baseline))) {
      yield* Console.log("gate: passed")
    }
  })).pipe(Command.withDescription("Run a suite's variants × scenarios × trials and report pass rates with intervals"))

// ---------------------------------------------------------------------------------------------------------------
// report
// ---------------------------------------------------------------------------------------------------------------

const reportCommand = Command.make(
  "report",
  { dir: dirOption, json: jsonOption, run: Argument.String("RUN") },
  ({ dir, json, run }) =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const evalsDir = yield* evalsDirOf(dir)
      const runsDir = path.join(evalsDir, "runs")
      const file = yield* resolveRun(run, runsDir)
      const results = yield* readRun(file)
      if (json) {
        const summary = summarize(results)
        return yield* Console.log(JSON.stringify({ file, provenance: results.provenance, ...summary }, null, 2))
      }
      yield* Console.log(renderTerminal(results))
      // A run directory gets its HTML re-rendered (a report made by an older runner is brought up to date);
      // a stored baseline file is only read.
      if (path.basename(file) === RESULTS_FILE) {
        yield* writeReport(path.dirname(file), results)
        yield* Console.log(`\nreport: ${path.relative(process.cwd(), path.join(path.dirname(file), "report.html"))}`)
      }
    })
).pipe(Command.withDescription("Show a run again (RUN: a run directory, its results.json, a run id or latest)"))

// ---------------------------------------------------------------------------------------------------------------
// compare
// ---------------------------------------------------------------------------------------------------------------

const compareCommand = Command.make(
  "compare",
  {
    dir: dirOption,
    json: jsonOption,
    html: Flag.File("html").pipe(
      Flag.withDescription("Where to write the HTML comparison (default: compare.html beside RUN_B's results)"),
      Flag.optional
    ),
    failOnDrop: switchFlag("fail-on-drop", "Exit 2 when a variant's pass rate dropped significantly (the CI gate)"),
    before: Argument.String("RUN_A").pipe(Argument.withDescription("The earlier run or a stored baseline")),
    after: Argument.String("RUN_B").pipe(Argument.withDescription("The later run (latest: the newest)"))
  },
  (args) =>
    Effect.gen(function*() {
      const path = yield* Path.Path
      const evalsDir = yield* evalsDirOf(args.dir)
      const runsDir = path.join(evalsDir, "runs")
      const result = yield* compareCommandProgram({
        before: args.before,
        after: args.after,
        runsDir,
        html: Option.getOrUndefined(args.html)
      })
      if (args.json) {
        yield* Console.log(JSON.stringify({ ...result.comparison, html: result.html }, null, 2))
      } else {
        yield* Console.log(renderComparisonTerminal(result.comparison))
        yield* Console.log(`\ncomparison: ${path.relative(process.cwd(), result.html) || result.html}`)
      }
      const drops = significantDrops(result.comparison)
      if (args.failOnDrop && drops.length > 0) {
        return yield* new GateFailedError({
          reasons: drops.map((v) =>
            `${v.variant}: ${v.before!.passed}/${v.before!.total} → ${v.after!.passed}/${v.after!.total}, ` +
            `lost ${v.lost.length} pair(s), ${pText(v.paired!.pValue)} (exact McNemar)`
          )
        })
      }
    })
).pipe(
  Command.withDescription(
    "Compare two runs of a suite: per variant and per scenario, with a paired test where the scenarios match"
  )
)

// ---------------------------------------------------------------------------------------------------------------
// rerecord
// ---------------------------------------------------------------------------------------------------------------

const rerecordCommand = Command.make(
  "rerecord",
  { dir: dirOption, suites: Argument.String("SUITE").pipe(Argument.variadic()) },
  ({ dir, suites }) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const evalsDir = yield* evalsDirOf(dir)
      const names = suites.length > 0 ? suites : yield* listSuites(evalsDir)
      for (const name of names) {
        const cassettePath = path.join(evalsDir, name, "cassette.json")
        const exists = yield* fs.exists(cassettePath).pipe(Effect.orElseSucceed(() => false))
        const meta = exists ? (yield* readCassette(cassettePath)).meta : undefined
        if (meta === undefined && suites.length === 0) continue
        if (meta !== undefined && meta.note !== SCRIPTED_NOTE) {
          yield* Console.log(
            `${name}: skipped, its cassette came from ${meta.source} (${
              meta.respondedModels.join(", ")
            }); re-record it ` +
              `with a key: pnpm evals run ${name} --record`
          )
          continue
        }
        const result = yield* rerecordSuite({
          evalsDir,
          suite: name,
          ...(meta === undefined ? {} : { variants: meta.variants, trials: meta.trials })
        }).pipe(Effect.scoped)
        const summary = summarize(result.run)
        const shown = path.relative(process.cwd(), cassettePath)
        yield* Console.log(
          result.status === "unchanged" ?
            `${name}: unchanged, the requests are the recorded ones; ${shown} left as it was` :
            `${name}: ${result.status} ${
              plural(result.run.results.length, "trial")
            } with the scripted responder → ${shown} (${
              summary.variants.map((v) => `${v.name} ${v.passed}/${v.total}`).join(", ")
            })`
        )
      }
    })
).pipe(
  Command.withDescription(
    "Re-record the cassettes made with the scripted responder (after a prompt or tool change); no key needed"
  )
)

export const evals = Command.make("evals").pipe(
  Command.withDescription("Evaluate memdir's prompt variants and selectors: suites as data, intervals, paired tests"),
  Command.withSubcommands([listCommand, runCommandCli, reportCommand, compareCommand, rerecordCommand])
)
