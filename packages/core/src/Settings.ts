/**
 * Settings: memdir's environment and the settings files, by source, with their trust level (docs/configuration.md).
 *
 * Files, in priority order: policy (`MEMDIR_POLICY_FILE`, system-wide), the `--memory-dir` flag (not a file),
 * local (`<root>/.memdir/settings.local.json`, per checkout, git-ignored), user (`<MEMDIR_HOME>/settings.json`)
 * and project (`<root>/.memdir/settings.json`, committed in the repo, so never trusted for the directory).
 * A missing file is absent; a file that cannot be read, is not a JSON object, or gives a known key the wrong
 * type is a `SettingsError` naming the file (and the key). Unknown keys are kept for later features.
 */
import * as Arr from "effect/Array"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { homedir } from "node:os"
import { SettingsError } from "./Errors.js"
import { makeMemoryFsNode } from "./internal/fs/node.js"
import { parseDotGitFile } from "./internal/git/files.js"
import { expandHome, isEnvTruthy } from "./internal/location/paths.js"
import { type MemoryFs, type MemoryFsError } from "./MemoryFs.js"

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
  /** MEMDIR_AUTOMATIC_MODEL_CALLS raw value (truthy → hooks and the MCP server may call a model, defined-falsy → not). */
  readonly automaticModelCalls?: string | undefined
}

/** A settings file memdir did not trust, ignored for every key: why, and what the user does about it. */
export interface RefusedSettings {
  readonly source: SettingsSource
  readonly path: string
  readonly reason: string
  readonly fix: string
}

export interface LoadedSettings {
  /** Files in priority order policy, flag, local, user, project; missing and refused files are absent. */
  readonly sources: ReadonlyArray<
    { readonly source: SettingsSource; readonly path: string; readonly settings: SettingsFile }
  >
  /** Files that exist but were not trusted (present only when there is one). */
  readonly refused?: ReadonlyArray<RefusedSettings> | undefined
}

/** Settings files are small: larger ones are refused (a link to `/dev/zero` never grows memory). */
export const MAX_SETTINGS_BYTES = 64 * 1024

export class Settings extends Context.Service<Settings, {
  readonly env: MemdirEnv
  /** Reads the settings files that apply to a project root. */
  readonly load: (root: string) => Effect.Effect<LoadedSettings, SettingsError>
}>()("@memdir/core/Settings") {}

export const DEFAULT_POLICY_FILE = "/etc/memdir/policy.json"
/** The `path` reported for the `--memory-dir` flag, which is not a file. */
export const FLAG_SOURCE_PATH = "--memory-dir"

const nonEmpty = (name: string) =>
  Config.String(name).pipe(Config.option, Config.map(Option.filter((value) => value !== "")))

/**
 * The environment as memdir reads it: the process's variables, an empty one kept as a value. Effect's default
 * provider (`ConfigProvider.fromEnv()`) reads an empty variable as unset, but to memdir `MEMDIR_DISABLE_AUTO_MEMORY=`
 * forces memory on and an empty `MEMDIR_TEAM_MEMORY` or `MEMDIR_AUTOMATIC_MODEL_CALLS` switches off: a program
 * provides this one (`Effect.provideService(ConfigProvider.ConfigProvider, Settings.envProvider())`). It reads the
 * variables when first asked, once.
 */
export const envProvider = (): ConfigProvider.ConfigProvider => ConfigProvider.fromEnv({ preserveEmptyStrings: true })

/**
 * The raw variables; `MEMDIR_DISABLE_AUTO_MEMORY` keeps an empty value, which forces memory on (when the provider
 * keeps empty values: `envProvider`).
 */
