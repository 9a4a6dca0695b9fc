/**
 * What every command shares: the `--cwd` / `--memory-dir` / `--json` options, the live layers built per
 * invocation, and resolving the project's memory location.
 */
import { Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { MemoryDisabledError } from "@memdir/core/Errors"
import * as GitAges from "@memdir/core/GitAges"
import * as Memdir from "@memdir/core/Memdir"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
import { type MemoryLocation, MemoryPaths } from "@memdir/core/MemoryPaths"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodePath from "node:path"

export const cwdOption = Options.directory("cwd").pipe(
  Options.withDescription("Project directory whose memory to use (default: the current directory)"),
  Options.optional
)
export const memoryDirOption = Options.text("memory-dir").pipe(
  Options.withDescription("Memory directory to use (a trusted source; the MEMDIR_MEMORY_DIR env var still wins)"),
  Options.optional
)
export const jsonOption = Options.boolean("json").pipe(Options.withDescription("Machine-readable JSON output"))

export const common = { cwd: cwdOption, memoryDir: memoryDirOption }

/** Layer options a command may add to the shared ones (e.g. recall's `--selector`). */
export type CommandLayerOptions = Omit<Memdir.MemdirLayerOptions, "flagMemoryDir">

/** Provide the live memdir layers, with `--memory-dir` as the trusted flag source of the directory chain. */
export const withMemdir = (memoryDir: Option.Option<string>, options: CommandLayerOptions = {}) =>
  Effect.provide(
    Memdir.layer({
      // A memory directory kept in git keeps its ages (commit times cached by HEAD; docs/file-format.md).
      gitAges: GitAges.layerLive,
      ...options,
      ...(Option.isSome(memoryDir) ? { flagMemoryDir: absoluteFlagPath(memoryDir.value) } : {})
    })
  )

/** `--memory-dir ./mem` means the directory relative to where memdir was started; `~/…` is expanded later. */
const absoluteFlagPath = (value: string): string =>
  value.startsWith("~") || value.includes("\0") ? value : NodePath.resolve(value)

/** Every handler runs with the live layers built for its own `--memory-dir`. */
export const memdirHandler = <A extends { readonly memoryDir: Option.Option<string> }, E, R>(
  handler: (args: A) => Effect.Effect<void, E, R>,
  layerOptions?: (args: A) => CommandLayerOptions
) =>
(args: A) => handler(args).pipe(withMemdir(args.memoryDir, layerOptions?.(args)))

export const projectDir = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    return path.resolve(Option.getOrElse(cwd, () => process.cwd()))
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
