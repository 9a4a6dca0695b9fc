/**
 * The hook daemon's socket (docs/hooks.md#the-hook-daemon), shared by the client in the launcher and the daemon:
 * where it lives, how a session's daemon is named, and the checks that make it the user's own. Plain Node: the
 * client runs before any of the CLI is loaded.
 *
 * Where: `$MEMDIR_HOME/hookd/` (default `~/.memdir/hookd/`), a directory of mode 0700 owned by the user; a socket is
 * used only when it is a socket owned by the user in such a directory (no TCP, no other user's file). Anyone who
 * can write there could impersonate the daemon; only the user can.
 *
 * Which: one daemon per everything that decides a hook's answer: the arguments after `hook`, the working directory
 * (the project), the environment and the bundle. The session is not part of it (each hook names its session, and
 * the daemon answers it as a new process would), so back-to-back sessions of one project share a daemon. Left out
 * of the environment: the variables an agent sets per session or per hook (`CLAUDE_*`: the session id, the agent's
 * pid, a per-hook env file and messaging socket), which `memdir hook` never reads. A hook whose key names no
 * running daemon works in process, so a different environment can never be answered by a daemon started from
 * another one.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** The environment variable that tells a daemon its socket (set by the client that starts it, removed at start). */
export const SOCKET_ENV = "MEMDIR_HOOKD_SOCKET"

/**
 * The environment variable in which `bin/memdir-hook` (the shell client) hands `memdir hook` the key it computed,
 * so that the daemon this hook starts is the one the script's next hooks find (32 hex digits; anything else is
 * ignored). Never part of a key.
 */
export const KEY_ENV = "MEMDIR_HOOKD_KEY"

/** The daemon speaks HTTP/1.1 on its socket (so `curl --unix-socket` is a client): `POST` the hook's stdin here. */
export const HOOK_PATH = "/hook"

/**
 * The plain-text answer (for a client that does not ask for JSON, `bin/memdir-hook`): the hook's stderr, this
 * marker, then its stdout, so a shell splits it at the first marker; stderr never contains it (memdir writes it).
 */
export const STDOUT_MARKER = "\n--memdir-stdout--\n"

/** A hook's stdin larger than this is refused unread past it (a prompt with pasted files fits comfortably). */
export const HOOK_INPUT_MAX_BYTES = 4 * 1024 * 1024

/** The daemon's answer is at most this large (its request, a hook's stdin, at most `HOOK_INPUT_MAX_BYTES`). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024

/** A daemon that answered no hook for this long exits (an agent that never sent SessionEnd). */
export const IDLE_EXIT_MS = 10 * 60_000

/** Unix socket paths longer than this do not fit `sockaddr_un` on every platform: no daemon then. */
const MAX_SOCKET_PATH = 100

/**
 * Variables an agent sets per session or per hook, which `memdir hook` never reads: Claude Code 2.1.332 sets
 * `CLAUDE_CODE_SESSION_ID`, `CLAUDE_PID`, a per-hook `CLAUDE_ENV_FILE` (SessionStart only) and a messaging socket and
 * token (absent at SessionEnd), all `CLAUDE_*` (seen on real sessions); `_` is the shell's last command.
 */
const isPerSessionVariable = (name: string) => name.startsWith("CLAUDE_") || name === "_"

/** How long a daemon stays after the last session it served ended (`MEMDIR_HOOKD_LINGER_MS`, 0–600000). */
export const lingerMs = (env: NodeJS.ProcessEnv = process.env): number => {
  const value = Number(env.MEMDIR_HOOKD_LINGER_MS)
  return env.MEMDIR_HOOKD_LINGER_MS !== undefined && Number.isInteger(value) && value >= 0 && value <= 600_000
    ? value
    : 60_000
}

/** `$MEMDIR_HOME/hookd`, or undefined when MEMDIR_HOME is set but not absolute (no daemon then). */
export const daemonDirectory = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const home = env.MEMDIR_HOME
  if (home !== undefined && home !== "") return path.isAbsolute(home) ? path.join(home, "hookd") : undefined
  const userHome = env.HOME !== undefined && env.HOME !== "" ? env.HOME : os.homedir()
  return path.isAbsolute(userHome) ? path.join(userHome, ".memdir", "hookd") : undefined
}

