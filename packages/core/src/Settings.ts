/**
 * Settings: memdir's environment and the settings files, by source, with their trust level (docs/configuration.md).
 *
 * Files, in priority order: policy (`MEMDIR_POLICY_FILE`, system-wide), the `--memory-dir` flag (not a file),
 * local (`<root>/.memdir/settings.local.json`, per checkout, git-ignored), user (`<MEMDIR_HOME>/settings.json`)
 * and project (`<root>/.memdir/settings.json`, committed in the repo, so never trusted for the directory).
 * A missing file is absent; a file that cannot be read, is not a JSON object, or gives a known key the wrong
 * type is a `SettingsError` naming the file (and the key). Unknown keys are kept for later features.
 */
import { FileSystem, Path } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import * as Arr from "effect/Array"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { homedir } from "node:os"
import { SettingsError } from "./Errors.js"
import { expandHome, isEnvTruthy } from "./internal/paths.js"

/** Where a setting came from. `project` is committed in the repo and never trusted for the directory. */
export type SettingsSource = "policy" | "flag" | "local" | "user" | "project"

export interface SettingsFile {
  readonly autoMemoryDirectory?: string | undefined
  readonly autoMemoryEnabled?: boolean | undefined
  readonly [key: string]: unknown
}

/** Environment and process-level inputs (from `Config`, so tests can supply a ConfigProvider). */
export interface MemdirEnv {
  /** MEMDIR_HOME, default `~/.memdir`: memdir's config home (user settings live here). */
  readonly home: string
  /**
   * The base under which `projects/<sanitized root>/memory/` lives: MEMDIR_REMOTE_MEMORY_DIR (a remote
   * environment's persistent mount) when set, else `home`.
   */
  readonly memoryBase: string
  /** The user's home directory, for `~/` expansion. */
  readonly userHome: string
  /** MEMDIR_MEMORY_DIR: full override of the memory directory (an empty value counts as unset). */
  readonly memoryDirOverride?: string | undefined
  /** MEMDIR_DISABLE_AUTO_MEMORY raw value (truthy → off, defined-falsy → forced on). */
  readonly disableAutoMemory?: string | undefined
  /** MEMDIR_SIMPLE (bare/simple mode → off). */
  readonly simpleMode: boolean
  /** MEMDIR_REMOTE without MEMDIR_REMOTE_MEMORY_DIR: remote without persistent storage → off. */
  readonly remoteWithoutStorage: boolean
  /** MEMDIR_POLICY_FILE, default `/etc/memdir/policy.json`. */
  readonly policyFile: string
  /** The `--memory-dir` CLI flag, when given. */
  readonly flagMemoryDir?: string | undefined
  /** MEMDIR_TEAM_MEMORY raw value (truthy → team memory on, defined-falsy → off). */
  readonly teamMemory?: string | undefined
}

export interface LoadedSettings {
  /** Files in priority order policy, flag, local, user, project; missing files are absent. */
  readonly sources: ReadonlyArray<
    { readonly source: SettingsSource; readonly path: string; readonly settings: SettingsFile }
  >
}

export class Settings extends Context.Tag("@memdir/core/Settings")<Settings, {
  readonly env: MemdirEnv
  /** Reads the settings files that apply to a project root. */
  readonly load: (root: string) => Effect.Effect<LoadedSettings, SettingsError>
}>() {}

export const DEFAULT_POLICY_FILE = "/etc/memdir/policy.json"
/** The `path` reported for the `--memory-dir` flag, which is not a file. */
export const FLAG_SOURCE_PATH = "--memory-dir"

const nonEmpty = (name: string) =>
  Config.string(name).pipe(Config.option, Config.map(Option.filter((value) => value !== "")))

