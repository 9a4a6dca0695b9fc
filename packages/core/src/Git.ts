/**
 * Git: the one way memdir runs git (team sync and dream commits).
 *
 * Every git process gets:
 * - an environment built from an allow-list (where programs, home and temp directories are, the locale, proxies
 *   and the ssh agent for network remotes) plus what memdir sets itself. Nothing is inherited by omission: the
 *   process starts from an empty environment, so a caller's `GIT_DIR`, `GIT_INDEX_FILE`, `GIT_WORK_TREE`,
 *   `GIT_CONFIG_PARAMETERS`… (a git hook sets them) never redirect memdir's git elsewhere. (The command's `env` is
 *   the whole environment, with `extendEnv: false`: nothing is merged in from this process.)
 * - the safe configuration on the command line: hooks off, no fsmonitor, no attributes file, no system config,
 *   no replace refs, symlinks checked out as files, NTFS/HFS path protection, and a protocol allow-list (file,
 *   git, ssh, http, https: `ext::`, `fd::` and remote helpers are refused).
 * - a timeout: a remote that never answers fails with `GitTimeoutError` and the process group is killed, so no
 *   lock is held forever.
 *
 * A local (path or `file://`) remote runs its `upload-pack`/`receive-pack` as a child of ours, in the remote's
 * repository, and git clears `-c` settings on that boundary: the remote's hooks (`hooks/pre-receive`…) would run.
 * `localTransportOptions` names those programs with the safe configuration again, so they run without hooks,
 * without automatic gc and without updating a checked-out branch.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChildProcess from "effect/process/ChildProcess"
import { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/** How long one git call may take before it is killed. */
export const GIT_TIMEOUT: Duration.Duration = Duration.seconds(60)

/** At most this much of stderr is kept in a `GitError`. */
const STDERR_EXCERPT_CHARS = 600

const commandText = (args: ReadonlyArray<string>): string => ["git", ...args].join(" ")

/** A git call that could not start (`exitCode` -1) or exited with a failure the caller did not expect. */
export class GitError extends Schema.TaggedError<GitError>()("GitError", {
  /** The git arguments, without memdir's safe configuration. */
  args: Schema.Array(Schema.String),
  exitCode: Schema.Number,
  /** The end of git's stderr (or stdout when stderr was empty). */
  stderr: Schema.String
}) {
  override get message(): string {
    return this.exitCode === -1
      ? `cannot run ${commandText(this.args)} (${this.stderr}): is git installed and on PATH?`
      : `${commandText(this.args)} exited with ${this.exitCode}: ${this.stderr}`
  }
}

/** A git call that did not finish in time (a remote that never answers); the process was killed. */
export class GitTimeoutError extends Schema.TaggedError<GitTimeoutError>()("GitTimeoutError", {
  args: Schema.Array(Schema.String),
  timeoutMs: Schema.Number
}) {
  override get message(): string {
    return `${commandText(this.args)} did not finish within ${Math.round(this.timeoutMs / 1000)} s and was ` +
      `stopped: check that the remote answers (URL, network) and run it again`
  }
}

export interface GitOutput {
  readonly exitCode: number
  readonly stdout: string
  /** stdout as bytes (`cat-file --batch` output is length-prefixed in bytes). */
  readonly stdoutBytes: Uint8Array
  readonly stderr: string
}

export interface GitRunOptions {
  /** Working directory of the process (default: the current one). */
  readonly cwd?: string | undefined
  /** `--git-dir=…` and `--work-tree=…`, named explicitly rather than discovered. */
  readonly gitDir?: string | undefined
  readonly workTree?: string | undefined
  readonly stdin?: string | undefined
  /** Variables memdir sets for this call (an identity, a private index): added to the allow-listed ones. */
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly timeout?: Duration.Input | undefined
}

export class Git extends Context.Service<Git, {
  /** Run git; any exit code is an answer (the caller decides what a non-zero one means). */
  readonly run: (
    args: ReadonlyArray<string>,
    options?: GitRunOptions
  ) => Effect.Effect<GitOutput, GitError | GitTimeoutError>
  /** Run git; a non-zero exit code is a `GitError`. */
  readonly exec: (
    args: ReadonlyArray<string>,
    options?: GitRunOptions
  ) => Effect.Effect<GitOutput, GitError | GitTimeoutError>
}>()("@memdir/core/Git") {}

// ---------------------------------------------------------------------------------------------------------------
// The environment and the configuration (pure)
// ---------------------------------------------------------------------------------------------------------------

