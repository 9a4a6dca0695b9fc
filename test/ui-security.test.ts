/**
 * Who may talk to `memdir ui` (docs/ui.md#security), over plain HTTP against the bundled CLI: the URL it prints
 * carries a fresh token; without the token or its cookie every request is refused (403); a `Host` other than
 * 127.0.0.1:PORT or localhost:PORT is refused (DNS rebinding); a change needs this server's `Origin` and a JSON body;
 * `--read-only` refuses every change; no response ever carries an `Access-Control-*` header; every response carries
 * the strict Content-Security-Policy. And the server's life: a port in use is a clear error, Ctrl-C exits 130, and
 * once a page was open, no page for the idle time stops it (exit 0).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { changeHeaders, cookieOf, type Reply, request, type RunningUi, startUi } from "./support/browser.js"
import { buildCli, cliPath, makeScratchProject, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let home: string
let project: string
let ui: RunningUi
let readOnly: RunningUi
const replies: Array<Reply> = []

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** Every reply is kept, so the last test can check that none carried a CORS header. */
const send = async (target: RunningUi, options: Parameters<typeof request>[1]): Promise<Reply> => {
  const reply = await request(target.port, options)
  replies.push(reply)
  return reply
}

const memdir = (args: ReadonlyArray<string>) =>
  execFileSync(process.execPath, [cliPath, ...args], { cwd: project, env: scratchHomeEnv(home), encoding: "utf8" })

beforeAll(async () => {
  buildCli()
  ;({ scratch, home, project } = makeScratchProject("memdir-ui-security-"))
  memdir([
    "write",
    "--type",
    "project",
    "--name",
    "Deploy steps",
    "--description",
    "How we deploy",
    "--body",
    "Run make deploy."
  ])
  ui = await startUi({ project, home })
  readOnly = await startUi({ project, home, args: ["--read-only"] })
})

afterAll(async () => {
  await Promise.all([ui?.stop(), readOnly?.stop()])
  if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir ui: the token", () => {
  it("prints a 127.0.0.1 URL with a fresh 32-byte base64url token per launch", () => {
    assert.match(ui.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/)
    assert.notStrictEqual(ui.token, readOnly.token)
  })

  it("refuses every request without the token or its cookie (403)", async () => {
    for (const path of ["/", "/app.js", "/app.css", "/api/state", "/api/memories", "/api/events", "/nothing"]) {
      const reply = await send(ui, { path })
      assert.strictEqual(reply.status, 403, path)
      assert.notInclude(reply.body, "Deploy steps")
    }
    const wrong = await send(ui, {
      path: "/api/memories",
      headers: { Cookie: `memdir-ui-${ui.port}=${"A".repeat(43)}` }
    })
    assert.strictEqual(wrong.status, 403)
    const otherServers = await send(ui, {
      path: "/api/memories",
      headers: { Cookie: `memdir-ui-${ui.port}=${readOnly.token}` }
    })
    assert.strictEqual(otherServers.status, 403)
    const badQuery = await send(ui, { path: "/?token=nope" })
    assert.strictEqual(badQuery.status, 403)
  })

  it("trades the token in the URL for an HttpOnly SameSite=Strict cookie and a redirect without it", async () => {
    const reply = await send(ui, { path: `/?token=${ui.token}` })
    assert.strictEqual(reply.status, 303)
    assert.strictEqual(reply.headers.location, "/")
    const cookie = String(reply.headers["set-cookie"])
    assert.include(cookie, `memdir-ui-${ui.port}=${ui.token}`)
    assert.include(cookie, "HttpOnly")
    assert.include(cookie, "SameSite=Strict")
    // never to another site, whatever path carried the token
    const elsewhere = await send(ui, { path: `/.//evil.example/?token=${ui.token}` })
    assert.strictEqual(elsewhere.status, 303)
    assert.strictEqual(elsewhere.headers.location, "/")
    // a target that is no path of this server (another host, a URL no parser reads) is refused, token or not
    for (const path of [`//evil.example/?token=${ui.token}`, "//[", `http://evil.example/?token=${ui.token}`]) {
      assert.strictEqual((await send(ui, { path, headers: cookieOf(ui) })).status, 403, path)
    }
    const page = await send(ui, { path: "/", headers: cookieOf(ui) })
    assert.strictEqual(page.status, 200)
    assert.include(page.body, "<script src=\"/app.js\">")
    const listing = await send(ui, { path: "/api/memories", headers: cookieOf(ui) })
    assert.strictEqual(listing.status, 200)
    assert.include(listing.body, "Deploy steps")
  })
})

