/**
 * `evals run` as a program: load the suite, decide where answers come from (offline, live, record, replay),
 * run every trial, write `results.json` + `report.html` + `chart.svg` under `evals/runs/<timestamp>-<suite>/`,
 * replace the cassette when a recording is complete (never otherwise: docs/evals.md), and apply the gate.
 */
import * as ModelModule from "@memdir/core/Model"
import { Model, type ModelRole, modelRoles } from "@memdir/core/Model"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import {
  Cassette,
  type CassetteEntry,
  type CassetteMeta,
  DEFAULT_ENDPOINT,
  layerRecord,
  layerReplay,
  readCassette,
  type RecordFailure,
  replaceFile,
  sameRequests,
  sourceOfEndpoint,
  writeCassette
} from "./Cassette.js"
import { compareRuns, renderComparisonHtml, type RunComparison } from "./Compare.js"
import {
  EvalIoError,
  GateFailedError,
  InvalidRunOptionError,
  ModelUnavailableError,
  RecordingIncompleteError
} from "./Errors.js"
import { gateFailures } from "./Gate.js"
import { harnessCatalog, prepareHarness, suiteNeedsModel } from "./Harness.js"
import { meterModel } from "./Metering.js"
import type { Price } from "./Pricing.js"
import { renderChart } from "./Report.js"
import { renderHtml } from "./ReportHtml.js"
import { type Provenance, type RunResults, summarize } from "./Results.js"
import { readRun, resolveRun, RESULTS_FILE } from "./RunFiles.js"
import { runTrials, selectVariants, trialKeyOf, type TrialProgress } from "./Runner.js"
import { SCRIPTED_MODEL, SCRIPTED_NOTE, scriptedResponder } from "./Scripted.js"
import { formatRate, widestInterval } from "./Stats.js"
import { type LoadedSuite, loadSuite } from "./Suite.js"

export interface RunCommandOptions {
  /** The directory of suites (`evals/`); runs go to `<evalsDir>/runs/` unless `runsDir` says otherwise. */
  readonly evalsDir: string
  readonly runsDir?: string | undefined
  readonly suite: string
  readonly variants?: ReadonlyArray<string> | undefined
  readonly trials?: number | undefined
  /** Model id for the suite's roles (not the grader's). */
  readonly model?: string | undefined
  readonly concurrency?: number | undefined
  readonly record?: boolean | undefined
  readonly replay?: boolean | undefined
  /** Default: `<suite dir>/cassette.json`. */
  readonly cassette?: string | undefined
  /** Says who answers when recording against a local server (e.g. the scripted responder). */
  readonly recordingNote?: string | undefined
  /**
   * Answer with the scripted responder on a local Messages API server (no key, no network): for exercising the
   * harness and making labelled cassettes for CI, never for measuring a prompt.
   */
  readonly scripted?: boolean | undefined
  readonly minPassRate?: number | undefined
  readonly baseline?: string | undefined
  readonly price?: Price | undefined
  /**
   * Keep adding one trial per scenario until every variant's 95% interval is at most this wide (0–1), or
   * `maxTrials` is reached. Live and recorded runs only: offline and replayed answers do not vary.
   */
  readonly untilCiWidth?: number | undefined
  /** The most trials per scenario `untilCiWidth` may reach (default 30). */
  readonly maxTrials?: number | undefined
  readonly onTrial?: ((progress: TrialProgress) => Effect.Effect<void>) | undefined
  /** Said when something about the run is worth knowing (variants skipped…). */
  readonly onNote?: ((note: string) => Effect.Effect<void>) | undefined
}

export interface RunCommandResult {
  readonly run: RunResults
  /** Where results.json and the report were written. */
  readonly directory: string
  /** The cassette written (record) or read (replay). */
  readonly cassette?: string | undefined
  /** With `baseline`: what changed against it. */
  readonly comparison?: RunComparison | undefined
}

const ioError = (op: string, path: string) => (error: { readonly message: string }) =>
  new EvalIoError({ op, path, detail: error.message })

/** `20260310T120000Z` */
export const runStamp = (ms: number): string => new Date(ms).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")

