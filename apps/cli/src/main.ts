/**
 * The `memdir` process: parse argv, run the command with Node's FileSystem/Path, render typed errors as one
 * line + hint (or JSON with `--json`) and exit with the error's documented code.
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { isPlatformError } from "@effect/platform/Error"
import { SettingsError } from "@memdir/core/Errors"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"
import * as Cli from "./Cli.js"
import { DEFECT_EXIT_CODE, isMemdirError, renderError, toIoError, USAGE_EXIT_CODE } from "./Output.js"
import { version } from "./Version.js"

const wantsJson = process.argv.includes("--json")

const exitWith = (code: number) =>
  Effect.sync(() => {
    process.exitCode = code
  })

/** Every failure a command can end with, rendered; each kind has its documented exit code (README). */
const handleFailure = (error: unknown): Effect.Effect<void> => {
  // @effect/cli has already printed usage errors, with the help text
  if (ValidationError.isValidationError(error)) return exitWith(USAGE_EXIT_CODE)
  if (isMemdirError(error)) return Effect.flatMap(renderError(error, wantsJson), exitWith)
  // an environment variable memdir could not read (e.g. a malformed duration): a settings problem
  if (ConfigError.isConfigError(error)) {
    const asSettings = new SettingsError({ path: "environment", detail: String(error) })
    return Effect.flatMap(renderError(asSettings, wantsJson), exitWith)
  }
  // a file-system failure no command mapped itself: still one line + hint, with the I/O exit code
  if (isPlatformError(error)) {
    const where = error._tag === "SystemError" ? String(error.pathOrDescriptor ?? "") : ""
    return Effect.flatMap(renderError(toIoError(error.method, where)(error), wantsJson), exitWith)
  }
  return Effect.die(error)
}

const stderrLogger = Logger.prettyLogger({ stderr: true })
const logToStderr = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locallyWith(effect, FiberRef.currentLoggers, (loggers) =>
    HashSet.map(
      loggers,
      (logger) => logger === Logger.defaultLogger || logger === Logger.prettyLoggerDefault ? stderrLogger : logger
    ))

// only the command argv names is loaded and evaluated (see Cli.load)
const program = Effect.promise(() => Cli.load(process.argv)).pipe(
  Effect.flatMap((memdir) => Command.run(memdir, { name: "memdir", version })(process.argv)),
  Effect.catchAll(handleFailure),
  Effect.tapDefect(() => exitWith(DEFECT_EXIT_CODE)),
  Effect.provide(NodeContext.layer),
  // logs (a lock taken over, a degraded selector, …) go to stderr: stdout carries the output, JSON included
  logToStderr
)

NodeRuntime.runMain(program)