/** Inherited variables a git process may see. Nothing named `GIT_*` is ever inherited. */
const INHERITED_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "TZ",
  "TMPDIR",
  "TMP",
  "TEMP",
  // the user's global git config (identity, credential helpers, ssh command) lives here
  "XDG_CONFIG_HOME",
  // network remotes: the ssh agent and proxies
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  // Windows: git for Windows needs these to find itself and the user's home
  "SystemRoot",
  "SYSTEMROOT",
  "windir",
  "ComSpec",
  "PATHEXT",
  "USERPROFILE",
  "HOMEDRIVE",
  "HOMEPATH",
  "APPDATA",
  "LOCALAPPDATA"
])

/** Set by memdir on every call: no prompt (nobody answers), no system config or attributes, parseable messages. */
const FIXED_ENV: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_NO_REPLACE_OBJECTS: "1",
  GIT_OPTIONAL_LOCKS: "0",
  LC_ALL: "C"
}

/**
 * Pure: the whole environment of a git process — the allow-listed variables of `parent` (and `LC_*`), memdir's
 * fixed settings, then `explicit` (what the caller sets for this call).
 */
export const gitEnvironment = (
  parent: Readonly<Record<string, string | undefined>>,
  explicit: Readonly<Record<string, string>> = {}
): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(parent)) {
    if (value !== undefined && (INHERITED_VARIABLES.has(key) || key.startsWith("LC_"))) env[key] = value
  }
  return { ...env, ...FIXED_ENV, ...explicit }
}

/** Protocols a remote may use; everything else (`ext::`, `fd::`, remote helpers) is refused by git itself. */
const ALLOWED_PROTOCOLS: ReadonlyArray<string> = ["file", "git", "ssh", "http", "https"]

/** The settings of every git call. */
export const SAFE_CONFIG: ReadonlyArray<string> = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.attributesFile=/dev/null",
  "core.useReplaceRefs=false",
  "core.symlinks=false",
  "core.protectNTFS=true",
  "core.protectHFS=true",
  "core.autocrlf=false",
  "core.quotePath=false",
  "protocol.allow=never",
  ...ALLOWED_PROTOCOLS.map((protocol) => `protocol.${protocol}.allow=always`),
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "advice.detachedHead=false"
]

const configArgs = (settings: ReadonlyArray<string>): Array<string> => settings.flatMap((s) => ["-c", s])

/**
 * Pure: settings that switch off every filter a repository's config defines, from the output of
 * `git config --name-only --get-regexp '^filter\.'`. For a repository memdir does not own (a memory directory
 * that is a git repository of the user's) whose `.gitattributes` may name them: an empty command is no filter,
 * and a filter that is not required is simply skipped.
 */
export const filterOverrides = (configNames: string): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const line of configNames.split("\n")) {
    const match = /^filter\.(.+)\.[^.]+$/.exec(line.trim())
    if (match !== null) names.add(match[1]!)
  }
  return configArgs(
    [...names].flatMap((name) => [
      `filter.${name}.clean=`,
      `filter.${name}.smudge=`,
      `filter.${name}.process=`,
      `filter.${name}.required=false`
    ])
  )
}

/**
 * Pure: whether git reaches `remote` over the local transport (a path, or a `file://` URL), where the remote's
 * pack programs run on this machine. git's rule: a URL has `scheme://`; `host:path` with the colon before any
 * slash is ssh; anything else is a path.
 */
export const isLocalRemote = (remote: string): boolean => {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(remote)
  if (scheme !== null) return scheme[1]!.toLowerCase() === "file"
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(remote)) return false // a remote helper (`fd::…`): refused by protocol
  const colon = remote.indexOf(":")
  const slash = remote.indexOf("/")
  if (colon > 0 && (slash < 0 || colon < slash) && !/^[A-Za-z]:[\\/]/.test(remote)) return false
  return true
}

/** Settings for the remote's own pack programs on the local transport: no hooks, no gc, no checkout. */
const REMOTE_PACK_CONFIG: ReadonlyArray<string> = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.attributesFile=/dev/null",
  "receive.autogc=false",
  "receive.denyCurrentBranch=refuse",
  "gc.auto=0",
  "maintenance.auto=false"
]

/**
 * Options for `git fetch` / `git push` to `remote`: for a local remote, the pack program is named with the safe
 * configuration (git runs it through the shell, so the settings are single-quoted words); none for others.
 */
export const localTransportOptions = (remote: string, command: "fetch" | "push"): ReadonlyArray<string> => {
  if (!isLocalRemote(remote)) return []
  const program = ["git", ...configArgs(REMOTE_PACK_CONFIG).map((a) => a === "-c" ? a : `'${a}'`)].join(" ")
  return command === "fetch" ? [`--upload-pack=${program} upload-pack`] : [`--receive-pack=${program} receive-pack`]
}

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

const decoder = new TextDecoder()
const encoder = new TextEncoder()

