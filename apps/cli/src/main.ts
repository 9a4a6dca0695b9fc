/**
 * The `memdir` process: parse argv, run the command with Node's FileSystem/Path, render typed errors as one
 * line + hint (or JSON with `--json`) and exit with the error's documented code.
 *
 * The platform is `NodeContext.layer` without its worker manager (no command starts workers): so a start never
 * evaluates `@effect/platform`'s Worker and WorkerError modules (Schema classes built at module evaluation), and
 * builds its four services one after another (docs/architecture.md#start-up).
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { isPlatformError } from "@effect/platform/Error"
import { type MemdirError, SettingsError } from "@memdir/core/Errors"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Cli from "./Cli.js"
import { DEFECT_EXIT_CODE, isMemdirError, renderError, renderUsageError, toIoError, USAGE_EXIT_CODE } from "./Output.js"
import { version } from "./Version.js"

/**
 * What a command runs on (`Cli.Platform`): Node's file system, path, command executor (git) and terminal (the
 * wizard's prompts), each built once, in sequence.
 */
const platformLayer: Layer.Layer<Cli.Platform> = NodeTerminal.layer.pipe(
  Layer.provideMerge(NodePath.layer),
  Layer.provideMerge(NodeCommandExecutor.layer),
  Layer.provideMerge(NodeFileSystem.layer)
)

const wantsJson = process.argv.includes("--json")

const exitWith = (code: number) =>
  Effect.sync(() => {
    process.exitCode = code
  })

/**
 * Every failure a command can end with, rendered; each kind has its documented exit code (docs/cli.md).
 * `command` is the (sub)command that ran, for hints that point at its help.
 */
const handleFailure = (command: string | undefined) => (error: unknown): Effect.Effect<void> => {
  // @effect/cli has already printed usage errors with the help text on stderr; `--json` gets the document too
  if (ValidationError.isValidationError(error)) {
    if (!wantsJson) return exitWith(USAGE_EXIT_CODE)
    return Effect.flatMap(renderUsageError(error._tag, HelpDoc.toAnsiText(error.error)), exitWith)
  }
  const render = (typed: MemdirError) => Effect.flatMap(renderError(typed, wantsJson, command), exitWith)
  if (isMemdirError(error)) return render(error)
  // an environment variable memdir could not read (e.g. a malformed duration): a settings problem
  if (ConfigError.isConfigError(error)) return render(new SettingsError({ path: "environment", detail: String(error) }))
  // a file-system failure no command mapped itself: still one line + hint, with the I/O exit code
  if (isPlatformError(error)) {
    const where = error._tag === "SystemError" ? String(error.pathOrDescriptor ?? "") : ""
    return render(toIoError(error.method, where)(error))
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
  Effect.flatMap((memdir) => {
    const path = Cli.commandPathOf(memdir, process.argv)
    return Command.run(memdir, { name: "memdir", version })(process.argv).pipe(
      Effect.catchAll(handleFailure(path.length === 0 ? undefined : path.join(" ")))
    )
  }),
  Effect.tapDefect(() => exitWith(DEFECT_EXIT_CODE)),
  Effect.provide(platformLayer),
  // logs (a lock taken over, a degraded selector, …) go to stderr: stdout carries the output, JSON included
  logToStderr
)

NodeRuntime.runMain(program)
