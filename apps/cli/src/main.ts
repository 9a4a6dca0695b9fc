/**
 * The `memdir` process: parse argv, run the command with Node's services, render typed errors as one line + hint
 * (or JSON with `--json`) and exit with the error's documented code.
 *
 * The platform is `NodeServices.layer` (file system, path, child processes, stdio, terminal): it has no worker
 * manager, so a start never evaluates worker modules (docs/architecture.md#start-up).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { type MemdirError, SettingsError } from "@memdir/core/Errors"
import * as Cause from "effect/Cause"
import * as CliConfig from "effect/cli/CliConfig"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import type * as CommandSpec from "effect/cli/CommandSpec"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { isPlatformError } from "effect/PlatformError"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as Cli from "./Cli.js"
import * as GlobalFlags from "./GlobalFlags.js"
import * as Help from "./Help.js"
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

const wantsJson = process.argv.includes("--json")

const exitWith = (code: number) =>
  Effect.sync(() => {
    process.exitCode = code
  })

/** The description of the (sub)command at `commandPath` (`["memdir", "team", "sync"]`), or of memdir itself. */
const specOf = (root: Cli.Subcommand, commandPath: ReadonlyArray<string>): CommandSpec.Spec =>
  Option.getOrElse(Cli.specAt(root, commandPath.slice(1)), () => Option.getOrThrow(Cli.specAt(root, [])))

/**
 * The errors worth reporting: past an unknown command, what follows is not that command's (its flags would only be
 * reported as unknown too); a flag left without its value because the value started with `-` (`--body "- a
 * bullet"`) is reported once, not with each character of the value as an unknown flag.
 */
const withoutEchoes = (errors: ReadonlyArray<CliError.CliError>): ReadonlyArray<CliError.CliError> => {
  if (errors.some((e) => e._tag === "UnknownSubcommand")) return errors.filter((e) => e._tag === "UnknownSubcommand")
  const valueMissing = errors.some((e) => e._tag === "InvalidValue" && e.kind === "flag" && e.value === "")
  return valueMissing ? errors.filter((e) => !(e._tag === "UnrecognizedOption" && /^-.?$/.test(e.option))) : errors
}

/**
 * Each usage error in memdir's words; an unknown command is described by the command it was looked up in (which
 * knows the names it may have meant), any other by the command that ran.
 */
const usageProblems = (
  root: Cli.Subcommand,
  commandPath: ReadonlyArray<string>,
  errors: ReadonlyArray<CliError.CliError>
): ReadonlyArray<Help.UsageProblem> =>
  withoutEchoes(errors).map((error) =>
    Help.describeUsageError(
      specOf(root, error._tag === "UnknownSubcommand" && error.parent !== undefined ? error.parent : commandPath),
      error
    )
  )

/** Usage errors on stderr: each with its hint, then the command's usage (docs/cli.md, "Usage errors"). */
const presentUsageErrors = (
  root: Cli.Subcommand,
  commandPath: ReadonlyArray<string>,
  errors: ReadonlyArray<CliError.CliError>
) =>
  Console.error(
    Help.renderUsageErrors(
      specOf(root, commandPath),
      usageProblems(root, commandPath, errors),
      Help.styleFor(process.stderr, process.env)
    )
  )

/**
 * How effect/cli's own output reaches the user: help on stdout, drawn by `Help.ts` (wrapped, escape codes only on
 * a terminal); the version as the bare number; a usage error on stderr with the command's usage (stdout carries a
 * command's output, JSON included).
 */
const presenter = (root: Cli.Subcommand): CliOutput.Presenter => ({
  present: (event) => {
    switch (event._tag) {
      case "Version":
        return Console.log(event.version)
      case "InvalidInvocation":
        return presentUsageErrors(root, event.commandPath, event.errors)
      case "Help":
        return Console.log(Help.renderHelp(specOf(root, event.commandPath), Help.styleFor(process.stdout, process.env)))
    }
  }
})

/**
 * `-v`, `-V` and `--version` print the version and nothing else: given with anything more (`memdir --version
 * extra`, `memdir ls -v`), a usage error instead of a run that ignores the rest.
 */
const checkVersionAlone = (
  root: Cli.Subcommand,
  args: ReadonlyArray<string>
): Effect.Effect<void, CliError.CliError> => {
  const options = args.slice(0, args.includes("--") ? args.indexOf("--") : args.length)
  const spelling = options.find((arg) => Cli.versionSpellings.includes(arg))
  if (spelling === undefined || args.length === 1) return Effect.void
  const errors = [Help.usageError(`${spelling} prints the version alone: run \`memdir ${spelling}\` with nothing else`)]
  return Effect.andThen(
    presentUsageErrors(root, ["memdir"], errors),
    Effect.fail(new CliError.ShowHelp({ commandPath: ["memdir"], errors }))
  )
}