const endpointConfig = Config.String("ANTHROPIC_BASE_URL").pipe(
  Config.option,
  Config.map(Option.filter((s) => s.trim() !== "")),
  Config.map(Option.getOrElse(() => DEFAULT_ENDPOINT))
)

/** The live model, with `--model` for every role but the grader's. */
const liveModel = (model: string | undefined) =>
  model === undefined ?
    ModelModule.layer :
    ModelModule.layerWith({
      models: Object.fromEntries(
        modelRoles.map((role) => [role, role === "grader" ? undefined : model]).filter(([, m]) => m !== undefined)
      ) as Record<ModelRole, string>
    })

const liveProvenance =
  (mode: "live" | "record", endpoint: string, note: string | undefined) =>
  (models: ReadonlyArray<string>): Effect.Effect<Provenance> => {
    const source = sourceOfEndpoint(endpoint)
    return Effect.succeed({
      mode,
      models,
      endpoint,
      // No answer is no evidence: a refused key against the real API is not a real model's run.
      realModel: source === "anthropic-api" && models.length > 0,
      note: note ?? (source === "anthropic-api" ?
        "live answers from the Anthropic API" :
        source === "local-server" ?
        "answers from a local server on this machine, not a verified model" :
        "answers from an endpoint other than api.anthropic.com, not verified as a real model")
    })
  }

/**
 * Runs a suite and writes its results; the gate's verdict comes back as `gate` (after the files are written).
 * With `scripted`, a local Messages API server answers with the scripted responder for the whole run.
 */
export const runCommand = (options: RunCommandOptions) =>
  options.scripted !== true ? runSuiteCommand(options) : Effect.scoped(Effect.gen(function*() {
    if (options.replay === true) {
      return yield* new InvalidRunOptionError({
        option: "--scripted",
        value: "--replay",
        reason: "a replay answers from its cassette; --scripted answers from the local scripted server"
      })
    }
    const server = yield* MessagesApiServer.make({ handler: scriptedResponder })
    const local = ConfigProvider.fromEnvRecord({
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "scripted-no-key"
    })
    return yield* runSuiteCommand({ ...options, recordingNote: SCRIPTED_NOTE, model: options.model ?? SCRIPTED_MODEL })
      .pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.orElse(local, ConfigProvider.fromEnv()))
      )
  }))

