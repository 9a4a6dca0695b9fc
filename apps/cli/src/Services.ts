/**
 * The services of every command that does more than locate the memory: `cliLayer`, the one composition of them
 * (`Memdir.layer`), and `memdirHandler`, which runs a command's handler with it. Only those commands import this
 * module, so `path` and `init` (`locationHandler` in `Common.ts`) never load it, nor `GitAges`
 * (docs/architecture.md#start-up).
 */
import * as GitAges from "@memdir/core/GitAges"
import * as Memdir from "@memdir/core/Memdir"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Path from "effect/Path"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import { checkCwd, CommandFlags, type CommandLayerOptions, flagOptions } from "./Common.js"

/**
 * The composition of every service a command runs with: `Memdir.layer`, its trusted flag source and options read
 * from `CommandFlags`, and commit times for a memory directory kept in git. Nothing else in the CLI builds or
 * wires memdir's services.
 */
export const cliLayer: Layer.Layer<
  Memdir.MemdirServices,
  Config.ConfigError,
  CommandFlags | FileSystem.FileSystem | Path.Path | ChildProcessSpawner
> = Layer.unwrap(
  Effect.map(CommandFlags, (flags) =>
    // A memory directory kept in git keeps its ages (commit times cached by HEAD; docs/file-format.md).
    Memdir.layer({ gitAges: GitAges.layerLive, ...flags.layer, ...flagOptions(flags) }))
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
 * built once per run, inside the handler: the layer depends on flags effect/cli parses only when it runs the
 * command (and a command that must never fail, such as a hook, can still catch a failure to build them).
 */
export const memdirHandler = <A extends { readonly memoryDir: Option.Option<string> }, E, R>(
  handler: (args: A) => Effect.Effect<void, E, R>,
  layerOptions?: (args: A) => CommandLayerOptions
) =>
(args: A) =>
  checkCwd(args).pipe(
    Effect.andThen(handler(args)),
    withMemdir(args.memoryDir, layerOptions?.(args))
  )