/**
 * Every failure a command can end with, rendered; each kind has its documented exit code (docs/cli.md).
 * `command` is the (sub)command that ran, for hints that point at its help.
 */
const handleFailure = (root: Cli.Subcommand, path: ReadonlyArray<string>) => (error: unknown): Effect.Effect<void> => {
  const command = path.length === 0 ? undefined : path.join(" ")
  // a usage error: effect/cli has presented it on stderr (`presenter`); `--json` gets the document too
  if (CliError.isCliError(error)) {
    const commandPath = error._tag === "ShowHelp" ? error.commandPath : ["memdir", ...path]
    const errors: ReadonlyArray<CliError.CliError> = error._tag === "ShowHelp" ? error.errors : [error]
    // a command that needs a subcommand, run without one (`memdir`, `memdir team`): its help was shown
    if (errors.length === 0) return Effect.void
    // a usage error a handler raised (effect/cli presents only those of its parser and the validations)
    const present = error._tag === "ShowHelp" ? Effect.void : presentUsageErrors(root, commandPath, errors)
    if (!wantsJson) return Effect.andThen(present, exitWith(USAGE_EXIT_CODE))
    const problems = usageProblems(root, commandPath, errors)
    return present.pipe(
      Effect.andThen(renderUsageError({
        kind: errors[0]!._tag,
        message: problems.map((p) => p.message).join("\n"),
        hint: problems.find((p) => p.hint !== undefined)?.hint,
        usage: Help.usageOf(specOf(root, commandPath))
      })),
      Effect.flatMap(exitWith)
    )
  }
  const render = (typed: MemdirError) => Effect.flatMap(renderError(typed, wantsJson, command), exitWith)
  if (isMemdirError(error)) return render(error)
  // an environment variable memdir could not read (e.g. a malformed duration): a settings problem
  if (error instanceof Config.ConfigError) {
    return render(new SettingsError({ path: "environment", detail: String(error) }))
  }
  // a file-system failure no command mapped itself: still one line + hint, with the I/O exit code
  if (isPlatformError(error)) {
    const reason = error.reason
    const where = reason._tag === "BadArgument" ? "" : String(reason.pathOrDescriptor ?? "")
    return render(toIoError(reason.method, where)(error))
  }
  return Effect.die(error)
}

/**
 * The first SIGINT or SIGTERM this process received. `NodeRuntime.runMain` interrupts the command on either
 * (running its finalizers: locks released, temp files removed) but does not say which; this records it. A second
 * signal ends the process at once (exit 130 / 143), so a second Ctrl-C still kills a process whose cleanup hangs
 * (runMain keeps its own listeners until the command ended, which would otherwise swallow it).
 */
let stopSignal: StopSignal | undefined
const stoppedBy = (signal: StopSignal) => {
  if (stopSignal !== undefined) process.exit(signalExitCodes[signal])
  stopSignal = signal
}
process.on("SIGINT", () => stoppedBy("SIGINT"))
process.on("SIGTERM", () => stoppedBy("SIGTERM"))

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
        Effect.andThen(checkVersionAlone(memdir, process.argv.slice(2))),
        // the arguments after `node memdir.js`, from the Stdio service
        Effect.andThen(Command.run(memdir, { version })),
        Effect.catch(handleFailure(memdir, path)),
        // memdir's global flags: no `--wizard` (GlobalFlags.ts)
        Effect.provideService(CliConfig.CliConfig, CliConfig.make({ builtIns: GlobalFlags.builtIns })),
        Effect.provideService(CliOutput.Presenter, presenter(memdir))
      )
    }),
    Effect.onInterrupt(() => reportInterruption(command, note)),
    Effect.provideService(InterruptNote, note)
  )
}).pipe(
  Effect.tapDefect(() => exitWith(DEFECT_EXIT_CODE)),
  // a defect is logged here, on stderr with the other logs (runMain's own report, disabled below, went to stdout,
  // into the output a script reads)
  Effect.tapCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError(cause)),
  Effect.provide(NodeServices.layer),
  // logs (a lock taken over, a degraded selector, …) go to stderr: stdout carries the output, JSON included
  Effect.provideService(Logger.LogToStderr, true),
  // the environment with its empty values (Effect 4's default provider drops them): a variable set to "" is
  // set (`MEMDIR_DISABLE_AUTO_MEMORY=` forces memory on, docs/configuration.md); the provider of
  // `Settings.envProvider()`, built here so a start does not load the settings module
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ preserveEmptyStrings: true }))
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  // an interrupted command exits with the code its report set (130 / 143, 0 for `hook`), not the 130 the
  // default teardown gives every interruption
  teardown: (exit, onExit) =>
    Runtime.defaultTeardown(
      exit,
      (code) =>
        onExit(
          stopSignal !== undefined && Exit.hasInterrupts(exit)
            ? Number(process.exitCode ?? signalExitCodes[stopSignal])
            : code
        )
    )
})