describe("memdir ui: Host and Origin", () => {
  it("answers only to 127.0.0.1:PORT and localhost:PORT (no DNS rebinding)", async () => {
    for (const host of ["evil.example", `evil.example:${ui.port}`, "127.0.0.1", `127.0.0.1:${ui.port + 1}`, "[::1]"]) {
      const reply = await send(ui, { path: "/api/memories", headers: { ...cookieOf(ui), Host: host } })
      assert.strictEqual(reply.status, 403, host)
    }
    const local = await send(ui, { path: "/api/memories", headers: { ...cookieOf(ui), Host: `localhost:${ui.port}` } })
    assert.strictEqual(local.status, 200)
  })

  it("refuses a change without this server's Origin, or that is not JSON", async () => {
    const body = JSON.stringify({ path: "project_deploy_steps.md", ifVersion: "x" })
    const noOrigin = await send(ui, {
      method: "POST",
      path: "/api/delete",
      headers: { ...cookieOf(ui), "Content-Type": "application/json" },
      body
    })
    assert.strictEqual(noOrigin.status, 403)
    for (
      const origin of ["http://evil.example", `http://127.0.0.1:${ui.port + 1}`, "null", `https://127.0.0.1:${ui.port}`]
    ) {
      const reply = await send(ui, {
        method: "POST",
        path: "/api/delete",
        headers: { ...changeHeaders(ui), Origin: origin },
        body
      })
      assert.strictEqual(reply.status, 403, origin)
    }
    const crossSite = await send(ui, {
      method: "POST",
      path: "/api/delete",
      headers: { ...changeHeaders(ui), "Sec-Fetch-Site": "cross-site" },
      body
    })
    assert.strictEqual(crossSite.status, 403)
    const form = await send(ui, {
      method: "POST",
      path: "/api/delete",
      headers: { ...changeHeaders(ui), "Content-Type": "application/x-www-form-urlencoded" },
      body: "path=project_deploy_steps.md"
    })
    assert.strictEqual(form.status, 415)
    // the page's own request passes the guard and reaches the operation (a stale version: a conflict, not a 403)
    const page = await send(ui, { method: "POST", path: "/api/delete", headers: changeHeaders(ui), body })
    assert.strictEqual(page.status, 409)
    assert.strictEqual(JSON.parse(page.body).error._tag, "VersionConflictError")
    assert.isTrue(
      fs.readdirSync(JSON.parse((await send(ui, { path: "/api/state", headers: cookieOf(ui) })).body).memoryDir)
        .includes("project_deploy_steps.md")
    )
  })

  it("answers no preflight and never sends an Access-Control-* header", async () => {
    const preflight = await send(ui, {
      method: "OPTIONS",
      path: "/api/delete",
      headers: {
        ...cookieOf(ui),
        Origin: "http://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"
      }
    })
    assert.strictEqual(preflight.status, 403)
    await send(ui, { path: "/api/state", headers: { ...cookieOf(ui), Origin: "http://evil.example" } })
    assert.isAbove(replies.length, 15)
    for (const reply of replies) {
      const cors = Object.keys(reply.headers).filter((name) => name.startsWith("access-control-"))
      assert.deepStrictEqual(cors, [])
    }
  })

  it("sends the strict Content-Security-Policy and no-store on every response", async () => {
    for (const path of ["/", "/app.js", "/api/state"]) {
      const reply = await send(ui, { path, headers: cookieOf(ui) })
      assert.strictEqual(reply.headers["content-security-policy"], CSP)
      assert.strictEqual(reply.headers["x-content-type-options"], "nosniff")
      assert.strictEqual(reply.headers["referrer-policy"], "no-referrer")
      assert.strictEqual(reply.headers["cache-control"], "no-store")
    }
    const refused = await send(ui, { path: "/" })
    assert.strictEqual(refused.headers["content-security-policy"], CSP)
  })
})

describe("memdir ui: paths", () => {
  it("reads only inside the memory directory, with a typed error otherwise", async () => {
    for (const path of ["../../../../etc/passwd", "/etc/passwd", "%2e%2e/%2e%2e/secret.md", "team/../../x.md"]) {
      const reply = await send(ui, { path: `/api/memory?path=${encodeURIComponent(path)}`, headers: cookieOf(ui) })
      assert.include([400, 404], reply.status, `${path}: ${reply.body}`)
      assert.notInclude(reply.body, "root:")
      assert.isString(JSON.parse(reply.body).error._tag)
    }
    const unknownKey = await send(ui, { path: "/api/memory?path=x.md&extra=1", headers: cookieOf(ui) })
    assert.strictEqual(unknownKey.status, 400)
    const tooLarge = await send(ui, {
      method: "POST",
      path: "/api/save",
      headers: changeHeaders(ui),
      body: JSON.stringify({ path: "x.md", body: "x".repeat(1_100_000) })
    })
    assert.strictEqual(tooLarge.status, 413)
  })
})

describe("memdir ui --read-only", () => {
  it("refuses every change (403) and still serves reads", async () => {
    const state = await send(readOnly, { path: "/api/state", headers: cookieOf(readOnly) })
    assert.strictEqual(JSON.parse(state.body).readOnly, true)
    const listing = JSON.parse((await send(readOnly, { path: "/api/memories", headers: cookieOf(readOnly) })).body)
    const memory = JSON.parse(
      (await send(readOnly, { path: "/api/memory?path=project_deploy_steps.md", headers: cookieOf(readOnly) })).body
    )
    assert.strictEqual(listing.memories.length, 1)
    const reply = await send(readOnly, {
      method: "POST",
      path: "/api/delete",
      headers: changeHeaders(readOnly),
      body: JSON.stringify({ path: "project_deploy_steps.md", ifVersion: memory.version })
    })
    assert.strictEqual(reply.status, 403)
    assert.include(reply.body, "read-only")
    assert.isTrue(fs.existsSync(`${listing.memoryDir}project_deploy_steps.md`))
  })
})

