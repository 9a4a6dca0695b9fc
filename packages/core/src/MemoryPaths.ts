/**
 * MemoryPaths: where the memory of a project lives and whether auto memory is on (docs/configuration.md).
 *
 * Directory, first that applies: `MEMDIR_MEMORY_DIR`; `autoMemoryDirectory` from the trusted sources policy,
 * `--memory-dir` flag, local, user (never project: a committed file must not point memory, and the writes
 * runtimes auto-allow there, at `~/.ssh`); else `<base>/projects/<sanitized root>/memory/`. An invalid override
 * is an error, not a silent fall-through: the user asked for that directory.
 *
 * Enabled, first that speaks: `MEMDIR_DISABLE_AUTO_MEMORY` (truthy → off, defined-falsy → forced on);
 * `MEMDIR_SIMPLE` → off; `MEMDIR_REMOTE` without `MEMDIR_REMOTE_MEMORY_DIR` → off; `autoMemoryEnabled` from any
 * source, project included (a project may opt out); else on.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as NodePath from "node:path"
import { InvalidMemoryDirError, SettingsError } from "./Errors.js"
import { GitRoot, type GitRootInfo } from "./GitRoot.js"
import { isInside } from "./internal/containment/inside.js"
import { type LayoutSetting, layoutSettings } from "./internal/location/layoutSetting.js"
import { type AutomaticModelCalls, resolveAutomaticModelCalls } from "./internal/location/modelCallsSwitch.js"
import {
  defaultMemoryDirWith,
  isEnvDefinedFalsy,
  isEnvTruthy,
  isMemoryPathWith,
  type PathOps,
  validateMemoryDirOverrideWith
} from "./internal/location/paths.js"
import { resolveTeamSwitch, type TeamSwitch } from "./internal/location/teamSwitch.js"
import { MemoryFs } from "./MemoryFs.js"
import { FLAG_SOURCE_PATH, type LoadedSettings, type MemdirEnv, type RefusedSettings, Settings } from "./Settings.js"

export {
  AUTOMATIC_MODEL_CALLS_ENV,
  AUTOMATIC_MODEL_CALLS_KEY,
  type AutomaticModelCalls,
  resolveAutomaticModelCalls,
  resolveModelCallsEnabled
} from "./internal/location/modelCallsSwitch.js"
export {
  type InvalidMemoryDirReason,
  isEnvDefinedFalsy,
  isEnvTruthy,
  MAX_SANITIZED_LENGTH,
  SANITIZED_HASH_LENGTH,
  sanitizeProjectName
} from "./internal/location/paths.js"

export interface MemoryLocation {
  readonly root: GitRootInfo
  /** Absolute, NFC-normalised, ends with the path separator. */
  readonly memoryDir: string
  readonly source: "env" | "policy" | "flag" | "local" | "user" | "default"
  /** The file (or `MEMDIR_MEMORY_DIR`, `--memory-dir`) that chose `memoryDir`; absent for the default. */
  readonly sourcePath?: string | undefined
  readonly enabled: boolean
  /** Which link of the enable chain decided (e.g. "env MEMDIR_DISABLE_AUTO_MEMORY", "default"). */
  readonly enabledBy: string
  /** The team switch and remote, resolved from the same settings (absent on a location built by hand). */
  readonly team?: TeamSwitch | undefined
  /** Team memory is on (auto memory on and the team switch on): `team/…` keys are team memories. */
  readonly teamEnabled?: boolean | undefined
  /** Settings files that exist but were not trusted, so no key of theirs applied (present only when any). */
  readonly refusedSettings?: ReadonlyArray<RefusedSettings> | undefined
  /** The `memoryLayout` setting, when a settings file sets it (docs/configuration.md#memory-layout). */
  readonly memoryLayout?: LayoutSetting | undefined
  /**
   * Whether hooks and the MCP server may call a model (`automaticModelCalls`, docs/configuration.md): absent on a
   * location built by hand, which counts as off.
   */
  readonly automaticModelCalls?: AutomaticModelCalls | undefined
}

export class MemoryPaths extends Context.Service<MemoryPaths, {
  /** The memory directory of `cwd` and its enable chain. */
  readonly resolve: (cwd: string) => Effect.Effect<MemoryLocation, InvalidMemoryDirError | SettingsError>
  /** `resolve` plus the team switch and remote (`team`, `teamEnabled`), from the same settings (read once). */
  readonly locate: (cwd: string) => Effect.Effect<MemoryLocation, InvalidMemoryDirError | SettingsError>
}>()("@memdir/core/MemoryPaths") {}