const runSuiteCommand = Effect.fn("Run.runCommand")(function*(options: RunCommandOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const suite: LoadedSuite = yield* loadSuite(options.evalsDir, options.suite, harnessCatalog)
  if (options.record === true && options.replay === true) {
    return yield* new InvalidRunOptionError({ option: "--record", value: "--replay", reason: "choose one of them" })
  }
  const concurrency = options.concurrency ?? 4
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    return yield* new InvalidRunOptionError({
      option: "--concurrency",
      value: String(concurrency),
      reason: "must be ≥ 1"
    })
  }
  if (options.trials !== undefined && (!Number.isInteger(options.trials) || options.trials < 1)) {
    return yield* new InvalidRunOptionError({
      option: "--trials",
      value: String(options.trials),
      reason: "must be ≥ 1"
    })
  }
  if (options.minPassRate !== undefined && !(options.minPassRate >= 0 && options.minPassRate <= 1)) {
    return yield* new InvalidRunOptionError({
      option: "--min-pass-rate",
      value: String(options.minPassRate),
      reason: "must be a share from 0 to 1 (0.8 for 80%)"
    })
  }
  if (options.untilCiWidth !== undefined && !(options.untilCiWidth > 0 && options.untilCiWidth < 1)) {
    return yield* new InvalidRunOptionError({
      option: "--until-ci-width",
      value: String(options.untilCiWidth),
      reason: "must be a width between 0 and 1 (0.3 for ±15 points)"
    })
  }
  const maxTrials = options.maxTrials ?? 30
  if (!Number.isInteger(maxTrials) || maxTrials < 1) {
    return yield* new InvalidRunOptionError({ option: "--max-trials", value: String(maxTrials), reason: "must be ≥ 1" })
  }
  const baseline = options.baseline === undefined ? undefined : yield* readRun(options.baseline)
  let variants = yield* selectVariants(suite, options.variants)
  let trials = options.trials ?? suite.trials
  const cassettePath = path.resolve(options.cassette ?? path.join(suite.directory, "cassette.json"))
  const needsModel = suiteNeedsModel(suite, variants)
  const keyConfigured = yield* ModelModule.isConfigured

  // Where the answers come from.
  let recorded: Readonly<Record<string, boolean>> | undefined
  let mode: RunResults["provenance"]["mode"] = "offline"
  let modelLayer: Layer.Layer<Model, never> | Layer.Layer<Model | Cassette, never> | undefined
  let provenance: (models: ReadonlyArray<string>) => Effect.Effect<Provenance> = (models) =>
    Effect.succeed({ mode: "offline", models, realModel: false, note: "no model: the offline selector" })
  const endpoint = yield* endpointConfig
  if (options.replay === true) {
    if (!(yield* fs.exists(cassettePath).pipe(Effect.mapError(ioError("read", cassettePath))))) {
      return yield* new ModelUnavailableError({ suite: suite.name, cassette: cassettePath, cassetteExists: false })
    }
    const file = yield* readCassette(cassettePath)
    recorded = file.meta.outcomes
    // Replay what was recorded unless told otherwise: its variants (those the suite still has) and its trials.
    if (options.variants === undefined || options.variants.length === 0) {
      const kept = suite.variants.map((v) => v.name).filter((name) => file.meta.variants.includes(name))
      if (kept.length > 0) variants = kept
    }
    if (options.trials === undefined) trials = file.meta.trials
    mode = "replay"
    modelLayer = layerReplay(file, cassettePath)
    provenance = (models) =>
      Effect.succeed({
        mode: "replay",
        models: file.meta.respondedModels.length > 0 ? file.meta.respondedModels : models,
        endpoint: file.meta.endpoint,
        realModel: file.meta.realModel && file.entries.length > 0,
        cassette: path.relative(process.cwd(), cassettePath) || cassettePath,
        note: `replayed from a cassette recorded ${file.meta.recordedAt}: ${file.meta.note}`
      })
  } else if (options.record === true || needsModel) {
    if (!keyConfigured) {
      const llmVariants = suite.kind === "selector" ? suite.variants.filter((v) => v.selector === "llm") : []
      const explicitlyAsked = options.variants !== undefined && options.variants.length > 0
      if (suite.kind === "selector" && !explicitlyAsked && options.record !== true) {
        // The selector suite stays useful with no key: its offline variants run, the LLM ones are skipped, saying so.
        variants = variants.filter((name) => !llmVariants.some((v) => v.name === name))
        if (options.onNote !== undefined) {
          yield* options.onNote(
            `skipped ${llmVariants.map((v) => v.name).join(", ")}: no ANTHROPIC_API_KEY and no --replay ` +
              `(they need a model or a cassette)`
          )
        }
      } else {
        const cassetteExists = yield* fs.exists(cassettePath).pipe(Effect.mapError(ioError("read", cassettePath)))
        return yield* new ModelUnavailableError({ suite: suite.name, cassette: cassettePath, cassetteExists })
      }
    } else {
      mode = options.record === true ? "record" : "live"
      const live = liveModel(options.model).pipe(Layer.orDie)
      modelLayer = options.record === true ? layerRecord.pipe(Layer.provide(live)) : live
      provenance = liveProvenance(mode, endpoint, options.recordingNote)
    }
  }
  if (variants.length === 0) {
    return yield* new InvalidRunOptionError({ option: "--variants", value: "", reason: "no variant left to run" })
  }
  if (options.untilCiWidth !== undefined && (mode === "offline" || mode === "replay")) {
    return yield* new InvalidRunOptionError({
      option: "--until-ci-width",
      value: String(options.untilCiWidth),
      reason: `a ${mode} run gives the same answer to every trial, so more trials only narrow the interval ` +
        `artificially; use it on a live or --record run`
    })
  }

  const program = Effect.gen(function*() {
    const model = yield* Model
    const run = yield* Effect.gen(function*() {
      const runTrial = yield* prepareHarness(suite)
      const round = (fromTrial: number, upTo: number) =>
        runTrials({
          suite,
          variants,
          trials: upTo,
          fromTrial,
          concurrency,
          runTrial,
          provenance,
          price: options.price,
          onTrial: options.onTrial
        })
      let run = yield* round(1, trials)
      // Early stop: one more trial per scenario while some variant's interval is wider than asked.
      while (options.untilCiWidth !== undefined && run.trials < maxTrials) {
        const width = widestInterval(summarize(run).variants)
        if (width <= options.untilCiWidth) break
        if (options.onNote !== undefined) {
          yield* options.onNote(
            `after ${run.trials} trial(s) per scenario the widest 95% interval is ${formatRate(width)} wide ` +
              `(asked: ≤ ${formatRate(options.untilCiWidth)}): one more trial per scenario`
          )
        }
        const more = yield* round(run.trials + 1, run.trials + 1)
        run = {
          ...more,
          startedAt: run.startedAt,
          results: [...run.results, ...more.results],
          provenance: {
            ...more.provenance,
            models: [...new Set([...run.provenance.models, ...more.provenance.models])].sort()
          }
        }
      }
      if (options.untilCiWidth !== undefined && options.onNote !== undefined) {
        const width = widestInterval(summarize(run).variants)
        yield* options.onNote(
          width <= options.untilCiWidth ?
            `stopped after ${run.trials} trial(s) per scenario: every 95% interval is at most ${
              formatRate(width)
            } wide` :
            `reached --max-trials ${maxTrials} with the widest 95% interval still ${formatRate(width)} wide`
        )
      }
      return run
    }).pipe(Effect.provideService(Model, meterModel(model)))
    const cassette = yield* Effect.serviceOption(Cassette)
    if (Option.isNone(cassette) || cassette.value.mode !== "record") return { run, recording: undefined }
    const entries: ReadonlyArray<CassetteEntry> = yield* cassette.value.entries
    const source = sourceOfEndpoint(endpoint)
    const meta: CassetteMeta = {
      source,
      endpoint,
      realModel: source === "anthropic-api" && entries.length > 0,
      requestedModels: Object.fromEntries(modelRoles.map((role) => [role, model.modelFor(role)])),
      respondedModels: [...new Set(entries.map((e) => e.response.model))].sort(),
      recordedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
      suite: suite.name,
      variants,
      trials: run.trials,
      note: run.provenance.note,
      outcomes: Object.fromEntries(run.results.map((r) => [trialKeyOf(suite.name, r), r.passed]))
    }
    return { run, recording: { meta, entries, failures: yield* cassette.value.failures } }
  })
  const { recording, run } = yield* Effect.scoped(
    modelLayer === undefined ?
      program.pipe(Effect.provide(ModelModule.layer.pipe(Layer.orDie))) :
      program.pipe(Effect.provide(modelLayer))
  )

  const runsDir = options.runsDir ?? path.join(options.evalsDir, "runs")
  // Two runs started in the same second get their own directories (a comparison of them must not read one twice).
  const stem = path.join(runsDir, `${runStamp(Date.parse(run.startedAt))}-${suite.name}`)
  let directory = stem
  for (let n = 2; yield* fs.exists(directory).pipe(Effect.mapError(ioError("read", directory))); n++) {
    directory = `${stem}-${n}`
  }
  yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(ioError("mkdir", directory)))
  yield* writeRunFiles(directory, run)
  if (recording !== undefined) yield* saveRecording(cassettePath, directory, run, recording)
  const failures = [
    ...(recorded === undefined ? [] : replayDrift(run, recorded, cassettePath)),
    ...gateFailures(run, { minPassRate: options.minPassRate, baseline, baselinePath: options.baseline })
  ]
  // Against a baseline, the comparison is written beside the report (and shown by the CLI).
  const comparison = baseline === undefined || baseline.suite !== run.suite ?
    undefined :
    compareRuns(baseline, run, { before: options.baseline!, after: "this run" })
  if (comparison !== undefined) yield* writeIn(directory, "compare.html", renderComparisonHtml(comparison))
  const result: RunCommandResult = {
    run,
    directory,
    ...(mode === "record" || mode === "replay" ? { cassette: cassettePath } : {}),
    ...(comparison === undefined ? {} : { comparison })
  }
  return { ...result, gate: failures.length === 0 ? undefined : new GateFailedError({ reasons: failures }) }
})

