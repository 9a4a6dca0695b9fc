/**
 * `memdir ui` in system tests: the bundled CLI started as a child process (`memdir ui --no-open`), its URL read from
 * stdout; plain HTTP requests with any Host, Origin or cookie; and Debian's Chromium (`/usr/bin/chromium`) driven by
 * playwright-core, which uses the installed browser and downloads none (docs/development.md).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { type BrowserContext, chromium } from "playwright-core"
import { cliPath, scratchHomeEnv } from "./cli.js"

export const CHROMIUM = "/usr/bin/chromium"

export interface RunningUi {
  /** The URL printed, token included. */
  readonly url: string
  /** `http://127.0.0.1:PORT` */
  readonly origin: string
  readonly port: number
  readonly token: string
  readonly child: ChildProcess
  /** stderr so far. */
  readonly stderr: () => string
  /** How the process ended (once it has). */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** SIGTERM unless it ended already; resolves when it has. */
  readonly stop: () => Promise<void>
}

/** Starts `memdir ui --no-open --cwd project …args` (`open`: without `--no-open`) and waits for its URL on stdout. */
export const startUi = (
  options: {
    readonly project: string
    readonly home: string
    readonly args?: ReadonlyArray<string>
    readonly env?: Record<string, string>
    /** Let it open a browser (default: `--no-open`). */
    readonly open?: boolean
  }
): Promise<RunningUi> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        cliPath,
        "ui",
        ...(options.open === true ? [] : ["--no-open"]),
        "--cwd",
        options.project,
        ...(options.args ?? [])
      ],
      { cwd: options.project, env: scratchHomeEnv(options.home, options.env), stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.on("exit", (code, signal) => done({ code, signal }))
    )
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    void exited.then(({ code }) => reject(new Error(`memdir ui exited (${code}) before printing its URL:\n${stderr}`)))
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const line = stdout.split("\n")[0]
      if (!stdout.includes("\n") || line === undefined) return
      const url = new URL(line)
      resolve({
        url: line,
        origin: url.origin,
        port: Number(url.port),
        token: url.searchParams.get("token") ?? "",
        child,
        stderr: () => stderr,
        exited,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
          await exited
        }
      })
    })
  })

export interface Reply {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** One HTTP request to 127.0.0.1:port with exactly these headers (Host included: fetch would not send another). */
export const request = (
  port: number,
  options: {
    readonly method?: string
    readonly path?: string
    readonly headers?: Record<string, string>
    readonly body?: string
  } = {}
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path: options.path ?? "/",
        headers: { Host: `127.0.0.1:${port}`, ...options.headers }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      }
    )
    req.on("error", reject)
    req.end(options.body)
  })

/** The session cookie header of a running ui. */
export const cookieOf = (ui: RunningUi): Record<string, string> => ({ Cookie: `memdir-ui-${ui.port}=${ui.token}` })

/** The headers of a change sent the way the page sends it. */
export const changeHeaders = (ui: RunningUi): Record<string, string> => ({
  ...cookieOf(ui),
  Origin: ui.origin,
  "Content-Type": "application/json"
})

/**
 * Headless Chromium with a fresh profile in a temp directory. Fails loudly when Debian's package is missing: CI
 * installs it (.ci/run), a developer with `apt-get install chromium`.
 */
export const launchBrowser = async (): Promise<
  { readonly context: BrowserContext; readonly close: () => Promise<void> }
> => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the ui's browser tests need Debian's Chromium. Install it with ` +
        "`apt-get install -y chromium` (CI's .ci/run does)."
    )
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-ui-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 860 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  return {
    context,
    close: async () => {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}