const rawEnv = Config.all({
  home: nonEmpty("HOME"),
  memdirHome: nonEmpty("MEMDIR_HOME"),
  memoryDir: nonEmpty("MEMDIR_MEMORY_DIR"),
  disableAutoMemory: Config.option(Config.String("MEMDIR_DISABLE_AUTO_MEMORY")),
  simple: nonEmpty("MEMDIR_SIMPLE"),
  remote: nonEmpty("MEMDIR_REMOTE"),
  remoteMemoryDir: nonEmpty("MEMDIR_REMOTE_MEMORY_DIR"),
  policyFile: nonEmpty("MEMDIR_POLICY_FILE"),
  teamMemory: Config.option(Config.String("MEMDIR_TEAM_MEMORY")),
  automaticModelCalls: Config.option(Config.String("MEMDIR_AUTOMATIC_MODEL_CALLS"))
})

/** Reads `MemdirEnv` from `Config` (HOME falls back to `os.homedir()`); directories are made absolute. */
export const readEnv: Effect.Effect<MemdirEnv, Config.ConfigError, Path.Path> = Effect.gen(function*() {
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
    ...Option.match(raw.teamMemory, { onNone: () => ({}), onSome: (teamMemory) => ({ teamMemory }) }),
    ...Option.match(raw.automaticModelCalls, {
      onNone: () => ({}),
      onSome: (automaticModelCalls) => ({ automaticModelCalls })
    })
  }
})

/**
 * The keys memdir reads from a settings file, and every other key kept as it is (for later features); the schema is
 * built on the first file read, not at start.
 */
const knownSettings = () =>
  Schema.StructWithRest(
    Schema.Struct({
      autoMemoryDirectory: Schema.optional(Schema.String),
      autoMemoryEnabled: Schema.optional(Schema.Boolean)
    }),
    [Schema.Record(Schema.String, Schema.Unknown)]
  )
let decodeKnown: ReturnType<typeof decodeKnownWith> | undefined
const decodeKnownWith = (schema: ReturnType<typeof knownSettings>) => Schema.decodeUnknownResult(schema)
const decodeKnownSettings = (json: unknown) => (decodeKnown ??= decodeKnownWith(knownSettings()))(json)

