/**
 * What can stop an eval run, each with what to do about it, and the exit code `pnpm evals` ends with.
 */
import * as Schema from "effect/Schema"

/** One thing wrong in a suite file: where (file, line when known, field path) and what. */
export const SuiteProblem = Schema.Struct({
  path: Schema.String,
  line: Schema.optional(Schema.Number),
  message: Schema.String
})
export type SuiteProblem = typeof SuiteProblem.Type

/** A suite file that cannot be used as it is. Lists every problem found, not just the first. */
export class InvalidSuiteError extends Schema.TaggedError<InvalidSuiteError>()("InvalidSuiteError", {
  file: Schema.String,
  problems: Schema.Array(SuiteProblem)
}) {
  override get message(): string {
    const lines = this.problems.map((p) =>
      `  ${this.file}${p.line === undefined ? "" : `:${p.line}`}: ${p.path === "" ? "" : `${p.path}: `}${p.message}`
    )
    return `invalid suite ${this.file} (${this.problems.length} problem${this.problems.length === 1 ? "" : "s"}):\n` +
      lines.join("\n")
  }
}

/** `evals list` found suites that do not load: each was printed with its problems. */
export class InvalidSuitesError extends Schema.TaggedError<InvalidSuitesError>()("InvalidSuitesError", {
  directory: Schema.String,
  suites: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.suites.length} invalid suite${this.suites.length === 1 ? "" : "s"} in ${this.directory}: ` +
      `${this.suites.join(", ")}. Fix the problems listed above (file:line: field: message), then list again.`
  }
}

export class SuiteNotFoundError extends Schema.TaggedError<SuiteNotFoundError>()("SuiteNotFoundError", {
  name: Schema.String,
  directory: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const known = this.known.length === 0 ? "none" : this.known.join(", ")
    return `no suite ${JSON.stringify(this.name)} in ${this.directory} (a directory with suite.yaml or suite.json). ` +
      `Known suites: ${known}. List them with \`pnpm evals list\`.`
  }
}

/** A command-line choice that does not fit the suite (unknown variant, bad number, conflicting flags). */
export class InvalidRunOptionError extends Schema.TaggedError<InvalidRunOptionError>()("InvalidRunOptionError", {
  option: Schema.String,
  value: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.option} ${JSON.stringify(this.value)}: ${this.reason}`
  }
}

/** A suite that needs a model, run with neither a key nor a cassette to replay. */
export class ModelUnavailableError extends Schema.TaggedError<ModelUnavailableError>()("ModelUnavailableError", {
  suite: Schema.String,
  cassette: Schema.String,
  /** Whether the cassette file exists: the advice differs (replay it, or record one first). */
  cassetteExists: Schema.Boolean
}) {
  override get message(): string {
    const live = `set ANTHROPIC_API_KEY for a live run (add --record to keep a cassette)`
    return this.cassetteExists ?
      `suite ${this.suite} needs a model: ${live}, or replay its recorded answers with --replay ` +
      `(the cassette ${this.cassette} exists).` :
      `suite ${this.suite} needs a model: ${live}; --replay needs a cassette and there is no cassette at ` +
      `${this.cassette} yet (record one with a key and --record, or with the scripted responder: ` +
      `--scripted --record).`
  }
}

/** A cassette file that cannot be read or is not a cassette. */
export class CassetteError extends Schema.TaggedError<CassetteError>()("CassetteError", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `cassette ${this.path}: ${this.detail}. Re-record it with --record (needs ANTHROPIC_API_KEY).`
  }
}

/** Replay met a request the cassette has no answer for: the prompt, the scenario or the trial count changed. */
export class CassetteMissError extends Schema.TaggedError<CassetteMissError>()("CassetteMissError", {
  cassette: Schema.String,
  trial: Schema.String,
  hash: Schema.String,
  summary: Schema.String
}) {
  override get message(): string {
    return `replay: cassette ${this.cassette} has no answer for ${this.trial} (request ${this.hash.slice(0, 12)}: ` +
      `${this.summary}). The request differs from the recorded one: a prompt, scenario, tool or trial count ` +
      `changed. Re-record with --record, or run without --replay.`
  }
}

/**
 * `--record` ended with trials that got no answer (or only some of theirs) from the model: a replay of that
 * recording would miss, so it replaced no cassette (docs/evals.md, "Record and replay").
 */
export class RecordingIncompleteError extends Schema.TaggedError<RecordingIncompleteError>()(
  "RecordingIncompleteError",
  {
    cassette: Schema.String,
    /** Whether a cassette was there (and is kept as it was) or none was written. */
    kept: Schema.Boolean,
    trials: Schema.Number,
    unanswered: Schema.Number,
    /** The first model error, or why no request was made. */
    reason: Schema.String,
    /** The run's report, where each errored trial is shown. */
    report: Schema.String,
    /** The answers that did come, saved beside the run (absent when none came). */
    incomplete: Schema.optional(Schema.String)
  }
) {
  override get message(): string {
    return `recording incomplete: ${this.unanswered} of ${this.trials} trial${
      this.trials === 1 ? "" : "s"
    } got no answer (${this.reason.replace(/\s+/g, " ").trim()}); ${
      this.kept ? `${this.cassette} was kept as it was` : `no cassette was written to ${this.cassette}`
    }${
      this.incomplete === undefined ? "" : `, the answers that came are in ${this.incomplete}`
    }. Fix the cause and record again (every errored trial is in ${this.report}).`
  }
}

export class RunNotFoundError extends Schema.TaggedError<RunNotFoundError>()("RunNotFoundError", {
  run: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `no eval run at ${this.run}: ${this.detail}. Runs are directories under evals/runs/ with a results.json.`
  }
}

/** The regression gate: a pass rate under `--min-pass-rate`, or a significant drop against the baseline. */
export class GateFailedError extends Schema.TaggedError<GateFailedError>()("GateFailedError", {
  reasons: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `gate failed:\n${this.reasons.map((r) => `  - ${r}`).join("\n")}`
  }
}

/** A file the runner could not read or write (fixtures, results, reports). */
export class EvalIoError extends Schema.TaggedError<EvalIoError>()("EvalIoError", {
  op: Schema.String,
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.op} ${this.path} failed: ${this.detail}`
  }
}

export type EvalError =
  | InvalidSuiteError
  | InvalidSuitesError
  | SuiteNotFoundError
  | InvalidRunOptionError
  | ModelUnavailableError
  | CassetteError
  | CassetteMissError
  | RecordingIncompleteError
  | RunNotFoundError
  | GateFailedError
  | EvalIoError

/** `pnpm evals` exit codes (docs/evals.md). 1 is a defect, 64 a usage error. */
export const evalExitCodes: Record<EvalError["_tag"], number> = {
  GateFailedError: 2,
  InvalidSuiteError: 3,
  InvalidSuitesError: 3,
  SuiteNotFoundError: 4,
  InvalidRunOptionError: 5,
  ModelUnavailableError: 6,
  CassetteError: 7,
  CassetteMissError: 8,
  RunNotFoundError: 9,
  EvalIoError: 10,
  RecordingIncompleteError: 11
}
