/**
 * How the CLI talks: JSON for machines (`--json`), short lines for people, and one line + a hint for every
 * typed error, with its own exit code (docs/cli.md, "Exit codes").
 */
import { errnoCodeOf, exitCodes, ioCauseOf, type MemdirError, MemoryIoError } from "@memdir/core/Errors"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { PlatformError } from "effect/PlatformError"
import type * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

/** Exit code for command-line usage errors (sysexits EX_USAGE). */
export const USAGE_EXIT_CODE = 64
/** Exit code of `doctor` when error-severity findings remain, and of any unexpected defect. */
export const DOCTOR_FINDINGS_EXIT_CODE = 20
export const DEFECT_EXIT_CODE = 1

/**
 * `n` with a comma between each group of three digits (`10,000`), as `toLocaleString("en-US")` writes an integer:
 * by hand, because the first `toLocaleString` of a process loads ICU's locale data, ~20 ms of a hook's answer.
 */
export const thousands = (n: number): string =>
  Number.isSafeInteger(n) ? String(n).replace(/\B(?=(\d{3})+$)/g, ",") : n.toLocaleString("en-US")

export const printJson = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value, null, 2))

/** The command that ran, as typed (`write`, `team sync`): what a hint's `--help` names. */
export type CommandPath = string

/** Hints that do not depend on the error's fields. Every `memdir …` command named in a hint parses (a test). */
const fixedHints: Partial<Record<MemdirError["_tag"], string>> = {
  InvalidFrontmatterError: "`memdir doctor` lists every file with bad frontmatter",
  InvalidMemoryDirError:
    "give an absolute path or ~/… in MEMDIR_MEMORY_DIR, --memory-dir or autoMemoryDirectory (docs/configuration.md)",
  SettingsError: "memdir reads $MEMDIR_HOME/settings.json, <repo>/.memdir/settings(.local).json and the policy file",
  IndexOverCapError: "run `memdir doctor --fix`, or merge memories so MEMORY.md stays under 200 lines / 25 KB",
  MemoryNotFoundError: "`memdir ls` lists the memories",
  PathTraversalError: "give a path relative to the memory directory (see `memdir path`)",
  MemoryDisabledError: "auto memory is off for this project; see docs/configuration.md",
  LockTimeoutError: "another memdir process is writing; retry, or remove a lock left by a crashed process",
  MemoryIoError: "check permissions and free space of the memory directory",
  UnknownPromptVariantError: "`pnpm evals list` shows every suite's variants (docs/evals.md)",
  ModelError:
    "the model needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) and a reachable API; see docs/configuration.md",
  TeamMemoryDisabledError: "see docs/team-memory.md: teamMemory in user/local settings, or MEMDIR_TEAM_MEMORY=1",
  SecretDetectedError:
    "memdir never writes, commits or pushes a likely secret into team/; `memdir team audit` lists them",
  TeamSyncError: "check teamRemote in your user/local settings and that `git fetch <teamRemote>` works",
  TeamSyncRejectedError: "nothing was merged or pushed; `memdir team sync --json` lists every refused entry"
}

/**
 * The hint for an error raised by `command`: an input error points at that command's own help (a bad `--max`
 * of recall is not explained by `memdir write --help`), a missing `--cwd` at the directory.
 */
export const hintFor = (error: MemdirError, command: CommandPath | undefined): string | undefined => {
  // a refusal whose cause memdir knows already says what to do
  if (error._tag === "MemoryIoError" && ioCauseOf(error.code) !== undefined) return undefined
  if (error._tag === "InvalidMemoryInputError") {
    if (error.field === "--cwd") return "--cwd names the project directory: give one that exists"
    if (error.rule === "directory") return "give a memory file; `memdir ls` lists the memories"
    return `see \`memdir ${command ?? "write"} --help\``
  }
  return fixedHints[error._tag]
}