/** Pure: the trials of a recording that did not get all of their answers (a model call failed, or it errored). */
export const unansweredTrials = (
  run: RunResults,
  failures: ReadonlyArray<RecordFailure>
): ReadonlyArray<string> => [
  ...new Set([
    ...run.results.flatMap((r) => r.error === undefined ? [] : [trialKeyOf(run.suite, r)]),
    ...failures.map((f) => f.trial)
  ])
]

/**
 * A recording replaces the cassette only when it is complete: some answers came and every trial got all of its
 * own. Otherwise the old file stays byte for byte, the answers that came are saved beside the run
 * (`cassette.incomplete.json`), and the run fails saying how many trials got no answer and why.
 */
const saveRecording = Effect.fn("Run.saveRecording")(function*(
  cassettePath: string,
  directory: string,
  run: RunResults,
  recording: {
    readonly meta: CassetteMeta
    readonly entries: ReadonlyArray<CassetteEntry>
    readonly failures: ReadonlyArray<RecordFailure>
  }
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const unanswered = unansweredTrials(run, recording.failures)
  if (unanswered.length === 0 && recording.entries.length > 0) {
    return yield* writeCassette(cassettePath, recording.meta, recording.entries)
  }
  const incomplete = recording.entries.length === 0 ? undefined : path.join(directory, "cassette.incomplete.json")
  if (incomplete !== undefined) yield* writeCassette(incomplete, recording.meta, recording.entries)
  const firstError = recording.failures[0]?.error.message ?? run.results.find((r) => r.error !== undefined)?.error
  return yield* new RecordingIncompleteError({
    cassette: cassettePath,
    kept: yield* fs.exists(cassettePath).pipe(Effect.mapError(ioError("read", cassettePath))),
    trials: run.results.length,
    unanswered: unanswered.length === 0 ? run.results.length : unanswered.length,
    reason: firstError ?? "no trial asked a model anything: these variants need none, there is nothing to record",
    report: path.join(directory, "report.html"),
    ...(incomplete === undefined ? {} : { incomplete })
  })
})