/** `<base>/projects/<sanitizeProjectName(root)>/memory/` (base: `MEMDIR_HOME`, e.g. `~/.memdir` or `~/.claude`). */
export const defaultMemoryDir = (base: string, root: string): string => defaultMemoryDirWith(NodePath, base, root)

/**
 * Validates a memory-directory override and returns the directory it names (absolute, resolved,
 * NFC-normalised, trailing separator); `source` names where the value came from, for the error.
 * Refusal reasons: see `InvalidMemoryDirReason`.
 */
export const validateMemoryDirOverride = (
  value: string,
  source: string,
  userHome: string
): Result.Result<string, InvalidMemoryDirError> => validateMemoryDirOverrideWith(NodePath, value, source, userHome)

/**
 * Whether `candidate` is inside `memoryDir` or is the directory itself, after resolving and NFC-normalising
 * both; the trailing-separator comparison keeps `memory-evil/x` out of `memory/`. Runtimes use it to
 * auto-allow the agent's writes into memory.
 */
export const isMemoryPath = (memoryDir: string, candidate: string): boolean =>
  isMemoryPathWith(NodePath, memoryDir, candidate)

export const ENV_DISABLE = "MEMDIR_DISABLE_AUTO_MEMORY"
export const ENV_MEMORY_DIR = "MEMDIR_MEMORY_DIR"

/** The enable chain (pure): which link speaks first, and what it says. */
export const resolveEnabled = (
  env: MemdirEnv,
  sources: LoadedSettings["sources"]
): { readonly enabled: boolean; readonly enabledBy: string } => {
  if (isEnvTruthy(env.disableAutoMemory)) return { enabled: false, enabledBy: `env ${ENV_DISABLE}` }
  if (isEnvDefinedFalsy(env.disableAutoMemory)) return { enabled: true, enabledBy: `env ${ENV_DISABLE}` }
  if (env.simpleMode) return { enabled: false, enabledBy: "env MEMDIR_SIMPLE" }
  if (env.remoteWithoutStorage) {
    return { enabled: false, enabledBy: "env MEMDIR_REMOTE without MEMDIR_REMOTE_MEMORY_DIR" }
  }
  for (const { path, settings, source } of sources) {
    if (settings.autoMemoryEnabled !== undefined) {
      return { enabled: settings.autoMemoryEnabled, enabledBy: `${source} settings ${path}` }
    }
  }
  return { enabled: true, enabledBy: "default" }
}

/**
 * The `memoryLayout` setting (pure): the first settings file that sets it, any source (a layout is a preference,
 * not a path: a project may state its own). A value other than `auto`, `nested`, `flat` is a `SettingsError`.
 */
export const resolveMemoryLayout = (
  sources: LoadedSettings["sources"]
): Result.Result<LayoutSetting | undefined, SettingsError> => {
  for (const { path, settings } of sources) {
    const value = settings.memoryLayout
    if (value === undefined) continue
    return layoutSettings.includes(value as LayoutSetting) ?
      Result.succeed(value as LayoutSetting) :
      Result.fail(
        new SettingsError({
          path,
          key: "memoryLayout",
          detail: `expected "auto", "nested" or "flat", found ${JSON.stringify(value)}`
        })
      )
  }
  return Result.succeed(undefined)
}

/** The directory chain (pure over `path`): env, then trusted settings in order, then the default. */
export const resolveMemoryDirWith = (
  path: PathOps,
  env: MemdirEnv,
  root: string,
  sources: LoadedSettings["sources"]
): Result.Result<Pick<MemoryLocation, "memoryDir" | "source" | "sourcePath">, InvalidMemoryDirError> => {
  const fromOverride = (value: string, source: MemoryLocation["source"], sourcePath: string, label: string) =>
    validateMemoryDirOverrideWith(path, value, label, env.userHome).pipe(
      Result.map((memoryDir) => ({ memoryDir, source, sourcePath }))
    )
  if (env.memoryDirOverride !== undefined) {
    return fromOverride(env.memoryDirOverride, "env", ENV_MEMORY_DIR, `env ${ENV_MEMORY_DIR}`)
  }
  const fromSettings = (source: "policy" | "local" | "user") =>
    sources.filter((entry) => entry.source === source).map((entry) => ({
      source,
      path: entry.path,
      value: entry.settings.autoMemoryDirectory
    }))
  const trusted = [
    ...fromSettings("policy"),
    { source: "flag" as const, path: FLAG_SOURCE_PATH, value: env.flagMemoryDir },
    ...fromSettings("local"),
    ...fromSettings("user")
  ]
  for (const candidate of trusted) {
    if (candidate.value !== undefined) {
      const label = candidate.source === "flag" ? `flag ${FLAG_SOURCE_PATH}` : `${candidate.source} ${candidate.path}`
      return fromOverride(candidate.value, candidate.source, candidate.path, label)
    }
  }
  return Result.succeed({ memoryDir: defaultMemoryDirWith(path, env.memoryBase, root), source: "default" })
}