/** The raw variables; `MEMDIR_DISABLE_AUTO_MEMORY` keeps an empty value, which forces memory on. */
const rawEnv = Config.all({
  home: nonEmpty("HOME"),
  memdirHome: nonEmpty("MEMDIR_HOME"),
  memoryDir: nonEmpty("MEMDIR_MEMORY_DIR"),
  disableAutoMemory: Config.option(Config.string("MEMDIR_DISABLE_AUTO_MEMORY")),
  simple: nonEmpty("MEMDIR_SIMPLE"),
  remote: nonEmpty("MEMDIR_REMOTE"),
  remoteMemoryDir: nonEmpty("MEMDIR_REMOTE_MEMORY_DIR"),
  policyFile: nonEmpty("MEMDIR_POLICY_FILE"),
  teamMemory: Config.option(Config.string("MEMDIR_TEAM_MEMORY"))
})

/** Reads `MemdirEnv` from `Config` (HOME falls back to `os.homedir()`); directories are made absolute. */
export const readEnv: Effect.Effect<MemdirEnv, ConfigError.ConfigError, Path.Path> = Effect.gen(function*() {
  const path = yield* Path.Path
  const raw = yield* rawEnv
  const userHome = path.resolve(Option.getOrElse(raw.home, homedir))
  const absolute = (value: string) => path.resolve(expandHome(path, value, userHome))
  const home = Option.match(raw.memdirHome, { onNone: () => path.join(userHome, ".memdir"), onSome: absolute })
  return {
    home,
    memoryBase: Option.match(raw.remoteMemoryDir, { onNone: () => home, onSome: absolute }),
    userHome,
    memoryDirOverride: Option.getOrUndefined(raw.memoryDir),
    disableAutoMemory: Option.getOrUndefined(raw.disableAutoMemory),
    simpleMode: isEnvTruthy(Option.getOrUndefined(raw.simple)),
    remoteWithoutStorage: isEnvTruthy(Option.getOrUndefined(raw.remote)) && Option.isNone(raw.remoteMemoryDir),
    policyFile: Option.match(raw.policyFile, { onNone: () => DEFAULT_POLICY_FILE, onSome: absolute }),
    ...Option.match(raw.teamMemory, { onNone: () => ({}), onSome: (teamMemory) => ({ teamMemory }) })
  }
})

const KnownSettings = Schema.Struct({
  autoMemoryDirectory: Schema.optional(Schema.String),
  autoMemoryEnabled: Schema.optional(Schema.Boolean)
})
const decodeKnownSettings = Schema.decodeUnknownEither(KnownSettings, { onExcessProperty: "preserve" })

/**
 * Parses one settings file. An empty file is `{}` and a leading BOM is ignored (both are what editors
 * leave behind); anything else must be a JSON object whose known keys have the right type.
 */
export const parseSettingsFile = (path: string, text: string): Either.Either<SettingsFile, SettingsError> => {
  const body = text.replace(/^\uFEFF/, "")
  if (body.trim() === "") return Either.right({})
  return Either.try({
    try: () => JSON.parse(body) as unknown,
    catch: (error) => new SettingsError({ path, detail: `invalid JSON (${(error as Error).message})` })
  }).pipe(
    Either.filterOrLeft(
      (json): json is Record<string, unknown> => typeof json === "object" && json !== null && !Array.isArray(json),
      (json) =>
        new SettingsError({
          path,
          detail: `expected a JSON object, found ${
            json === null ? "null" : Array.isArray(json) ? "an array" : typeof json
          }`
        })
    ),
    Either.flatMap((json) =>
      decodeKnownSettings(json).pipe(
        Either.map((settings): SettingsFile => settings),
        Either.mapLeft((error) => {
          const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
          const key = issue?.path[0]
          return new SettingsError({
            path,
            ...(key === undefined ? {} : { key: String(key) }),
            detail: `wrong type: ${issue?.message ?? ParseResult.TreeFormatter.formatErrorSync(error)}`
          })
        })
      )
    )
  )
}

/** A file reader for `makeWith`: `None` when the file does not exist. */
export type ReadSettingsText = (path: string) => Effect.Effect<Option.Option<string>, SettingsError>

