/**
 * The hook daemon (docs/hooks.md#the-hook-daemon), end to end with the bundled CLI: the first hook of a session
 * starts it, the session's later hooks are answered through its socket with exactly what `memdir hook` answers in
 * process, and it goes with SessionEnd. The client never trusts a socket that is not the user's (a directory open to
 * others, another user's socket), and never fails or hangs the hook: a dead daemon, one that breaks off, one that
 * does not answer, and the hook is answered in process or, past the guard, with nothing. All of it holds for both
 * clients: `memdir hook` (the launcher, in Node) and `bin/memdir-hook` (a shell script with curl, what install writes).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath, type CliRun, scratchHomeEnv } from "./support/cli.js"
import { processesIn, removeScratch } from "./support/scratch.js"

let scratch: string
/**
 * A copy of the package as npm installs it (bin/, dist/): a daemon is chosen by the bundle it runs
 * (HookSocket.daemonKey), and the shared one may be rebuilt by another run while this file runs.
 */
let cli: string
/** The copy's `bin/memdir-hook`; its fallback runs the copy's `bin/memdir.cjs` with the `node` first on PATH. */
let hookScript: string
const cliBin = path.join(path.dirname(cliPath), "..", "bin")
/** Node's own directory first on PATH, for `bin/memdir-hook`'s `node` (the machine's may be older). */
const PATH = [path.dirname(process.execPath), process.env.PATH ?? ""].join(path.delimiter)

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-hookd-")))
  const dist = path.join(scratch, "dist")
  fs.cpSync(path.dirname(cliPath), dist, { recursive: true })
  cli = path.join(dist, path.basename(cliPath))
  fs.mkdirSync(path.join(scratch, "bin"))
  for (const file of ["memdir.cjs", "memdir-hook"]) {
    fs.copyFileSync(path.join(cliBin, file), path.join(scratch, "bin", file))
  }
  hookScript = path.join(scratch, "bin", "memdir-hook")
  fs.chmodSync(hookScript, 0o755)
})

type Client = "memdir hook" | "memdir-hook"
const CLIENTS: ReadonlyArray<Client> = ["memdir hook", "memdir-hook"]

// background jobs and a lingering hook daemon may still be writing into the tree
afterAll(() => removeScratch(scratch))

const MEMORY =
  "---\nname: Database tests\ndescription: integration tests must hit a real postgres database, never mocks\n" +
  "type: feedback\n---\n\nUse the docker compose postgres.\n"
const PROMPT = "should the new integration tests mock the postgres database?"

/**
 * A scratch home with a git project and one memory; `run` runs `memdir hook` there with `input` on stdin. Its daemon
 * goes as soon as the last session ended (`MEMDIR_HOOKD_LINGER_MS=0`) unless `extraEnv` says otherwise.
 */
const makeUser = (client: Client, name: string, extraEnv: Record<string, string> = {}, script = () => hookScript) => {
  const home = path.join(scratch, `${client === "memdir hook" ? "node" : "sh"}-${name}`)
  const project = path.join(home, "shop")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  const memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
  fs.mkdirSync(memoryDir, { recursive: true })
  fs.writeFileSync(path.join(memoryDir, "feedback_database_tests.md"), MEMORY)
  fs.writeFileSync(
    path.join(memoryDir, "MEMORY.md"),
    "- [Database tests](feedback_database_tests.md) — integration tests must hit a real postgres database\n"
  )
  const hookd = path.join(home, ".memdir", "hookd")
  const run = (input: string, env: Record<string, string> = {}) =>
    Effect.callback<CliRun>((resume) => {
      execFile(
        client === "memdir hook" ? process.execPath : script(),
        client === "memdir hook" ? [cli, "hook"] : [],
        {
          cwd: project,
          env: scratchHomeEnv(home, {
            PATH,
            MEMDIR_HOOK_GUARD_MS: "120000",
            MEMDIR_HOOKD_LINGER_MS: "0",
            ...extraEnv,
            ...env
          }),
          encoding: "utf8"
        },
        (error, stdout, stderr) => {
          const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
          resume(Effect.succeed({ status, stdout, stderr }))
        }
      ).stdin?.end(input)
    })
  const event = (session: string, name: string) =>
    JSON.stringify({
      session_id: session,
      transcript_path: null,
      cwd: project,
      hook_event_name: name,
      ...(name === "UserPromptSubmit" ? { prompt: PROMPT } : name === "SessionStart" ? { source: "startup" } : {})
    })
  return { home, project, hookd, run, event }
}

