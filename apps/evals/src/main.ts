/**
 * The `pnpm evals` process: parse argv, run the command with Node's platform layers, print a typed failure as its
 * message and exit with its code (docs/evals.md). SIGINT or SIGTERM interrupts the run (its scratch directories
 * are removed) and exits 130 or 143 with one line: nothing is written after the trials are cut short, and a
 * cassette is only ever replaced whole by a complete recording, so the old one is kept.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import * as Cause from "effect/Cause"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { evals } from "./Cli.js"
import { type EvalError, evalExitCodes } from "./Errors.js"

const USAGE_EXIT_CODE = 64
const DEFECT_EXIT_CODE = 1

const run = Command.run(evals, { version: "0.1.0" })

const isEvalError = (u: unknown): u is EvalError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in evalExitCodes

const exitWith = (code: number) =>
  Effect.sync(() => {
    process.exitCode = code
  })

const handleFailure = (error: unknown): Effect.Effect<void> => {
  // The command line has already printed the help text, and with it any usage error: `--help` alone exits 0
  if (CliError.isCliError(error)) {
    return exitWith(error._tag === "ShowHelp" && error.errors.length === 0 ? 0 : USAGE_EXIT_CODE)
  }
  if (isEvalError(error)) {
    return Console.error(`evals: ${error.message}`).pipe(Effect.andThen(exitWith(evalExitCodes[error._tag])))
  }
  if (typeof error === "object" && error !== null && "message" in error) {
    return Console.error(`evals: ${String((error as { message: unknown }).message)}`).pipe(
      Effect.andThen(exitWith(DEFECT_EXIT_CODE))
    )
  }
  return Effect.die(error)
}

const program = run.pipe(
  Effect.catch(handleFailure),
  Effect.tapDefect(() => exitWith(DEFECT_EXIT_CODE)),
  Effect.provide(NodeServices.layer)
)

/** The signal that interrupted the run, if one did (the runtime's own handlers interrupt the fiber). */
let signal: "SIGINT" | "SIGTERM" | undefined
for (const name of ["SIGINT", "SIGTERM"] as const) process.once(name, () => (signal ??= name))

NodeRuntime.runMain(program, {
  // The default teardown exits 0 on an interrupt: a Ctrl-C'd recording must not look like a finished one.
  teardown: (exit, onExit) => {
    if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) {
      process.stderr.write(
        `evals: interrupted by ${signal ?? "an interrupt"}: the run stopped; an unfinished recording replaces ` +
          `no cassette (the old one is kept)\n`
      )
      return onExit(signal === "SIGTERM" ? 143 : 130)
    }
    // 0 lets Node exit on its own with the `exitCode` set above (its output flushed); after a signal the runtime
    // exits at once with the code given, so give it that one.
    onExit(Exit.isFailure(exit) ? DEFECT_EXIT_CODE : signal === undefined ? 0 : Number(process.exitCode ?? 0))
  }
})
