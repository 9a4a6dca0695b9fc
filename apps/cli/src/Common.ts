/**
 * What every command shares: the `--cwd` / `--memory-dir` / `--json` options, the services the commands run with
 * (configured from the parsed command through `CommandFlags`), and resolving the project's memory location.
 *
 * Two tiers of services, so a command evaluates only what it runs (docs/architecture.md#start-up): `locationHandler`
 * gives a command the location services alone (settings, git root, memory paths: what `path` and `init` use), and
 * `memdirHandler` every service of `Memdir.layer`, whose modules are loaded when it is built.
 */
import { Options } from "@effect/cli"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { InvalidMemoryInputError, MemoryDisabledError } from "@memdir/core/Errors"
import * as Memdir from "@memdir/core/Memdir"
import { type MemoryLocation, MemoryPaths } from "@memdir/core/MemoryPaths"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

export const cwdOption = Options.directory("cwd").pipe(
  Options.withDescription("Project directory whose memory to use (default: the current directory)"),
  Options.optional
)
export const memoryDirOption = Options.text("memory-dir").pipe(
  Options.withDescription(
    "Memory directory to use: absolute or ~/… (a trusted source; the MEMDIR_MEMORY_DIR env var still wins)"
  ),
  Options.optional
)
export const jsonOption = Options.boolean("json").pipe(Options.withDescription("Machine-readable JSON output"))

export const common = { cwd: cwdOption, memoryDir: memoryDirOption }

/** Layer options a command may add to the shared ones (e.g. recall's `--selector`). */
export type CommandLayerOptions = Pick<Memdir.MemdirLayerOptions, "selector" | "model">

/**
 * What the parsed command says about the services it runs with: the `--memory-dir` flag (as given: a relative or
 * empty one is refused by the directory chain, as docs/configuration.md says) and the command's layer options.
 */
export class CommandFlags extends Context.Tag("@memdir/cli/CommandFlags")<CommandFlags, {
  readonly memoryDir: Option.Option<string>
  readonly layer: CommandLayerOptions
}>() {}

/** The trusted `--memory-dir` flag, as `Memdir`'s layers take it. */
const flagOptions = (flags: Context.Tag.Service<CommandFlags>) =>
  Option.isSome(flags.memoryDir) ? { flagMemoryDir: flags.memoryDir.value } : {}

/**
 * The composition of every service a command runs with: `Memdir.layer`, its trusted flag source and options read
 * from `CommandFlags`, and commit times for a memory directory kept in git. Nothing else in the CLI builds or
 * wires memdir's services.
 */
export const cliLayer: Layer.Layer<
  Memdir.MemdirServices,
  ConfigError.ConfigError,
  CommandFlags | FileSystem.FileSystem | Path.Path | CommandExecutor
> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const flags = yield* CommandFlags
    // A memory directory kept in git keeps its ages (commit times cached by HEAD; docs/file-format.md).
    const GitAges = yield* Effect.promise(() => import("@memdir/core/GitAges"))
    return Memdir.layer({ gitAges: GitAges.layerLive, ...flags.layer, ...flagOptions(flags) })
  })
)

/** The location services alone (`Memdir.locationLayer`) for the parsed `--memory-dir`. */
export const cliLocationLayer: Layer.Layer<
  Memdir.LocationServices,
  ConfigError.ConfigError,
  CommandFlags | FileSystem.FileSystem | Path.Path
> = Layer.unwrapEffect(Effect.map(CommandFlags, (flags) => Memdir.locationLayer(flagOptions(flags))))

/** Provide the CLI's services for the given flags (what `memdirHandler` does for a parsed command). */
export const withMemdir =
  (memoryDir: Option.Option<string>, options: CommandLayerOptions = {}) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(
      Effect.provide(cliLayer),
      Effect.provideService(CommandFlags, { memoryDir, layer: options })
    )

/**
 * A command's handler, run with the CLI's services (`cliLayer`) for its parsed `--memory-dir` and layer options,
 * after checking that `--cwd` names an existing directory. Each process runs one command, so the services are
 * built once per run, inside the handler: the layer depends on flags @effect/cli parses only when it runs the
 * command (and a command that must never fail, such as a hook, can still catch a failure to build them).
 */
export const memdirHandler = <A extends { readonly memoryDir: Option.Option<string> }, E, R>(
  handler: (args: A) => Effect.Effect<void, E, R>,
  layerOptions?: (args: A) => CommandLayerOptions
) =>
(args: A) =>
  checkCwd(args).pipe(
    Effect.zipRight(handler(args)),
    withMemdir(args.memoryDir, layerOptions?.(args))
  )

/**
 * `memdirHandler` for a command that only needs to know where the memory lives: the location services alone
 * (`cliLocationLayer`), so the command never loads the scanner, the selector, YAML, team or model code.
 */
export const locationHandler = <A extends { readonly memoryDir: Option.Option<string> }, E, R>(
  handler: (args: A) => Effect.Effect<void, E, R>
) =>
(args: A) =>
  checkCwd(args).pipe(
    Effect.zipRight(handler(args)),
    Effect.provide(cliLocationLayer),
    Effect.provideService(CommandFlags, { memoryDir: args.memoryDir, layer: {} })
  )

/** `--cwd` must name an existing directory: a typo must not silently make a new, empty memory. */
const checkCwd = (args: object) =>
  "cwd" in args && Option.isOption(args.cwd) && Option.isSome(args.cwd) ?
    Effect.asVoid(projectDir(args.cwd as Option.Option<string>)) :
    Effect.void

/** The project directory: `--cwd` (which must be an existing directory) or the current directory. */
export const projectDir = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const fs = yield* FileSystem.FileSystem
    const dir = path.resolve(Option.getOrElse(cwd, () => process.cwd()))
    if (Option.isNone(cwd)) return dir
    const info = yield* fs.stat(dir).pipe(Effect.option)
    if (Option.isNone(info) || info.value.type !== "Directory") {
      return yield* new InvalidMemoryInputError({
        field: "--cwd",
        value: cwd.value,
        reason: Option.isNone(info) ? "no such directory" : "not a directory"
      })
    }
    return dir
  })

export const locate = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const paths = yield* MemoryPaths
    return yield* paths.locate(yield* projectDir(cwd))
  })

export const requireEnabled = (location: MemoryLocation) =>
  location.enabled ? Effect.void : Effect.fail(new MemoryDisabledError({ source: location.enabledBy }))