/** The sockets in `dir` (none when it does not exist). */
const socketsIn = (dir: string) => fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".sock")) : []

/** Waits (polling, no timing asserted) until `check` holds; fails after a minute. */
const until = (what: string, check: () => boolean) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 60_000
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`still not ${what} after a minute`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })

/** Starts the session's daemon with its SessionStart; its socket path. */
const startSession = (user: ReturnType<typeof makeUser>, session: string) =>
  Effect.gen(function*() {
    const start = yield* user.run(user.event(session, "SessionStart"))
    assert.strictEqual(start.status, 0, start.stderr)
    assert.include(start.stdout, "# Memory")
    yield* until("listening", () => socketsIn(user.hookd).length === 1)
    return path.join(user.hookd, socketsIn(user.hookd)[0]!)
  })

/** Ends the real daemon at `socket` (SessionEnd through it) and waits until it is gone. */
const endSession = (user: ReturnType<typeof makeUser>, session: string, socket: string) =>
  Effect.gen(function*() {
    const end = yield* user.run(user.event(session, "SessionEnd"))
    assert.strictEqual(end.status, 0, end.stderr)
    assert.strictEqual(end.stdout, "")
    yield* until("gone", () => !fs.existsSync(socket))
  })

/** A stand-in daemon at `socket`, speaking HTTP as the real one: `onRequest` decides what it does with a hook. */
const fakeDaemon = (socket: string, onRequest: http.RequestListener) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<http.Server>((resolve) => {
        const server = http.createServer(onRequest)
        const umask = process.umask(0o077)
        server.listen(socket, () => resolve(server))
        process.umask(umask)
      })
    ),
    (server) => Effect.sync(() => server.close())
  )

/** The text form's marker between the hook's stderr and stdout (HookSocket.STDOUT_MARKER). */
const STDOUT_MARKER = "\n--memdir-stdout--\n"

/** Answers every hook with `stdout` and `stderr`, in the form the client asked for (JSON or text). */
const answers = (stdout: string, stderr = ""): http.RequestListener => (request, response) => {
  request.resume()
  request.on("end", () =>
    response.end(
      request.headers.accept === "application/json"
        ? JSON.stringify({ stdout, stderr })
        : stderr + STDOUT_MARKER + stdout
    ))
}

/** A daemon that answers every hook with a marker no real memdir answer has. */
const FAKE = "{\"from\":\"the socket\"}\n"
const answersFake = answers(FAKE)

