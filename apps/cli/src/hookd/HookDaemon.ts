/**
 * `memdir hook --serve`: the session's hook daemon (docs/hooks.md#the-hook-daemon). Started detached by the first
 * hook of a session (hookd/HookClient.ts or bin/memdir-hook), it serves HTTP on its unix socket in the user's private
 * `hookd/` directory (`POST /hook`) and answers each hook with `answer`, the same program `memdir hook` runs in process, its services built afresh for
 * every hook (so settings and memories are read as a new process would read them); only loading the CLI is saved.
 * It keeps the sessions it has answered (a hook names its session; SessionEnd ends one) and exits `lingerMs` after
 * the last of them ended (a minute: a script's next `claude -p` finds it warm), after `IDLE_EXIT_MS` without a hook,
 * when its socket is gone or replaced, or at once when its socket cannot be made the user's own. Its socket and
 * start marker go with it.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as path from "node:path"
import {
  bundleIdentity,
  bundleRoot,
  type DaemonAnswer,
  daemonDirectory,
  ensurePrivateDir,
  HOOK_INPUT_MAX_BYTES,
  HOOK_PATH,
  IDLE_EXIT_MS,
  KEY_ENV,
  lingerMs,
  SOCKET_ENV,
  socketProblem,
  STDOUT_MARKER
} from "./HookSocket.js"

/** How often the daemon checks that its socket is still there. */
const SOCKET_CHECK_MS = 5_000

/** The socket this daemon was started for, when it lies in the user's private `hookd/` directory; else why not. */
export const socketToServe = (env: NodeJS.ProcessEnv = process.env): { socket: string } | { problem: string } => {
  const socket = env[SOCKET_ENV]
  const dir = daemonDirectory(env)
  if (socket === undefined || dir === undefined) return { problem: `${SOCKET_ENV} or the memdir home is not set` }
  if (path.dirname(socket) !== dir || !/^[0-9a-f]{32}\.sock$/.test(path.basename(socket))) {
    return { problem: `${socket} is not a hook daemon socket in ${dir}` }
  }
  const problem = ensurePrivateDir(dir)
  return problem === undefined ? { socket } : { problem: `${dir} ${problem}` }
}

/** Whether a daemon already answers at `socket`. */
const answering = (socket: string) =>
  new Promise<boolean>((resolve) => {
    const conn = net.createConnection(socket)
    conn.on("connect", () => {
      conn.destroy()
      resolve(true)
    })
    conn.on("error", () => resolve(false))
  })

const listen = (server: http.Server, socket: string) =>
  new Promise<void>((resolve, reject) => {
    // the socket is created with no permission for anyone else, then checked to be ours
    const umask = process.umask(0o077)
    server.once("error", reject)
    server.listen(socket, () => {
      server.off("error", reject)
      resolve()
    })
    process.umask(umask)
  })

/** The session and event a request's stdin names, if any. */
const hookOf = (stdin: string): { readonly session: unknown; readonly event: unknown } => {
  try {
    const input = JSON.parse(stdin)
    return { session: input?.session_id, event: input?.hook_event_name }
  } catch {
    return { session: undefined, event: undefined }
  }
}

/**
 * Serves hooks until SessionEnd or idleness. A daemon already answering at the socket means this one is not needed:
 * it returns at once. Every problem ends the daemon (hooks then answer in process); none is reported but on its
 * stderr, which is the null device.
 */
