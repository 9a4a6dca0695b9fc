/**
 * What every command shares: the `--cwd` / `--memory-dir` / `--json` options, the one layer of services the
 * commands run with (`cliLayer`, configured from the parsed command through `CommandFlags`), and resolving the
 * project's memory location.
 */
import { Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import { InvalidMemoryInputError, MemoryDisabledError } from "@memdir/core/Errors"
import * as GitAges from "@memdir/core/GitAges"
import * as Memdir from "@memdir/core/Memdir"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
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
export type CommandLayerOptions = Omit<Memdir.MemdirLayerOptions, "flagMemoryDir">

/**
 * What the parsed command says about the services it runs with: the `--memory-dir` flag (as given: a relative or
 * empty one is refused by the directory chain, as docs/configuration.md says) and the command's layer options.
 */
export class CommandFlags extends Context.Tag("@memdir/cli/CommandFlags")<CommandFlags, {
  readonly memoryDir: Option.Option<string>
  readonly layer: CommandLayerOptions
}>() {}

/**
 * The one composition of the services every command runs with: `Memdir.layer`, its trusted flag source and
 * options read from `CommandFlags`. Nothing else in the CLI builds or wires memdir's services.
 */
export const cliLayer: Layer.Layer<
  Memdir.MemdirServices,
  ConfigError.ConfigError,
  CommandFlags | FileSystem.FileSystem | Path.Path | CommandExecutor
> = Layer.unwrapEffect(
  Effect.map(CommandFlags, (flags) =>
    Memdir.layer({
      // A memory directory kept in git keeps its ages (commit times cached by HEAD; docs/file-format.md).
      gitAges: GitAges.layerLive,
      ...flags.layer,
      ...(Option.isSome(flags.memoryDir) ? { flagMemoryDir: flags.memoryDir.value } : {})
    }))
)

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
 * built once per run, inside the handler (a command that must never fail, such as a hook, can still catch a
 * failure to build them).
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

export const ensureMemoryDir = (memoryDir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(memoryDir, { recursive: true, mode: 0o700 })
    const index = path.join(memoryDir, INDEX_FILE)
    if (!(yield* fs.exists(index))) yield* fs.writeFileString(index, "", { mode: 0o600, flag: "wx" })
  })
