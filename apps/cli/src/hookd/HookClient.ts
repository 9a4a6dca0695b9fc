/**
 * The hook client (docs/hooks.md#the-hook-daemon): what `memdir hook` does before any of the CLI is loaded. Most
 * of a hook's time is Node loading and compiling memdir, every time; the project's hook daemon has it loaded already.
 * So the launcher reads the hook's stdin, asks the daemon (`HookSocket`) and writes its answer, which is
 * byte for byte what the hook would have written. It fails open: no daemon, a socket that is not the user's, a
 * daemon that does not accept within `CONNECT_TIMEOUT_MS` or breaks off, and the hook is answered in process as
 * before (`fallBack`), with the stdin already read. A daemon that accepted and then does not answer within the
 * hook's guard gets the guard's answer: nothing, and one stderr line.
 *
 * SessionStart (or a UserPromptSubmit with no daemon) starts the daemon, detached, and waits for it up to
 * `FIRST_WAIT_MS`; a hook that finds the daemon starting waits for it up to `START_WAIT_MS`, about what an answer in
 * process costs. Either answers in process when the daemon is not there in time. Plain Node: it is part of the
 * launcher.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import {
  daemonDirectory,
  daemonKey,
  ensurePrivateDir,
  HOOK_INPUT_MAX_BYTES,
  HOOK_PATH,
  isDaemonAnswer,
  keyFromScript,
  MAX_MESSAGE_BYTES,
  SOCKET_ENV,
  socketPath,
  socketProblem,
  STDIN_STASH,
  type StdinStash
} from "./HookSocket.js"

/** A daemon that does not accept within this is taken for absent. */
const CONNECT_TIMEOUT_MS = 300
/** A hook that finds the daemon starting waits this long for it. */
const START_WAIT_MS = 500
/**
 * The hook that started the daemon waits this long for it: loading the CLI beside a daemon that is loading it too
 * costs both of them (two cores, and the agent's own work), so the first hook is answered by the daemon it started,
 * and in process only when that daemon is not there in time.
 */
const FIRST_WAIT_MS = 1_000
/** A start marker older than this belongs to a daemon that never came up. */
const START_STALE_MS = 5_000
/** The hook's guard (hook.ts `HOOK_GUARD_MS`, `MEMDIR_HOOK_GUARD_MS`). */
const guardMs = (): number => {
  const value = Number(process.env.MEMDIR_HOOK_GUARD_MS)
  return Number.isInteger(value) && value >= 1 && value <= 600_000 ? value : 8_000
}

/** The events a daemon answers; the ones that start it. */
const EVENTS = new Set(["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"])
const STARTERS = new Set(["SessionStart", "UserPromptSubmit"])

/** The arguments after `hook` when argv is a hook the client may answer; undefined for anything else. */
export const hookClientArgs = (argv: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  if (argv[2] !== "hook" || process.platform === "win32") return undefined
  const args = argv.slice(3)
  const internal = ["--background", "--serve", "--help", "-h", "--version", "--completions"]
  return args.some((arg) => internal.includes(arg) || arg.startsWith("--completions")) ? undefined : args
}

const readStdin = (): Promise<StdinStash | undefined> =>
  new Promise((resolve) => {
    const stdin = process.stdin
    if (stdin.isTTY) return resolve(undefined)
    const chunks: Array<Buffer> = []
    let size = 0
    stdin.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > HOOK_INPUT_MAX_BYTES) {
        stdin.destroy()
        resolve({ error: `stdin is over ${HOOK_INPUT_MAX_BYTES} bytes` })
      } else {
        chunks.push(chunk)
      }
    })
    stdin.on("end", () => resolve({ text: Buffer.concat(chunks).toString("utf8") }))
    stdin.on("error", (error) => resolve({ error: error.message }))
  })

/** The session and event of a hook input, when it is one a daemon may answer. */
const sessionOf = (text: string): { readonly event: string } | undefined => {
  try {
    const input = JSON.parse(text)
    const sessionId = input?.session_id
    const event = input?.hook_event_name
    return typeof sessionId === "string" && sessionId.length <= 256 && typeof event === "string" && EVENTS.has(event)
      ? { event }
      : undefined
  } catch {
    return undefined
  }
}

type Outcome = { readonly _tag: "answered" } | { readonly _tag: "absent" } | { readonly _tag: "failed" }

/**
 * The request for the daemon: HTTP/1.1 by hand (`node:http` costs the client ~25 ms to load, a third of what the
 * daemon saves), one request per connection, the answer as JSON.
 */
const httpRequest = (stdin: string): Buffer => {
  const body = Buffer.from(stdin, "utf8")
  const head = `POST ${HOOK_PATH} HTTP/1.1\r\nHost: memdir\r\nAccept: application/json\r\n` +
    `Content-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`
  return Buffer.concat([Buffer.from(head, "latin1"), body])
}

/** The body of a `200` answer with its length given (how the daemon answers), or undefined for anything else. */
export const httpAnswerBody = (response: Buffer): Buffer | undefined => {
  const end = response.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const head = response.subarray(0, end).toString("latin1").split("\r\n")
  if (!/^HTTP\/1\.[01] 200 /.test(head[0] ?? "")) return undefined
  const length = head.map((line) => /^content-length:\s*(\d+)\s*$/i.exec(line)?.[1]).find((n) => n !== undefined)
  const body = response.subarray(end + 4)
  return length !== undefined && body.length === Number(length) ? body : undefined
}