/**
 * Pure: the trials whose pass/fail differs from the recording. The answers are the same, so a difference means
 * the harness or a scorer changed what it measures: re-record, or find the regression.
 */
export const replayDrift = (
  run: RunResults,
  recorded: Readonly<Record<string, boolean>>,
  cassette: string
): ReadonlyArray<string> => {
  const drifted = run.results.flatMap((r) => {
    const key = trialKeyOf(run.suite, r)
    return key in recorded && recorded[key] !== r.passed ?
      [`${key}: ${recorded[key] ? "passed" : "failed"} when recorded, ${r.passed ? "passes" : "fails"} now`] :
      []
  })
  return drifted.length === 0 ? [] : [
    `replay of ${cassette} disagrees with its recording on ${drifted.length} trial(s): ${
      drifted.slice(0, 5).join("; ")
    }${
      drifted.length > 5 ? "; …" : ""
    }. The answers are the recorded ones, so a scorer or the harness changed what it measures.`
  ]
}

const writeIn = (directory: string, name: string, text: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = path.join(directory, name)
    yield* fs.writeFileString(file, text).pipe(Effect.mapError(ioError("write", file)))
  })

/** report.html and chart.svg of a run. */
export const writeReport = Effect.fn("Run.writeReport")(function*(directory: string, run: RunResults) {
  yield* writeIn(directory, "report.html", renderHtml(run))
  yield* writeIn(directory, "chart.svg", renderChart(run) + "\n")
})

/** results.json, report.html and chart.svg of a run. */
export const writeRunFiles = Effect.fn("Run.writeRunFiles")(function*(directory: string, run: RunResults) {
  yield* writeIn(directory, RESULTS_FILE, JSON.stringify(run, null, 1) + "\n")
  yield* writeReport(directory, run)
})

export interface RerecordResult {
  readonly suite: string
  /** `unchanged`: the requests are the recorded ones, so the file was left as it was (byte for byte). */
  readonly status: "recorded" | "rewritten" | "unchanged"
  readonly cassette: string
  readonly run: RunResults
}

/**
 * Re-records a suite's scripted cassette with the scripted responder, into a scratch file first: the committed
 * cassette is replaced only when its requests changed (a prompt, a scenario, a tool), so re-recording after an
 * unrelated change leaves every file byte for byte as it was.
 */