const parseError = (text: string): string | undefined => {
  try {
    JSON.parse(text)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

/** Whether a parse error of a prefix of length `length` only says the text stopped early. */
const isIncomplete = (message: string | undefined, length: number): boolean => {
  if (message === undefined || message.includes("end of JSON input")) return true
  const at = /at position (\d+)/.exec(message)
  return at !== null && Number(at[1]) >= length
}

/**
 * Where a JSON text first goes wrong, as "line L, column C". The parser's own message quotes the text (a link
 * to a secret file would echo it), so only a position is reported: from the message when it has one, else
 * the shortest prefix that fails for a reason other than ending early.
 */
const jsonErrorPosition = (text: string): string => {
  const message = parseError(text)
  const at = message === undefined ? null : /at position (\d+)/.exec(message)
  let position: number
  if (at !== null) {
    position = Number(at[1])
  } else {
    let low = 1
    let high = text.length
    while (low < high) {
      const middle = Math.floor((low + high) / 2)
      if (isIncomplete(parseError(text.slice(0, middle)), middle)) low = middle + 1
      else high = middle
    }
    position = low - 1
  }
  const before = text.slice(0, position).split("\n")
  return `line ${before.length}, column ${(before[before.length - 1]?.length ?? 0) + 1}`
}

/**
 * Parses one settings file. An empty file is `{}` and a leading BOM is ignored (both are what editors
 * leave behind); anything else must be a JSON object whose known keys have the right type.
 */
export const parseSettingsFile = (path: string, text: string): Result.Result<SettingsFile, SettingsError> => {
  const body = text.replace(/^\uFEFF/, "")
  if (body.trim() === "") return Result.succeed({})
  return Result.try({
    try: () => JSON.parse(body) as unknown,
    catch: () => new SettingsError({ path, detail: `invalid JSON at ${jsonErrorPosition(body)}` })
  }).pipe(
    Result.filterOrFail(
      (json): json is Record<string, unknown> => typeof json === "object" && json !== null && !Array.isArray(json),
      (json) =>
        new SettingsError({
          path,
          detail: `expected a JSON object, found ${
            json === null ? "null" : Array.isArray(json) ? "an array" : typeof json
          }`
        })
    ),
    Result.flatMap((json) =>
      decodeKnownSettings(json).pipe(
        Result.map((settings): SettingsFile => settings),
        Result.mapError((error) => {
          const issue = SchemaIssue.makeFormatterStandardSchemaV1()(error.issue).issues[0]
          const key = issue?.path?.[0]
          return new SettingsError({
            path,
            ...(key === undefined ? {} : { key: String(typeof key === "object" ? key.key : key) }),
            detail: `wrong type: ${issue?.message ?? SchemaIssue.makeFormatterDefault()(error.issue)}`
          })
        })
      )
    )
  )
}

/** A file reader for `makeWith`: `None` when the file does not exist. */
export type ReadSettingsText = (path: string) => Effect.Effect<Option.Option<string>, SettingsError>

/**
 * Decides whether the local settings file of `root` may be trusted: `None` when it may (or is missing), else
 * why not and the fix.
 */
export type CheckLocalSettings = (
  file: string,
  root: string
) => Effect.Effect<Option.Option<{ readonly reason: string; readonly fix: string }>>

/** The service over any environment and file reader (the live layer reads the disk, `layerTest` a map). */
export const makeWith = (
  env: MemdirEnv,
  path: Path.Path,
  readText: ReadSettingsText,
  checkLocal: CheckLocalSettings = () => Effect.succeedNone
): Settings["Service"] => {
  const readSource = Effect.fnUntraced(function*(source: SettingsSource, file: string) {
    const text = yield* readText(file)
    if (Option.isNone(text)) return Option.none<LoadedSettings["sources"][number]>()
    const settings = yield* Effect.fromResult(parseSettingsFile(file, text.value))
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
    const localFile = path.join(root, ".memdir", "settings.local.json")
    const refusal = yield* checkLocal(localFile, root)
    const refused = Option.map(refusal, (why): RefusedSettings => ({ source: "local", path: localFile, ...why }))
    const local = Option.isSome(refused) ? Option.none() : yield* readSource("local", localFile)
    const user = yield* readSource("user", userFile)
    // With the root at the user's home, the "project" file is the user's own file: read it once, as user.
    const project = projectFile === userFile ? Option.none() : yield* readSource("project", projectFile)
    const sources = Arr.getSomes([policy, flag, local, user, project])
    return Option.match(refused, { onNone: () => ({ sources }), onSome: (entry) => ({ sources, refused: [entry] }) })
  })

  return Settings.of({ env, load })
}

const isMissing = (error: MemoryFsError): boolean =>
  error.reason === "NotFound" || error.reason === "NotDirectory" || error.reason === "DanglingSymlink"

const LOCAL_FILE_IN_ROOT = ".memdir/settings.local.json"

/** At most this much of a git index is read to see whether it tracks the local settings file. */
const MAX_INDEX_BYTES = 256 * 1024 * 1024

const INDEX_SIGNATURE = 0x44495243 // "DIRC"

/**
 * Whether a git index (versions 2 to 4) lists `target` (a `/`-separated path, in any stage). `Failure` says why it
 * cannot tell: a damaged index, or a split or sparse index whose entry list here is not the whole story.
 */
export const indexTracks = (bytes: Uint8Array, target: string): Result.Result<boolean, string> => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 12 || view.getUint32(0) !== INDEX_SIGNATURE) return Result.fail("not a git index")
  const version = view.getUint32(4)
  if (version < 2 || version > 4) return Result.fail(`unsupported git index version ${version}`)
  const count = view.getUint32(8)
  const want = new TextEncoder().encode(target)
  const same = (name: Uint8Array) => name.length === want.length && name.every((byte, i) => byte === want[i])
  let offset = 12
  let previous: Uint8Array = new Uint8Array(0)
  for (let entry = 0; entry < count; entry++) {
    const start = offset
    if (offset + 62 > bytes.length) return Result.fail("truncated git index")
    const flags = view.getUint16(offset + 60)
    offset += 62
    if ((flags & 0x4000) !== 0) offset += 2
    let name: Uint8Array
    if (version === 4) {
      // the name is the previous one minus a varint count of trailing bytes, plus a NUL-terminated suffix
      let byte = bytes[offset++] ?? 0
      let strip = byte & 0x7f
      while ((byte & 0x80) !== 0) {
        byte = bytes[offset++] ?? 0
        strip = ((strip + 1) * 128) + (byte & 0x7f)
      }
      const end = bytes.indexOf(0, offset)
      if (end < 0 || strip > previous.length) return Result.fail("damaged git index")
      const head = previous.subarray(0, previous.length - strip)
      name = new Uint8Array(head.length + end - offset)
      name.set(head)
      name.set(bytes.subarray(offset, end), head.length)
      offset = end + 1
    } else {
      const end = bytes.indexOf(0, offset)
      if (end < 0) return Result.fail("damaged git index")
      name = bytes.subarray(offset, end)
      offset = start + ((end - start + 8) & ~7)
    }
    if (same(name)) return Result.succeed(true)
    previous = name
  }
  // extensions up to the trailing checksum: a split or sparse index keeps entries elsewhere
  while (offset + 8 <= bytes.length - 20) {
    const signature = String.fromCharCode(...bytes.subarray(offset, offset + 4))
    if (signature === "link") return Result.fail("a split git index")
    if (signature === "sdir") return Result.fail("a sparse git index")
    offset += 8 + view.getUint32(offset + 4)
  }
  return Result.succeed(false)
}