describe.each(CLIENTS)("%s: the hook daemon", (client) => {
  it.live(
    "the first hook starts it; later hooks get the in-process answer byte for byte; the last SessionEnd ends it",
    () =>
      Effect.gen(function*() {
        const user = makeUser(client, "lifecycle")
        // the answer in process, for a session of its own
        const alone = yield* user.run(user.event("in-process-1", "UserPromptSubmit"), { MEMDIR_HOOK_DAEMON: "off" })
        assert.include(alone.stdout, "Use the docker compose postgres.")
        assert.deepStrictEqual(socketsIn(user.hookd), [], "MEMDIR_HOOK_DAEMON=off starts no daemon")

        const socket = yield* startSession(user, "daemon-1")
        // the user's own: a 0700 directory, a socket no one else may open
        assert.strictEqual(fs.statSync(user.hookd).mode & 0o777, 0o700)
        assert.strictEqual(fs.lstatSync(socket).mode & 0o077, 0)
        const prompt = yield* user.run(user.event("daemon-1", "UserPromptSubmit"))
        assert.strictEqual(prompt.stdout, alone.stdout)
        // the session's record is kept as in process: the same memory is not injected twice
        const again = yield* user.run(user.event("daemon-1", "UserPromptSubmit"))
        assert.strictEqual(again.stdout, "")
        yield* endSession(user, "daemon-1", socket)
        assert.deepStrictEqual(fs.readdirSync(user.hookd), [], "no socket, no start marker left")
      }),
    120_000
  )

  it.live(
    "it stays a while after the last session ended, for the project's next session",
    () =>
      Effect.gen(function*() {
        const user = makeUser(client, "linger", { MEMDIR_HOOKD_LINGER_MS: "600000" })
        const socket = yield* startSession(user, "linger-1")
        const end = yield* user.run(user.event("linger-1", "SessionEnd"))
        assert.strictEqual(end.status, 0, end.stderr)
        assert.isTrue(fs.existsSync(socket), "still there after SessionEnd")
        // the next session's SessionStart gets its answer from it, and starts no other
        const next = yield* user.run(user.event("linger-2", "SessionStart"))
        assert.include(next.stdout, "# Memory")
        assert.deepStrictEqual(socketsIn(user.hookd), [path.basename(socket)])
        // its socket removed, the daemon goes (within its next check)
        fs.rmSync(user.hookd, { recursive: true, force: true })
      }),
    120_000
  )

  it.live(
    "a hook is answered through the daemon's socket, also in the project's next session",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const user = makeUser(client, "through")
        const socket = yield* startSession(user, "through-1")
        yield* endSession(user, "through-1", socket)
        yield* fakeDaemon(socket, answersFake)
        const prompt = yield* user.run(user.event("through-1", "UserPromptSubmit"))
        assert.strictEqual(prompt.stdout, FAKE)
        // the project's next session, with the variables Claude Code sets per session, is answered by the same daemon
        const next = yield* user.run(user.event("through-2", "SessionStart"), {
          CLAUDE_CODE_SESSION_ID: "through-2",
          CLAUDE_ENV_FILE: "/tmp/x.sh"
        })
        assert.strictEqual(next.stdout, FAKE)
        // another environment is another daemon: that one is started for it and answers (the real memories)
        const other = yield* user.run(user.event("through-3", "UserPromptSubmit"), { MEMDIR_TEAM_MEMORY: "0" })
        assert.include(other.stdout, "Use the docker compose postgres.")
      })),
    120_000
  )

  it.live("a socket directory others can enter is not used: the hook answers in process", () =>
    Effect.scoped(Effect.gen(function*() {
      const user = makeUser(client, "open-dir")
      const socket = yield* startSession(user, "open-1")
      yield* endSession(user, "open-1", socket)
      yield* fakeDaemon(socket, answersFake)
      fs.chmodSync(user.hookd, 0o755)
      const prompt = yield* user.run(user.event("open-1", "UserPromptSubmit"))
      assert.include(prompt.stdout, "Use the docker compose postgres.")
      assert.notInclude(prompt.stdout, "the socket")
      // a daemon told to listen there refuses too, and leaves no socket
      const served = yield* Effect.callback<CliRun>((resume) => {
        execFile(
          process.execPath,
          [cli, "hook", "--serve"],
          {
            cwd: user.project,
            env: scratchHomeEnv(user.home, { MEMDIR_HOOKD_SOCKET: path.join(user.hookd, `${"a".repeat(32)}.sock`) }),
            encoding: "utf8"
          },
          (error, stdout, stderr) => resume(Effect.succeed({ status: error === null ? 0 : -1, stdout, stderr }))
        ).stdin?.end()
      })
      assert.strictEqual(served.status, 0, served.stderr)
      assert.strictEqual(served.stdout, "")
      assert.include(served.stderr, "has mode 755, not 700")
      assert.isFalse(fs.existsSync(path.join(user.hookd, `${"a".repeat(32)}.sock`)))
    })))

  it.live.skipIf(process.getuid?.() !== 0)(
    "another user's socket is not used (run as root: the socket chowned)",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const user = makeUser(client, "other-owner")
        const socket = yield* startSession(user, "owner-1")
        yield* endSession(user, "owner-1", socket)
        yield* fakeDaemon(socket, answersFake)
        fs.lchownSync(socket, 65534, 65534)
        const prompt = yield* user.run(user.event("owner-1", "UserPromptSubmit"))
        assert.include(prompt.stdout, "Use the docker compose postgres.")
        assert.notInclude(prompt.stdout, "the socket")
      }))
  )

  it.live(
    "stopped by SIGTERM or Ctrl-C, it takes its socket with it",
    () =>
      Effect.gen(function*() {
        const user = makeUser(client, "signal", { MEMDIR_HOOKD_LINGER_MS: "600000" })
        for (const signal of ["SIGTERM", "SIGINT"] as const) {
          const socket = yield* startSession(user, `signal-${signal}`)
          const daemons = processesIn(user.home)
          assert.lengthOf(daemons, 1, "the daemon is the one process left in the user's home")
          process.kill(daemons[0]!, signal)
          yield* until("gone", () => processesIn(user.home).length === 0)
          assert.isFalse(fs.existsSync(socket), `no socket left after ${signal}`)
          assert.deepStrictEqual(fs.readdirSync(user.hookd), [])
        }
      }),
    120_000
  )

  it.live(
    "a dead daemon's socket, or one that breaks off: the hook answers in process",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const user = makeUser(client, "dead")
        const socket = yield* startSession(user, "dead-1")
        yield* endSession(user, "dead-1", socket)
        // a socket left by a daemon that was killed: nothing accepts on it
        const holder = spawn(process.execPath, [
          "-e",
          `require("net").createServer().listen(${JSON.stringify(socket)})`
        ])
        yield* until("bound", () => fs.existsSync(socket))
        holder.kill("SIGKILL")
        yield* Effect.promise(() => new Promise((resolve) => holder.on("exit", resolve)))
        assert.isTrue(fs.existsSync(socket), "the dead daemon's socket is still there")
        const prompt = yield* user.run(user.event("dead-1", "UserPromptSubmit"))
        assert.include(prompt.stdout, "Use the docker compose postgres.")

        // the hook above started a new daemon in its place: end it, then put one there that hangs up on every client
        // (the dead daemon's file counts as a socket: the new daemon listens once its start marker is gone)
        yield* until("listening", () =>
          !fs.existsSync(socket.replace(/\.sock$/, ".start")) && socketsIn(user.hookd).length === 1)
        yield* endSession(user, "dead-1", socket)
        yield* fakeDaemon(socket, (request) =>
          request.socket.destroy())
        const broken = yield* user.run(user.event("dead-1", "SessionStart"))
        assert.include(broken.stdout, "# Memory")
      })),
    120_000
  )

  it.live(
    "a daemon that never answers: nothing, after the hook's guard, and one line on stderr",
    () =>
      Effect.scoped(Effect.gen(function*() {
        // the guard is part of the environment the daemon is chosen by: the session runs with it throughout
        const user = makeUser(client, "silent", { MEMDIR_HOOK_GUARD_MS: "10000" })
        const socket = yield* startSession(user, "silent-1")
        yield* endSession(user, "silent-1", socket)
        const held: Array<net.Socket> = []
        yield* fakeDaemon(socket, (request) => held.push(request.socket))
        const prompt = yield* user.run(user.event("silent-1", "UserPromptSubmit"))
        assert.strictEqual(prompt.status, 0)
        assert.strictEqual(prompt.stdout, "")
        assert.include(prompt.stderr, "memdir hook: no answer within 10000 ms; answered with nothing")
        for (const conn of held) conn.destroy()
      })),
    120_000
  )
})