export const make = Effect.gen(function*() {
  const gitRoot = yield* GitRoot
  const settings = yield* Settings
  const path = yield* Path.Path
  const fs = yield* MemoryFs

  /**
   * The real path of `target`: of its deepest existing ancestor, the missing tail re-joined; the path as given when
   * even that cannot be told (a dangling link, a loop): the lexical check has judged that one already.
   */
  const realPathOf = (target: string): Effect.Effect<string> =>
    fs.realPathOfDeepestExisting(target).pipe(Effect.orElseSucceed(() => target))

  // The home check of an override is lexical; a link to the home (or to an ancestor of it) is refused here.
  const refuseRealHome = (directory: Pick<MemoryLocation, "memoryDir" | "source" | "sourcePath">) =>
    Effect.gen(function*() {
      if (directory.source === "default") return directory
      const real = yield* realPathOf(path.resolve(directory.memoryDir))
      const home = yield* realPathOf(path.resolve(settings.env.userHome))
      if (!isInside(real, home, { allowRoot: true, sep: path.sep })) return directory
      const label = directory.source === "env" ?
        `env ${ENV_MEMORY_DIR}` :
        directory.source === "flag" ?
        `flag ${FLAG_SOURCE_PATH}` :
        `${directory.source} ${directory.sourcePath ?? ""}`
      return yield* new InvalidMemoryDirError({ source: label, value: directory.memoryDir, reason: "contains-home" })
    })

  const resolveWith = (cwd: string) =>
    Effect.gen(function*() {
      const root = yield* gitRoot.canonicalRoot(cwd)
      const loaded = yield* settings.load(root.root)
      const directory = yield* refuseRealHome(
        yield* Effect.fromResult(resolveMemoryDirWith(path, settings.env, root.root, loaded.sources))
      )
      const memoryLayout = yield* Effect.fromResult(resolveMemoryLayout(loaded.sources))
      const automaticModelCalls = yield* Effect.fromResult(
        resolveAutomaticModelCalls(settings.env.automaticModelCalls, loaded.sources)
      )
      const location: MemoryLocation = {
        root,
        ...directory,
        ...resolveEnabled(settings.env, loaded.sources),
        ...(loaded.refused === undefined ? {} : { refusedSettings: loaded.refused }),
        ...(memoryLayout === undefined ? {} : { memoryLayout }),
        automaticModelCalls
      }
      return { location, sources: loaded.sources }
    })

  const resolve = Effect.fn("MemoryPaths.resolve")(function*(cwd: string) {
    return (yield* resolveWith(cwd)).location
  })

  const locate = Effect.fn("MemoryPaths.locate")(function*(cwd: string) {
    const { location, sources } = yield* resolveWith(cwd)
    const team = yield* Effect.fromResult(resolveTeamSwitch(location, settings.env.teamMemory, sources))
    const located: MemoryLocation = { ...location, team, teamEnabled: location.enabled && team.enabled }
    return located
  })

  return MemoryPaths.of({ resolve, locate })
})

export const layer: Layer.Layer<MemoryPaths, never, GitRoot | Settings | Path.Path | MemoryFs> = Layer.effect(
  MemoryPaths,
  make
)

/** Always answers `location`, whatever the cwd (team memory off unless the location says otherwise). */
export const layerTest = (location: MemoryLocation): Layer.Layer<MemoryPaths> =>
  Layer.succeed(
    MemoryPaths,
    MemoryPaths.of({
      resolve: () => Effect.succeed(location),
      // a hand-made location without a team switch: TeamMemory then resolves it from the settings
      locate: () => Effect.succeed(location)
    })
  )