export const serveHooks = <R>(answer: (stdin: string) => Effect.Effect<DaemonAnswer, never, R>) =>
  Effect.gen(function*() {
    const target = socketToServe()
    delete process.env[SOCKET_ENV]
    if ("problem" in target) return yield* Effect.logWarning(`memdir hook daemon not started: ${target.problem}`)
    const { socket } = target
    // the shell client's key was for the hook that started this daemon; its own hooks do not inherit it
    delete process.env[KEY_ENV]
    const root = bundleRoot()
    const bundle = root === undefined ? undefined : bundleIdentity(root)
    const marker = socket.replace(/\.sock$/, ".start")
    const context = yield* Effect.context<R>()
    // interrupted (SIGTERM, SIGINT: the CLI interrupts its main fiber), the daemon closes as after its last session
    let stop: (() => void) | undefined
    let interrupted = false
    const serve = async (): Promise<void> => {
      if (socketProblem(socket) === undefined && (await answering(socket))) return
      fs.rmSync(socket, { force: true })
      let idle: ReturnType<typeof setTimeout> | undefined
      const server = http.createServer((request, response) => {
        clearTimeout(idle)
        const reply = (status: number, body: string, type = "text/plain; charset=utf-8") => {
          if (response.headersSent) return
          response.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) })
          response.end(body)
        }
        if (request.method !== "POST" || request.url !== HOOK_PATH) {
          request.resume()
          return reply(404, `POST the hook's stdin to ${HOOK_PATH}\n`)
        }
        const chunks: Array<Buffer> = []
        let size = 0
        request.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size <= HOOK_INPUT_MAX_BYTES) chunks.push(chunk)
        })
        request.on("error", () => {})
        request.on("end", () => {
          if (size > HOOK_INPUT_MAX_BYTES) {
            return reply(413, `a hook's stdin is at most ${HOOK_INPUT_MAX_BYTES} bytes\n`)
          }
          // memdir updated in place: this daemon runs the old code; it goes, and the next hook starts the new one
          if (root !== undefined && bundleIdentity(root) !== bundle) {
            reply(503, "memdir was updated; this hook daemon is closing\n")
            return close()
          }
          const stdin = Buffer.concat(chunks).toString("utf8")
          const hook = hookOf(stdin)
          const ended = hook.event === "SessionEnd"
          if (typeof hook.session === "string") {
            if (ended) sessions.delete(hook.session)
            else sessions.add(hook.session)
          }
          const json = request.headers.accept === "application/json"
          void Effect.runPromiseWith(context)(answer(stdin)).then((answered) => {
            if (json) reply(200, JSON.stringify(answered), "application/json")
            else if (answered.stderr.includes(STDOUT_MARKER)) reply(409, "the answer does not fit the text form\n")
            else reply(200, answered.stderr + STDOUT_MARKER + answered.stdout)
            restartIdle(ended && sessions.size === 0 ? lingerMs() : IDLE_EXIT_MS)
          })
        })
      })
      const sessions = new Set<string>()
      const restartIdle = (ms: number = IDLE_EXIT_MS) => {
        clearTimeout(idle)
        idle = setTimeout(close, ms)
      }
      // which file is this daemon's socket: its inode and its birth, since a removed socket's inode number comes back
      // for the next file made (a later daemon's socket), which this daemon must neither keep nor remove
      let identity: string | undefined
      const identityOf = (stat: fs.Stats | undefined) =>
        stat === undefined ? undefined : `${stat.ino}:${stat.birthtimeMs || stat.ctimeMs}`
      const current = () => identityOf(fs.lstatSync(socket, { throwIfNoEntry: false }))
      const closed = new Promise<void>((resolve) => server.on("close", resolve))
      let closing = false
      const close = () => {
        if (closing) return
        closing = true
        clearTimeout(idle)
        // the socket goes only while it is still this daemon's (a later daemon may have replaced it)
        if (identity !== undefined && current() === identity) {
          fs.rmSync(socket, { force: true })
        }
        server.close()
      }
      try {
        await listen(server, socket)
        const stat = fs.lstatSync(socket)
        if (socketProblem(socket) !== undefined || (stat.mode & 0o077) !== 0) throw new Error("not private")
        identity = identityOf(stat)
      } catch {
        fs.rmSync(marker, { force: true })
        server.close()
        return
      }
      fs.rmSync(marker, { force: true })
      stop = close
      if (interrupted) close()
      else restartIdle()
      // a socket removed or replaced (its directory deleted, a newer daemon) leaves this daemon unreachable: it goes
      const watch = setInterval(() => {
        if (current() !== identity) close()
      }, SOCKET_CHECK_MS)
      await closed
      clearInterval(watch)
    }
    yield* Effect.callback<void>((resume) => {
      void serve().finally(() => resume(Effect.void))
      return Effect.sync(() => {
        interrupted = true
        stop?.()
      })
    })
  })