const UNTRACK_FIX = `run \`git rm --cached ${LOCAL_FILE_IN_ROOT}\` and add it to .gitignore`

/**
 * The local file is trusted only when it is a regular file (not a link), owned by the current user, and not
 * tracked by git: a repository cannot commit a "local" file that chooses where memory goes. Git's index is read
 * directly (no process), and only when the file exists; anything that prevents the answer refuses the file.
 */
const checkLocalWith = (memoryFs: MemoryFs["Service"], path: Path.Path): CheckLocalSettings => (file, root) =>
  Effect.gen(function*() {
    const refuse = (reason: string, fix: string) => Effect.succeed(Option.some({ reason, fix }))
    const entry = yield* Effect.result(memoryFs.lstat(file))
    if (Result.isFailure(entry)) {
      return isMissing(entry.failure)
        ? Option.none()
        : yield* refuse(`cannot be checked (${entry.failure.detail})`, "check its permissions")
    }
    if (entry.success.kind === "SymbolicLink") {
      return yield* refuse("is a symbolic link", "replace the link with a file")
    }
    if (entry.success.kind !== "File") {
      return yield* refuse(`is not a regular file (${entry.success.kind})`, "replace it with a regular file")
    }
    const uid = typeof process.getuid === "function" ? process.getuid() : undefined
    // the owner of the file itself: the lstat above found a regular file, not a link
    if (uid !== undefined && entry.success.uid !== uid) {
      return yield* refuse(
        `is not owned by you (uid ${entry.success.uid}, you are ${uid})`,
        "remove it, or create your own copy"
      )
    }
    const tracked = yield* isTracked(memoryFs, path, root)
    if (Result.isFailure(tracked)) {
      return yield* refuse(
        `cannot tell whether git tracks it (${tracked.failure})`,
        `check the repository, then ${UNTRACK_FIX}`
      )
    }
    return tracked.success
      ? yield* refuse("is tracked by git (committed in the repository)", UNTRACK_FIX)
      : Option.none()
  })