export const rerecordSuite = Effect.fn("Run.rerecordSuite")(function*(options: {
  readonly evalsDir: string
  readonly suite: string
  readonly runsDir?: string | undefined
  readonly variants?: ReadonlyArray<string> | undefined
  readonly trials?: number | undefined
}) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const cassettePath = path.join(options.evalsDir, options.suite, "cassette.json")
  const exists = yield* fs.exists(cassettePath).pipe(Effect.mapError(ioError("read", cassettePath)))
  const before = exists ? yield* readCassette(cassettePath) : undefined
  const scratch = yield* fs.makeTempDirectoryScoped({ prefix: "memdir-rerecord-" }).pipe(
    Effect.mapError(ioError("mkdir", "a scratch directory"))
  )
  const fresh = path.join(scratch, "cassette.json")
  // The variants recorded before that the suite still has (a variant removed from the suite is dropped).
  const suite = yield* loadSuite(options.evalsDir, options.suite, harnessCatalog)
  const kept = options.variants?.filter((name) => suite.variants.some((v) => v.name === name))
  const result = yield* runCommand({
    evalsDir: options.evalsDir,
    runsDir: options.runsDir,
    suite: options.suite,
    scripted: true,
    record: true,
    cassette: fresh,
    variants: kept === undefined || kept.length === 0 ? undefined : kept,
    trials: options.trials
  })
  const after = yield* readCassette(fresh)
  if (before !== undefined && sameRequests(before, after)) {
    return { suite: options.suite, status: "unchanged", cassette: cassettePath, run: result.run } as RerecordResult
  }
  const text = yield* fs.readFileString(fresh).pipe(Effect.mapError(ioError("read", fresh)))
  yield* replaceFile(cassettePath, text)
  return {
    suite: options.suite,
    status: before === undefined ? "recorded" : "rewritten",
    cassette: cassettePath,
    run: result.run
  } as RerecordResult
})

/**
 * Reads two runs, compares them and writes the HTML comparison (default: `compare.html` beside RUN_B's
 * results.json, or under the runs directory when RUN_B is a stored baseline file). Suites must match.
 */
export const compareCommandProgram = Effect.fn("Run.compare")(function*(options: {
  readonly before: string
  readonly after: string
  readonly runsDir: string
  readonly html?: string | undefined
}) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const fileBefore = yield* resolveRun(options.before, options.runsDir)
  const fileAfter = yield* resolveRun(options.after, options.runsDir)
  const before = yield* readRun(fileBefore)
  const after = yield* readRun(fileAfter)
  if (before.suite !== after.suite) {
    return yield* new InvalidRunOptionError({
      option: "RUN_B",
      value: options.after,
      reason: `is a run of suite ${after.suite}, RUN_A of ${before.suite}: compare two runs of the same suite`
    })
  }
  const label = (reference: string, file: string) =>
    path.basename(file) === RESULTS_FILE ? path.basename(path.dirname(file)) : reference
  const comparison = compareRuns(before, after, {
    before: label(options.before, fileBefore),
    after: label(options.after, fileAfter)
  })
  const html = path.resolve(
    options.html ?? (path.basename(fileAfter) === RESULTS_FILE ?
      path.join(path.dirname(fileAfter), "compare.html") :
      path.join(options.runsDir, `compare-${runStamp(Date.parse(after.startedAt))}-${after.suite}.html`))
  )
  yield* fs.makeDirectory(path.dirname(html), { recursive: true }).pipe(Effect.mapError(ioError("mkdir", html)))
  const reportOf = (file: string) => {
    const report = path.join(path.dirname(file), "report.html")
    return fs.exists(report).pipe(
      Effect.map((exists) =>
        exists && path.basename(file) === RESULTS_FILE ? path.relative(path.dirname(html), report) : undefined
      ),
      Effect.mapError(ioError("read", report))
    )
  }
  yield* fs.writeFileString(
    html,
    renderComparisonHtml(comparison, { before: yield* reportOf(fileBefore), after: yield* reportOf(fileAfter) })
  ).pipe(Effect.mapError(ioError("write", html)))
  return { comparison, html }
})