/** Every hint text, for the check that each `memdir …` command a hint names exists with its flags. */
export const allHints = (commands: ReadonlyArray<CommandPath>): ReadonlyArray<string> => [
  ...Object.values(fixedHints),
  "give a memory file; `memdir ls` lists the memories",
  ...commands.map((command) => `see \`memdir ${command} --help\``)
]

export const isMemdirError = (u: unknown): u is MemdirError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in exitCodes

/**
 * How a command ends in error: `{"error": {_tag, message, ...fields, exitCode}}` on stdout with `--json`, else
 * `memdir: <message>` and the hint (if any) on stderr.
 */
const renderDocument = (
  error: { readonly _tag: string; readonly message: string },
  code: number,
  json: boolean,
  hint: string | undefined
): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (json) {
      const { _tag, ...fields } = error as unknown as Record<string, unknown>
      yield* printJson({ error: { _tag, message: error.message, ...fields, exitCode: code } })
    } else {
      yield* Console.error(`memdir: ${error.message}`)
      if (hint !== undefined) yield* Console.error(`hint: ${hint}`)
    }
  })

/** Render a typed error (stderr line + hint, or JSON on stdout) and return its exit code. */
export const renderError = (
  error: MemdirError,
  json: boolean,
  command?: CommandPath | undefined
): Effect.Effect<number> => {
  const code = exitCodes[error._tag] ?? DEFECT_EXIT_CODE
  return Effect.as(renderDocument(error, code, json, hintFor(error, command)), code)
}

/** The signals that stop a command, each with the exit code a shell reports for it (128 + the signal's number). */
export const signalExitCodes = { SIGINT: 130, SIGTERM: 143 } as const
export type StopSignal = keyof typeof signalExitCodes

/**
 * A command stopped by SIGINT (Ctrl-C) or SIGTERM before it finished, and what it kept: not a failure of the
 * command but rendered like one, in one line (or the JSON document), with exit 130 / 143 (docs/cli.md).
 */
export class Interrupted extends Schema.TaggedError<Interrupted>()("Interrupted", {
  signal: Schema.Literals(["SIGINT", "SIGTERM"]),
  /** The (sub)command that was stopped, as typed (`extract`, `team sync`), or "" before one started. */
  command: Schema.String,
  /** What was kept and what was not, as the command knows it when the signal stopped it. */
  kept: Schema.String
}) {
  override get message(): string {
    return `interrupted by ${this.signal}: ${this.kept}`
  }
}

/**
 * Where a command says what it kept if a signal stops it (its `Effect.onInterrupt`, after its own finalizers ran):
 * what `main` renders as `Interrupted.kept`. A command that sets nothing gets the generic sentence.
 */
export class InterruptNote
  extends Context.Service<InterruptNote, Ref.Ref<Option.Option<string>>>()("@memdir/cli/InterruptNote")
{}

/** Render an interruption (one line on stderr, or the JSON document on stdout) and return its exit code. */
export const renderInterrupted = (interrupted: Interrupted, json: boolean, code: number): Effect.Effect<number> =>
  Effect.as(renderDocument(interrupted, code, json, undefined), code)

/**
 * A usage error (unknown option or command, missing or wrong value) under `--json`: the same document as a typed
 * error, on stdout (main has already printed it, with the usage, on stderr), with its hint and the usage.
 */
export const renderUsageError = (
  problem: {
    readonly kind: string
    readonly message: string
    readonly hint: string | undefined
    readonly usage: string
  }
): Effect.Effect<number> =>
  Effect.as(
    printJson({
      error: {
        _tag: "UsageError",
        kind: problem.kind,
        message: plainText(problem.message),
        ...(problem.hint === undefined ? {} : { hint: problem.hint }),
        usage: problem.usage,
        exitCode: USAGE_EXIT_CODE
      }
    }),
    USAGE_EXIT_CODE
  )

const plainText = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, "").trim()

/** Wrap a platform failure at the boundary into the typed `MemoryIoError`, its errno code kept. */
export const toIoError = (op: string, path: string) => (error: PlatformError): MemoryIoError =>
  new MemoryIoError({ op, path, detail: error.message, code: errnoCodeOf(error) })