/** The service over any environment and file reader (the live layer reads the disk, `layerTest` a map). */
export const makeWith = (env: MemdirEnv, path: Path.Path, readText: ReadSettingsText): Settings["Type"] => {
  const readSource = Effect.fnUntraced(function*(source: SettingsSource, file: string) {
    const text = yield* readText(file)
    if (Option.isNone(text)) return Option.none<LoadedSettings["sources"][number]>()
    const settings = yield* parseSettingsFile(file, text.value)
    return Option.some({ source, path: file, settings })
  })

  const load = Effect.fn("Settings.load")(function*(root: string) {
    const userFile = path.join(env.home, "settings.json")
    const projectFile = path.join(root, ".memdir", "settings.json")
    const policy = yield* readSource("policy", env.policyFile)
    const flag = env.flagMemoryDir === undefined ? Option.none() : Option.some({
      source: "flag" as const,
      path: FLAG_SOURCE_PATH,
      settings: { autoMemoryDirectory: env.flagMemoryDir }
    })
    const local = yield* readSource("local", path.join(root, ".memdir", "settings.local.json"))
    const user = yield* readSource("user", userFile)
    // With the root at the user's home, the "project" file is the user's own file: read it once, as user.
    const project = projectFile === userFile ? Option.none() : yield* readSource("project", projectFile)
    return { sources: Arr.getSomes([policy, flag, local, user, project]) }
  })

  return Settings.of({ env, load })
}

const isMissing = (error: PlatformError): boolean =>
  error._tag === "SystemError" &&
  (error.reason === "NotFound" || (error.cause as { readonly code?: unknown } | undefined)?.code === "ENOTDIR")

const makeFromEnv = (env: MemdirEnv) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const readText: ReadSettingsText = (file) =>
      fs.readFileString(file).pipe(
        Effect.map(Option.some),
        Effect.catchIf(isMissing, () => Effect.succeedNone),
        Effect.mapError((error) => new SettingsError({ path: file, detail: `cannot read (${error.message})` }))
      )
    return makeWith(env, path, readText)
  })

/** Reads the environment through `Config`, then the settings files from disk. */
export const make: Effect.Effect<
  Settings["Type"],
  ConfigError.ConfigError,
  FileSystem.FileSystem | Path.Path
> = Effect.flatMap(readEnv, makeFromEnv)

export const layer: Layer.Layer<Settings, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> = Layer.effect(
  Settings,
  make
)

/** Like `layer`, with parts of the environment replaced (the CLI sets `flagMemoryDir` from `--memory-dir`). */
export const layerWith = (
  overrides: Partial<MemdirEnv>
): Layer.Layer<Settings, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(Settings, Effect.flatMap(readEnv, (env) => makeFromEnv({ ...env, ...overrides })))

/** The environment `layerTest` starts from: a fictitious home, everything else unset. */
export const testEnv: MemdirEnv = {
  home: "/home/memdir-test/.memdir",
  memoryBase: "/home/memdir-test/.memdir",
  userHome: "/home/memdir-test",
  simpleMode: false,
  remoteWithoutStorage: false,
  policyFile: DEFAULT_POLICY_FILE
}

/**
 * In-memory settings for tests: `env` overrides `testEnv` (`memoryBase` follows `home`); `files` maps a path to its text (parsed like a real
 * file, so invalid JSON can be tested) or to settings; any other path is absent. POSIX paths.
 */
export const layerTest = (
  env: Partial<MemdirEnv> = {},
  files: Readonly<Record<string, string | SettingsFile>> = {}
): Layer.Layer<Settings> =>
  Layer.effect(
    Settings,
    Effect.map(Path.Path, (path) =>
      makeWith({ ...testEnv, memoryBase: env.home ?? testEnv.memoryBase, ...env }, path, (file) => {
        const content = files[file]
        return Effect.succeed(
          content === undefined
            ? Option.none()
            : Option.some(typeof content === "string" ? content : JSON.stringify(content))
        )
      }))
  ).pipe(Layer.provide(Path.layer))
