/**
 * The `memdir` process: parse argv, run the command with Node's FileSystem/Path, render typed errors as one
 * line + hint (or JSON with `--json`) and exit with the error's documented code.
 *
 * The platform is `NodeServices.layer` without its worker manager (no command starts workers): so a start never
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
import { isPlatformError } from "effect/PlatformError"
import { defaultTeardown } from "@effect/platform/Runtime"
import { type MemdirError, SettingsError } from "@memdir/core/Errors"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Cli from "./Cli.js"
import {
  DEFECT_EXIT_CODE,
  Interrupted,
  InterruptNote,
  isMemdirError,
  renderError,
  renderInterrupted,
  renderUsageError,
  signalExitCodes,
  type StopSignal,
  toIoError,
  USAGE_EXIT_CODE
} from "./Output.js"
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

/**
 * The first SIGINT or SIGTERM this process received. `NodeRuntime.runMain` interrupts the command on either
 * (running its finalizers: locks released, temp files removed) but does not say which; this records it. Both
 * listeners go at the first signal, as runMain's do, so a second Ctrl-C kills a process whose cleanup hangs.
 */
let stopSignal: StopSignal | undefined
const signalListeners: Record<StopSignal, () => void> = {
  SIGINT: () => stoppedBy("SIGINT"),
  SIGTERM: () => stoppedBy("SIGTERM")
}
const stoppedBy = (signal: StopSignal) => {
  stopSignal ??= signal
  for (const [name, listener] of Object.entries(signalListeners)) process.removeListener(name, listener)
}
for (const [name, listener] of Object.entries(signalListeners)) process.on(name, listener)

/**
 * A command a signal stopped: one line saying what was kept (or the JSON document) and exit 130 / 143. `hook`
 * keeps its contract of never failing the agent (exit 0, docs/hooks.md); it still says what happened on stderr.
 */
const reportInterruption = (command: Ref.Ref<string>, note: Ref.Ref<Option.Option<string>>) =>
  Effect.gen(function*() {
    const signal = stopSignal
    if (signal === undefined) return
    const name = yield* Ref.get(command)
    const kept = Option.getOrElse(
      yield* Ref.get(note),
      () =>
        name === "" ?
          "memdir stopped before a command started; nothing was changed" :
          `memdir ${name} stopped before it finished; the locks it held were released`
    )
    const code = name === "hook" ? 0 : signalExitCodes[signal]
    yield* Effect.flatMap(
      renderInterrupted(new Interrupted({ signal, command: name, kept }), wantsJson && name !== "hook", code),
      exitWith
    )
  })

// only the command argv names is loaded and evaluated (see Cli.load)
const program = Effect.gen(function*() {
  const command = yield* Ref.make("")
  const note = yield* Ref.make(Option.none<string>())
  return yield* Effect.promise(() => Cli.load(process.argv)).pipe(
    Effect.flatMap((memdir) => {
      const path = Cli.commandPathOf(memdir, process.argv)
      return Ref.set(command, path.join(" ")).pipe(
        Effect.andThen(Command.run(memdir, { name: "memdir", version })(process.argv)),
        Effect.catch(handleFailure(path.length === 0 ? undefined : path.join(" ")))
      )
    }),
    Effect.onInterrupt(() => reportInterruption(command, note)),
    Effect.provideService(InterruptNote, note)
  )
}).pipe(
  Effect.tapDefect(() => exitWith(DEFECT_EXIT_CODE)),
  Effect.provide(platformLayer),
  // logs (a lock taken over, a degraded selector, …) go to stderr: stdout carries the output, JSON included
  logToStderr
)

NodeRuntime.runMain(program, {
  // an interrupted command exits with the code its report set (130 / 143), not runMain's 0 for an interruption
  teardown: (exit, onExit) =>
    defaultTeardown(
      exit,
      (code) => onExit(stopSignal !== undefined && code === 0 ? Number(process.exitCode ?? 0) : code)
    )
})