/** Whether the git repository at `root` (if any) tracks the local settings file: a `Failure` when it cannot tell. */
const isTracked = (memoryFs: MemoryFs["Service"], path: Path.Path, root: string) =>
  Effect.gen(function*() {
    const dotGit = path.join(root, ".git")
    const kind = yield* memoryFs.lstat(dotGit).pipe(Effect.map((info) => info.kind), Effect.result)
    if (Result.isFailure(kind)) {
      return isMissing(kind.failure)
        ? Result.succeed(false)
        : Result.fail(kind.failure.detail)
    }
    let gitDir = dotGit
    if (kind.success === "File") {
      // a submodule or `--separate-git-dir`: `.git` names the git dir
      const text = yield* Effect.result(memoryFs.readFile(dotGit, { maxBytes: 4096 }))
      if (Result.isFailure(text)) return Result.fail(`cannot read ${dotGit} (${text.failure.detail})`)
      const target = parseDotGitFile(text.success.text)
      if (target === undefined) return Result.fail(`${dotGit} names no git dir`)
      gitDir = path.resolve(root, target)
    } else if (kind.success !== "Directory") {
      return Result.fail(`${dotGit} is a ${kind.success}`)
    }
    const index = path.join(gitDir, "index")
    const info = yield* Effect.result(memoryFs.lstat(index))
    // a repository without an index tracks nothing yet
    if (Result.isFailure(info)) {
      return isMissing(info.failure)
        ? Result.succeed(false)
        : Result.fail(info.failure.detail)
    }
    if (info.success.kind !== "File") return Result.fail(`${index} is not a regular file`)
    if (info.success.size > MAX_INDEX_BYTES) return Result.fail(`${index} is over ${MAX_INDEX_BYTES} bytes`)
    // opened without following a link or blocking, and bounded again (it may have grown since the lstat)
    const bytes = yield* Effect.result(memoryFs.readBytes(index, { maxBytes: MAX_INDEX_BYTES }))
    if (Result.isFailure(bytes)) {
      return Result.fail(`cannot read ${index} (${bytes.failure.reason}: ${bytes.failure.detail})`)
    }
    return indexTracks(bytes.success.bytes, LOCAL_FILE_IN_ROOT)
  })

/**
 * Settings files are always read through the live `MemoryFs` (made here, as `MemoryFs.layer` makes it: building
 * that layer instead costs a process that has just started a layer build of its own).
 */
const makeFromEnv = (env: MemdirEnv) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const memoryFs: MemoryFs["Service"] = makeMemoryFsNode()
    // Links are followed (a dotfiles manager links the user file), then the real file is opened without
    // blocking, must be a regular file, and is read with a size bound: `/dev/zero` or a FIFO never hangs.
    const readText: ReadSettingsText = (file) =>
      memoryFs.realPathOfDeepestExisting(file).pipe(
        Effect.flatMap((real) => memoryFs.readFile(real, { maxBytes: MAX_SETTINGS_BYTES })),
        Effect.map((read) => Option.some(read.text)),
        Effect.catchIf(isMissing, () => Effect.succeedNone),
        Effect.mapError((error) =>
          new SettingsError({ path: file, detail: `cannot read (${error.reason}: ${error.detail})` })
        )
      )
    return makeWith(env, path, readText, checkLocalWith(memoryFs, path))
  })

/** Reads the environment through `Config`, then the settings files from disk. */
export const make: Effect.Effect<Settings["Service"], Config.ConfigError, Path.Path> = Effect.flatMap(
  readEnv,
  makeFromEnv
)

export const layer: Layer.Layer<Settings, Config.ConfigError, Path.Path> = Layer.effect(Settings, make)

/** Like `layer`, with parts of the environment replaced (the CLI sets `flagMemoryDir` from `--memory-dir`). */
export const layerWith = (
  overrides: Partial<MemdirEnv>
): Layer.Layer<Settings, Config.ConfigError, Path.Path> =>
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