/** What decides a hook's answer, digested: equal keys mean a daemon may answer for the hook. */
export const daemonKey = (parts: {
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly bundle: string
}): string => {
  const env = Object.entries(parts.env)
    .filter(([name, value]) =>
      value !== undefined && name !== SOCKET_ENV && name !== KEY_ENV && !isPerSessionVariable(name)
    )
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return createHash("sha256")
    .update(JSON.stringify([2, parts.args, parts.cwd, env, parts.bundle]))
    .digest("hex")
    .slice(0, 32)
}

/** The key `bin/memdir-hook` computed (`KEY_ENV`), when it is one. */
export const keyFromScript = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const key = env[KEY_ENV]
  return key !== undefined && /^[0-9a-f]{32}$/.test(key) ? key : undefined
}

/** The socket of a key in `dir`, or undefined when the path would be too long for a unix socket. */
export const socketPath = (dir: string, key: string): string | undefined => {
  const file = path.join(dir, `${key}.sock`)
  return Buffer.byteLength(file) <= MAX_SOCKET_PATH ? file : undefined
}

const myUid = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined)

/** Why `dir` is not a private directory of this user, or undefined when it is (a directory, ours, mode 0700). */
export const privateDirProblem = (dir: string): string | undefined => {
  let stat: fs.Stats
  try {
    stat = fs.lstatSync(dir)
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`
  }
  if (!stat.isDirectory()) return "is not a directory"
  if (stat.uid !== myUid()) return `is owned by uid ${stat.uid}, not by you`
  if ((stat.mode & 0o077) !== 0) return `has mode ${(stat.mode & 0o777).toString(8)}, not 700`
  return undefined
}

/** Creates `dir` (mode 0700) when missing; then the reason it is not private, or undefined. */
export const ensurePrivateDir = (dir: string): string | undefined => {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  } catch {
    // the check below says why
  }
  return privateDirProblem(dir)
}

/** Why `file` is not a socket of this user, or undefined when it is. */
export const socketProblem = (file: string): string | undefined => {
  let stat: fs.Stats
  try {
    stat = fs.lstatSync(file)
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`
  }
  if (!stat.isSocket()) return "is not a socket"
  if (stat.uid !== myUid()) return `is owned by uid ${stat.uid}, not by you`
  return undefined
}

/** Where the launcher leaves the stdin it read for a hook answered in process (hook.ts reads it from there). */
export const STDIN_STASH = Symbol.for("memdir.hook.stdin")
export type StdinStash = { readonly text: string } | { readonly error: string }

/** The stdin the launcher read, once: undefined when it read none. */
export const takeStashedStdin = (): StdinStash | undefined => {
  const store = globalThis as Record<symbol, StdinStash | undefined>
  const stash = store[STDIN_STASH]
  delete store[STDIN_STASH]
  return stash
}

/** Where the launcher leaves the bundle's directory (`dist/`), for the daemon to notice an update of it. */
export const BUNDLE_ROOT = Symbol.for("memdir.bundle.root")

/** The bundle's directory the launcher left, if any (none when the CLI runs from source). */
export const bundleRoot = (): string | undefined => (globalThis as Record<symbol, string | undefined>)[BUNDLE_ROOT]

/**
 * The identity of the bundle in `root`: its directory and its CLI entry's inode, size and modification time.
 * A daemon is chosen by it (`daemonKey`) and goes as soon as it changes (memdir updated in place).
 */
export const bundleIdentity = (root: string): string => {
  try {
    const stat = fs.statSync(path.join(root, "main.cjs"))
    return `${root}:${stat.ino}:${stat.size}:${stat.mtimeMs}`
  } catch {
    return root
  }
}

/** What the daemon answers: exactly what `memdir hook` would have written. */
export interface DaemonAnswer {
  readonly stdout: string
  readonly stderr: string
}

export const isDaemonAnswer = (value: unknown): value is DaemonAnswer =>
  typeof value === "object" && value !== null && typeof (value as DaemonAnswer).stdout === "string" &&
  typeof (value as DaemonAnswer).stderr === "string"