/** A directory of links to the given tools (found on PATH) and a `node` that appends a line to `log` when run. */
const toolsDir = (dir: string, tools: ReadonlyArray<string>, log: string) => {
  fs.mkdirSync(dir, { recursive: true })
  for (const tool of tools) {
    const found = execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim()
    fs.symlinkSync(found, path.join(dir, tool))
  }
  fs.writeFileSync(
    path.join(dir, "node"),
    `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
    { mode: 0o755 }
  )
  return dir
}

/** The lines a logging `node` (`toolsDir`) wrote: one per Node started by the hook script. */
const nodeRuns = (log: string) => fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter(Boolean) : []

/**
 * One session through `memdir-hook` (SessionStart, a prompt, SessionEnd) with only `tools` and a logging `node` on
 * PATH: the Node processes it started, after its first hook and in all.
 */
const scriptSession = (name: string, tools: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const log = path.join(scratch, `sh-${name}.log`)
    const user = makeUser("memdir-hook", name, { PATH: toolsDir(path.join(scratch, `sh-${name}-tools`), tools, log) })
    const socket = yield* startSession(user, `${name}-1`)
    const afterStart = nodeRuns(log)
    const prompt = yield* user.run(user.event(`${name}-1`, "UserPromptSubmit"))
    assert.include(prompt.stdout, "Use the docker compose postgres.")
    yield* endSession(user, `${name}-1`, socket)
    return { afterStart, all: nodeRuns(log) }
  })

const cliBinCopy = () => path.join(scratch, "bin", "memdir.cjs")

describe("bin/memdir-hook", () => {
  it.live(
    "the first hook starts the daemon itself, and every hook is answered by it: the only Node started is the daemon",
    () =>
      Effect.gen(function*() {
        const { all } = yield* scriptSession(
          "no-node",
          ["curl", "sha256sum", "grep", "cat", "ls", "mkdir", "setsid", "sleep", "git"]
        )
        assert.deepStrictEqual(all, [`${cliBinCopy()} hook --serve`])
      }),
    120_000
  )

  it.live(
    "without setsid the first hook is memdir hook's, which starts the daemon; the later ones start no Node",
    () =>
      Effect.gen(function*() {
        const { afterStart, all } = yield* scriptSession(
          "no-setsid",
          ["curl", "sha256sum", "grep", "cat", "ls", "mkdir", "sleep", "git"]
        )
        assert.deepStrictEqual(afterStart, [`${cliBinCopy()} hook`])
        assert.deepStrictEqual(all, afterStart, "UserPromptSubmit and SessionEnd: answered by the daemon, no Node")
      }),
    120_000
  )

  it.live(
    "a daemon that dies before it listens is not waited for: memdir hook starts one of its own",
    () =>
      Effect.gen(function*() {
        const log = path.join(scratch, "sh-dead-start.log")
        const tools = toolsDir(
          path.join(scratch, "sh-dead-start-tools"),
          ["curl", "sha256sum", "grep", "cat", "ls", "mkdir", "setsid", "sleep", "rm", "git"],
          log
        )
        // this PATH's node cannot serve: the daemon the script starts exits at once
        fs.writeFileSync(
          path.join(tools, "node"),
          `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\ncase " $* " in *" --serve "*) exit 1 ;; esac\n` +
            `exec ${JSON.stringify(process.execPath)} "$@"\n`
        )
        const user = makeUser("memdir-hook", "dead-start", { PATH: tools })
        // memdir hook finds no start marker left behind, so it starts its own daemon (with its own Node) at once
        const socket = yield* startSession(user, "dead-start-1")
        assert.deepStrictEqual(nodeRuns(log), [`${cliBinCopy()} hook --serve`, `${cliBinCopy()} hook`])
        yield* endSession(user, "dead-start-1", socket)
      }),
    120_000
  )

  it.live(
    "without curl it is memdir hook: every hook starts Node and is answered as ever",
    () =>
      Effect.gen(function*() {
        const { all } = yield* scriptSession("no-curl", ["sha256sum", "grep", "cat", "ls", "git"])
        assert.deepStrictEqual(all, [`${cliBinCopy()} hook`, `${cliBinCopy()} hook`, `${cliBinCopy()} hook`])
      }),
    120_000
  )

  it.live(
    "the daemon's stderr and stdout are passed on byte for byte, trailing newlines and look-alike markers included",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const user = makeUser("memdir-hook", "bytes")
        const socket = yield* startSession(user, "bytes-1")
        yield* endSession(user, "bytes-1", socket)
        const stdout = `{"a":1}${STDOUT_MARKER}two\n\n`
        const stderr = "memdir hook: a warning\nand a second line\n"
        yield* fakeDaemon(socket, answers(stdout, stderr))
        const prompt = yield* user.run(user.event("bytes-1", "UserPromptSubmit"))
        assert.strictEqual(prompt.status, 0)
        assert.strictEqual(prompt.stdout, stdout)
        assert.strictEqual(prompt.stderr, stderr)
      })),
    120_000
  )

  it.live(
    "memdir updated in place: its old daemon goes at the next hook, which the new memdir answers",
    () =>
      Effect.gen(function*() {
        const pkg = path.join(scratch, "updated")
        for (const part of ["bin", "dist"]) {
          fs.cpSync(path.join(scratch, part), path.join(pkg, part), { recursive: true })
        }
        const user = makeUser("memdir-hook", "updated", {}, () => path.join(pkg, "bin", "memdir-hook"))
        yield* startSession(user, "updated-1")
        const [old] = processesIn(user.home)
        assert.isDefined(old)
        // a new version over the old one (npm i -g): the CLI entry is another file
        const main = path.join(pkg, "dist", "main.cjs")
        fs.writeFileSync(`${main}.new`, fs.readFileSync(main))
        fs.renameSync(`${main}.new`, main)
        const next = yield* user.run(user.event("updated-2", "SessionStart"))
        assert.include(next.stdout, "# Memory")
        yield* until("served by a new daemon", () => {
          const pids = processesIn(user.home)
          return pids.length === 1 && pids[0] !== old && socketsIn(user.hookd).length === 1
        })
        fs.rmSync(user.hookd, { recursive: true, force: true })
      }),
    120_000
  )
})
