/**
 * What every command shares: the `--cwd` (`-C`) / `--memory-dir` / `--json` options, the services the commands run
 * with (configured from the parsed command through `CommandFlags`), and resolving the project's memory location.
 *
 * Two tiers of services, so a command evaluates only what it runs (docs/architecture.md#start-up): `locationHandler`
 * (here) gives a command the location services alone (settings, git root, memory paths: what `path` and `init`
 * use); `memdirHandler` (`Services.ts`, which only the other commands import) every service of `Memdir.layer`.
 */
import { errnoCodeOf, InvalidMemoryInputError, MemoryDisabledError, MemoryIoError } from "@memdir/core/Errors"
import * as Memdir from "@memdir/core/Memdir"
import { type MemoryLocation, MemoryPaths } from "@memdir/core/MemoryPaths"
import * as Flag from "effect/cli/Flag"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import { ProjectDirFlag } from "./GlobalFlags.js"

/** `-C DIR` / `--cwd DIR` after the command; before it, the global `ProjectDirFlag` (GlobalFlags.ts). */
export const cwdOption = Flag.Directory("cwd").pipe(
  Flag.withAlias("C"),
  Flag.withMetavar("DIR"),
  Flag.withDescription("The project whose memory to use: it must exist (default: the current directory)"),
  Flag.optional
)
export const memoryDirOption = Flag.String("memory-dir").pipe(
  Flag.withMetavar("DIR"),
  Flag.withDescription(
    "The memory directory itself, absolute or ~/…: a trusted override (MEMDIR_MEMORY_DIR still wins)"
  ),
  Flag.optional
)
/** A switch: absent is false (effect/cli's boolean flags are required unless they have a default). */
export const switchFlag = (name: string) => Flag.Boolean(name).pipe(Flag.withDefault(false))
export const jsonOption = switchFlag("json").pipe(Flag.withDescription("Machine-readable JSON output"))

export const common = { cwd: cwdOption, memoryDir: memoryDirOption }

/** Layer options a command may add to the shared ones (e.g. recall's `--selector`). */
export type CommandLayerOptions = Pick<Memdir.MemdirLayerOptions, "selector" | "model">

/**
 * What the parsed command says about the services it runs with: the `--memory-dir` flag (as given: a relative or
 * empty one is refused by the directory chain, as docs/configuration.md says) and the command's layer options.
 */
export class CommandFlags extends Context.Service<CommandFlags, {
  readonly memoryDir: Option.Option<string>
  readonly layer: CommandLayerOptions
}>()("@memdir/cli/CommandFlags") {}

/** The trusted `--memory-dir` flag, as `Memdir`'s layers take it. */
export const flagOptions = (flags: Context.Service.Shape<typeof CommandFlags>) =>
  Option.isSome(flags.memoryDir) ? { flagMemoryDir: flags.memoryDir.value } : {}

/** The location services alone (`Memdir.locationLayer`) for the parsed `--memory-dir`. */
export const cliLocationLayer: Layer.Layer<
  Memdir.LocationServices,
  Config.ConfigError,
  CommandFlags | FileSystem.FileSystem | Path.Path
> = Layer.unwrap(Effect.map(CommandFlags, (flags) => Memdir.locationLayer(flagOptions(flags))))

/**
 * The handler of a command that only needs to know where the memory lives: the location services alone
 * (`cliLocationLayer`), so the command never loads the scanner, the selector, YAML, team or model code.
 */
export const locationHandler = <A extends { readonly memoryDir: Option.Option<string> }, E, R>(
  handler: (args: A) => Effect.Effect<void, E, R>
) =>
(args: A) =>
  checkCwd(args).pipe(
    Effect.andThen(handler(args)),
    Effect.provide(cliLocationLayer),
    Effect.provideService(CommandFlags, { memoryDir: args.memoryDir, layer: {} })
  )

/** `--cwd` must name an existing directory: a typo must not silently make a new, empty memory. */
export const checkCwd = (args: object) =>
  "cwd" in args && Option.isOption(args.cwd) ?
    Effect.asVoid(projectDir(args.cwd as Option.Option<string>)) :
    Effect.void

/**
 * The directory memdir was started in; one removed since (a shell still in a deleted directory) is an input error
 * naming the fix, not a crash.
 */
const currentDir: Effect.Effect<string, InvalidMemoryInputError> = Effect.suspend(() => {
  try {
    return Effect.succeed(process.cwd())
  } catch (error) {
    // anything else is a bug: thrown, it is a defect
    if ((error as { code?: unknown }).code !== "ENOENT") throw error
    return Effect.fail(
      new InvalidMemoryInputError({
        field: "--cwd",
        value: ".",
        reason: "the current directory no longer exists: change to one that does, or give -C DIR"
      })
    )
  }
})

/**
 * The project directory: the command's `--cwd`, else `-C DIR` given before the command, else the current directory.
 * A directory given must exist.
 */
export const projectDir = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const fs = yield* FileSystem.FileSystem
    const before = Option.flatten(yield* Effect.serviceOption(ProjectDirFlag))
    const given = Option.orElse(cwd, () => before)
    if (Option.isNone(given)) return path.resolve(yield* currentDir)
    const dir = path.resolve(given.value)
    const info = yield* fs.stat(dir).pipe(Effect.option)
    if (Option.isNone(info) || info.value.type !== "Directory") {
      return yield* new InvalidMemoryInputError({
        field: "--cwd",
        value: given.value,
        reason: Option.isNone(info) ? "no such directory" : "not a directory"
      })
    }
    return dir
  })

/**
 * The project's memory location; its directory, when something is already there, must be a directory: a file there
 * (or above it) is named once, as the cause with its fix, instead of failing later in every read and write.
 */
export const locate = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const paths = yield* MemoryPaths
    const fs = yield* FileSystem.FileSystem
    const location = yield* paths.locate(yield* projectDir(cwd))
    const notADirectory = (detail: string) =>
      new MemoryIoError({ op: "use memory directory", path: location.memoryDir, detail, code: "ENOTDIR" })
    const info = yield* fs.stat(location.memoryDir).pipe(
      Effect.map(Option.some),
      Effect.catchIf((error) => error.reason._tag === "NotFound", () => Effect.succeedNone),
      Effect.mapError((error) =>
        errnoCodeOf(error) === "ENOTDIR" ?
          notADirectory(error.message) :
          new MemoryIoError({
            op: "use memory directory",
            path: location.memoryDir,
            detail: error.message,
            code: errnoCodeOf(error)
          })
      )
    )
    if (Option.isSome(info) && info.value.type !== "Directory") {
      return yield* notADirectory(`it is a ${info.value.type.toLowerCase()}`)
    }
    return location
  })

export const requireEnabled = (location: MemoryLocation) =>
  location.enabled ? Effect.void : Effect.fail(new MemoryDisabledError({ source: location.enabledBy }))