/** Asks the daemon at `socket`; "absent" when nothing accepts, "failed" when it broke off. */
const ask = (socket: string, stdin: string): Promise<Outcome> =>
  new Promise((resolve) => {
    const conn = net.createConnection(socket)
    const chunks: Array<Buffer> = []
    let size = 0
    let connected = false
    let done = false
    const finish = (outcome: Outcome) => {
      if (done) return
      done = true
      clearTimeout(connectTimer)
      clearTimeout(answerTimer)
      conn.destroy()
      resolve(outcome)
    }
    const connectTimer = setTimeout(() => finish({ _tag: "absent" }), CONNECT_TIMEOUT_MS)
    let answerTimer: ReturnType<typeof setTimeout> | undefined
    conn.on("connect", () => {
      connected = true
      clearTimeout(connectTimer)
      const guard = guardMs()
      answerTimer = setTimeout(() => {
        process.stderr.write(`memdir hook: no answer within ${guard} ms; answered with nothing\n`)
        finish({ _tag: "answered" })
      }, guard)
      // not half-closed: an HTTP server takes that for a client gone; it closes after answering (`Connection: close`)
      conn.write(httpRequest(stdin))
    })
    conn.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_MESSAGE_BYTES) finish({ _tag: "failed" })
      else chunks.push(chunk)
    })
    conn.on("end", () => {
      const body = httpAnswerBody(Buffer.concat(chunks))
      let answer: unknown
      try {
        answer = body === undefined ? undefined : JSON.parse(body.toString("utf8"))
      } catch {
        return finish({ _tag: "failed" })
      }
      if (!isDaemonAnswer(answer)) return finish({ _tag: "failed" })
      process.stdout.write(answer.stdout)
      process.stderr.write(answer.stderr)
      finish({ _tag: "answered" })
    })
    conn.on("error", () => finish({ _tag: connected ? "failed" : "absent" }))
  })

/** Starts the daemon for `socket`, detached, unless another hook is starting it; true when one is starting. */
const startDaemon = (socket: string, args: ReadonlyArray<string>): "started" | "starting" | "failed" => {
  const marker = socket.replace(/\.sock$/, ".start")
  try {
    fs.writeFileSync(marker, String(process.pid), { flag: "wx", mode: 0o600 })
  } catch {
    try {
      const stat = fs.lstatSync(marker)
      if (Date.now() - stat.mtimeMs < START_STALE_MS) return "starting"
      fs.rmSync(marker, { force: true })
      fs.writeFileSync(marker, String(process.pid), { flag: "wx", mode: 0o600 })
    } catch {
      return "failed"
    }
  }
  try {
    const script = process.argv[1]
    if (script === undefined) return "failed"
    const child = spawn(process.execPath, [...process.execArgv, script, "hook", ...args, "--serve"], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, [SOCKET_ENV]: socket }
    })
    child.on("error", () => fs.rmSync(marker, { force: true }))
    child.unref()
    return "started"
  } catch {
    fs.rmSync(marker, { force: true })
    return "failed"
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Waits up to `ms` for a daemon that is starting to be there. */
const waitForSocket = async (socket: string, ms: number): Promise<boolean> => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (socketProblem(socket) === undefined) return true
    await sleep(10)
  }
  return false
}

/**
 * Answers the hook through the daemon. False when the hook is to be answered in process: the stdin it
 * read (if any) is then in `globalThis[STDIN_STASH]`.
 */
export const runHookClient = async (args: ReadonlyArray<string>, bundle: string): Promise<boolean> => {
  const stdin = await readStdin()
  // kept for the CLI at once: whatever happens below, a hook answered in process has its input
  if (stdin !== undefined) (globalThis as Record<symbol, unknown>)[STDIN_STASH] = stdin
  const fallBack = () => false
  if (stdin === undefined || !("text" in stdin)) return fallBack()
  const hook = sessionOf(stdin.text)
  const dir = daemonDirectory()
  if (hook === undefined || dir === undefined) return fallBack()
  // the key bin/memdir-hook computed, so the daemon started here is the one its next hooks ask
  const key = keyFromScript() ?? daemonKey({ args, cwd: process.cwd(), env: process.env, bundle })
  const socket = socketPath(dir, key)
  if (socket === undefined || ensurePrivateDir(dir) !== undefined) return fallBack()
  if (socketProblem(socket) === undefined) {
    const outcome = await ask(socket, stdin.text)
    if (outcome._tag === "answered") return true
    if (outcome._tag === "failed") return fallBack()
  }
  if (!STARTERS.has(hook.event)) return fallBack()
  const start = startDaemon(socket, args)
  if (start !== "failed" && (await waitForSocket(socket, start === "started" ? FIRST_WAIT_MS : START_WAIT_MS))) {
    const outcome = await ask(socket, stdin.text)
    if (outcome._tag === "answered") return true
  }
  return fallBack()
}