describe("memdir ui: its life", () => {
  it("exits 2 naming --port when the port is in use", async () => {
    const taken = http.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as AddressInfo).port
    const run = spawnSync(process.execPath, [cliPath, "ui", "--no-open", "--port", String(port)], {
      cwd: project,
      env: scratchHomeEnv(home),
      encoding: "utf8",
      timeout: 30_000
    })
    taken.close()
    assert.strictEqual(run.status, 2, run.stderr)
    assert.include(run.stderr, "--port")
    assert.include(run.stderr, "in use")
    assert.strictEqual(run.stdout, "")
  })

  it("creates the memory directory of a new project as `memdir prompt` does, but not with --read-only", async () => {
    const fresh = makeScratchProject("memdir-ui-fresh-")
    try {
      const memoryDir = execFileSync(process.execPath, [cliPath, "path"], {
        cwd: fresh.project,
        env: scratchHomeEnv(fresh.home),
        encoding: "utf8"
      }).trim()
      const looking = await startUi({ project: fresh.project, home: fresh.home, args: ["--read-only"] })
      await looking.stop()
      assert.isFalse(fs.existsSync(memoryDir))
      const running = await startUi({ project: fresh.project, home: fresh.home })
      await running.stop()
      assert.isTrue(fs.existsSync(`${memoryDir}MEMORY.md`))
    } finally {
      fs.rmSync(fresh.scratch, { recursive: true, force: true })
    }
  })

  it("opens the URL with the platform's opener, and says so when that fails", async () => {
    const bin = fs.mkdtempSync(`${scratch}/bin-`)
    const opened = `${bin}/opened`
    const opener = `${bin}/xdg-open`
    fs.writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`, { mode: 0o755 })
    const env = { PATH: `${bin}:${process.env.PATH}` }
    const running = await startUi({ project, home, env, open: true })
    while (!fs.existsSync(opened) || fs.readFileSync(opened, "utf8") === "") {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.strictEqual(fs.readFileSync(opened, "utf8"), running.url)
    await running.stop()
    fs.writeFileSync(opener, "#!/bin/sh\necho 'no browser' >&2\nexit 3\n", { mode: 0o755 })
    const failing = await startUi({ project, home, env, open: true })
    while (!failing.stderr().includes("could not open a browser")) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.include(failing.stderr(), "open the URL above")
    // the server keeps serving
    assert.strictEqual((await request(failing.port, { path: "/api/state", headers: cookieOf(failing) })).status, 200)
    await failing.stop()
  })

  it("lists a memory written after it started, before any page was open", async () => {
    const running = await startUi({ project, home })
    try {
      memdir([
        "write",
        "--type",
        "user",
        "--name",
        "Late memory",
        "--description",
        "Written after the start",
        "--body",
        "x"
      ])
      const listing = await request(running.port, { path: "/api/memories", headers: cookieOf(running) })
      assert.include(listing.body, "user_late_memory.md")
    } finally {
      await running.stop()
    }
  })

  it("lists what is on disk right after a change the page made", async () => {
    memdir(["write", "--type", "user", "--name", "Short lived", "--description", "Deleted at once", "--body", "x"])
    const running = await startUi({ project, home })
    try {
      const listed = async () =>
        JSON.parse((await request(running.port, { path: "/api/memories", headers: cookieOf(running) })).body)
          .memories.map((m: { path: string }) => m.path)
      assert.include(await listed(), "user_short_lived.md")
      const memory = JSON.parse(
        (await request(running.port, { path: "/api/memory?path=user_short_lived.md", headers: cookieOf(running) }))
          .body
      )
      const removed = await request(running.port, {
        method: "POST",
        path: "/api/delete",
        headers: changeHeaders(running),
        body: JSON.stringify({ path: "user_short_lived.md", ifVersion: memory.version })
      })
      assert.strictEqual(removed.status, 200, removed.body)
      assert.notInclude(await listed(), "user_short_lived.md")
    } finally {
      await running.stop()
    }
  })

  it("stops on Ctrl-C with exit 130", async () => {
    const running = await startUi({ project, home })
    running.child.kill("SIGINT")
    const exit = await running.exited
    assert.strictEqual(exit.code, 130)
  })

  it("stops (exit 0) once the page it had has been gone for the idle time", async () => {
    const running = await startUi({ project, home, env: { MEMDIR_UI_IDLE: "1 second" } })
    const page = http.get({
      host: "127.0.0.1",
      port: running.port,
      path: "/api/events",
      headers: { Host: `127.0.0.1:${running.port}`, ...cookieOf(running) }
    })
    await new Promise<void>((resolve) => page.on("response", () => resolve()))
    page.destroy()
    const exit = await running.exited
    assert.strictEqual(exit.code, 0)
    assert.include(running.stderr(), "no page open")
  })
})
