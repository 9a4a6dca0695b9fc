/**
 * The `pnpm evals` process: parse argv, run the command with Node's platform layers, print a typed failure as its
 * message and exit with its code (docs/evals.md).
 */
import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { evals } from "./Cli.js"
import { type EvalError, evalExitCodes } from "./Errors.js"

const USAGE_EXIT_CODE = 64
const DEFECT_EXIT_CODE = 1

const run = Command.run(evals, { name: "evals", version: "0.1.0" })

const isEvalError = (u: unknown): u is EvalError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in evalExitCodes

const exitWith = (code: number) =>
  Effect.sync(() => {
    process.exitCode = code
  })

const handleFailure = (error: unknown): Effect.Effect<void> => {
  // @effect/cli has already printed usage errors, with the help text
  if (ValidationError.isValidationError(error)) return exitWith(USAGE_EXIT_CODE)
  if (isEvalError(error)) {
    return Console.error(`evals: ${error.message}`).pipe(Effect.zipRight(exitWith(evalExitCodes[error._tag])))
  }
  if (typeof error === "object" && error !== null && "message" in error) {
    return Console.error(`evals: ${String((error as { message: unknown }).message)}`).pipe(
      Effect.zipRight(exitWith(DEFECT_EXIT_CODE))
    )
  }
  return Effect.die(error)
}

const program = Effect.suspend(() => run(process.argv)).pipe(
  Effect.catchAll(handleFailure),
  Effect.tapDefect(() => exitWith(DEFECT_EXIT_CODE)),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program)