const collect = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  Stream.runCollect(stream).pipe(Effect.map((chunks) => {
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
    let offset = 0
    for (const chunk of chunks) {
      all.set(chunk, offset)
      offset += chunk.length
    }
    return all
  }))

const excerpt = (text: string): string => {
  const trimmed = text.trim()
  return trimmed.length <= STDERR_EXCERPT_CHARS ? trimmed : `…${trimmed.slice(-STDERR_EXCERPT_CHARS)}`
}

export interface GitOptions {
  /** Default timeout of every call. */
  readonly timeout?: Duration.Input | undefined
  /** Where the allow-listed variables come from (default: this process's environment, read at each call). */
  readonly parentEnv?: (() => Readonly<Record<string, string | undefined>>) | undefined
}

export const makeWith = (options: GitOptions = {}) =>
  Effect.gen(function*() {
    const spawner = yield* ChildProcessSpawner
    const defaultTimeout = Duration.fromInputUnsafe(options.timeout ?? GIT_TIMEOUT)
    const parentEnv = options.parentEnv ?? (() => globalThis.process?.env ?? {})

    const run = Effect.fn("Git.run")(function*(args: ReadonlyArray<string>, runOptions: GitRunOptions = {}) {
      const location = [
        ...(runOptions.gitDir === undefined ? [] : [`--git-dir=${runOptions.gitDir}`]),
        ...(runOptions.workTree === undefined ? [] : [`--work-tree=${runOptions.workTree}`])
      ]
      const command = ChildProcess.make("git", [...configArgs(SAFE_CONFIG), ...location, ...args], {
        env: gitEnvironment(parentEnv(), runOptions.env),
        extendEnv: false,
        // stdin is always closed: a git that would read it gets end-of-file, never a wait
        stdin: Stream.make(encoder.encode(runOptions.stdin ?? "")),
        ...(runOptions.cwd === undefined ? {} : { cwd: runOptions.cwd })
      })
      const timeout = runOptions.timeout === undefined ? defaultTimeout : Duration.fromInputUnsafe(runOptions.timeout)
      return yield* Effect.scoped(Effect.gen(function*() {
        const child = yield* spawner.spawn(command)
        const [stdout, stderr, exitCode] = yield* Effect.all(
          [collect(child.stdout), collect(child.stderr), child.exitCode],
          { concurrency: "unbounded" }
        )
        const output: GitOutput = {
          exitCode: Number(exitCode),
          stdout: decoder.decode(stdout),
          stdoutBytes: stdout,
          stderr: decoder.decode(stderr)
        }
        return output
      })).pipe(
        Effect.mapError((error) => new GitError({ args, exitCode: -1, stderr: error.message })),
        // interrupting the scoped child kills its process group (SIGTERM) and waits for it to exit
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () => Effect.fail(new GitTimeoutError({ args, timeoutMs: Duration.toMillis(timeout) }))
        })
      )
    })

    const exec = Effect.fn("Git.exec")(function*(args: ReadonlyArray<string>, runOptions?: GitRunOptions) {
      const output = yield* run(args, runOptions)
      if (output.exitCode === 0) return output
      return yield* new GitError({ args, exitCode: output.exitCode, stderr: excerpt(output.stderr || output.stdout) })
    })

    return Git.of({ run, exec })
  })

export const make = makeWith()

/** git as a child process (needs `ChildProcessSpawner`, e.g. from `NodeServices.layer`). */
export const layer: Layer.Layer<Git, never, ChildProcessSpawner> = Layer.effect(Git, make)

export const layerWith = (options: GitOptions): Layer.Layer<Git, never, ChildProcessSpawner> =>
  Layer.effect(Git, makeWith(options))

/**
 * A scripted git for tests of callers: `respond` answers each call (arguments without the safe configuration);
 * `exec` fails on a non-zero answer as the live one does.
 */
export const layerTest = (
  respond: (args: ReadonlyArray<string>, options: GitRunOptions) => Partial<Omit<GitOutput, "stdoutBytes">>
): Layer.Layer<Git> => {
  const answer = (args: ReadonlyArray<string>, options: GitRunOptions = {}): GitOutput => {
    const given = respond(args, options)
    const stdout = given.stdout ?? ""
    return {
      exitCode: given.exitCode ?? 0,
      stdout,
      stdoutBytes: new TextEncoder().encode(stdout),
      stderr: given.stderr ?? ""
    }
  }
  return Layer.succeed(
    Git,
    Git.of({
      run: (args, options) => Effect.sync(() => answer(args, options)),
      exec: (args, options) =>
        Effect.suspend(() => {
          const output = answer(args, options)
          return output.exitCode === 0
            ? Effect.succeed(output)
            : Effect.fail(new GitError({ args, exitCode: output.exitCode, stderr: excerpt(output.stderr) }))
        })
    })
  )
}
