/**
 * `memdir ui` in a real browser (docs/ui.md): the bundled CLI as a child process (`memdir ui --no-open`), Debian's
 * Chromium driven by playwright-core. Browse, search and recall with the explanation, an edit whose memory changed
 * on disk meanwhile (the conflict is shown, the disk's text is kept), rename, delete and undo, a hostile memory
 * (script and `onerror` in its name, description and body, a 120 KB line, 100 KB of Markdown delimiters that never
 * close, control characters: nothing runs, the page
 * stays usable), the model selector asked only on a click, and `--read-only` (no edit controls). One browser for the file, one page reused.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Locator, Page } from "playwright-core"
import { launchBrowser, type RunningUi, startUi } from "./support/browser.js"
import { buildCli, cliPath, makeScratchProject, scratchHomeEnv } from "./support/cli.js"
import { removeScratch } from "./support/scratch.js"

let scratch: string
let home: string
let project: string
let memoryDir: string
let ui: RunningUi
let browser: Awaited<ReturnType<typeof launchBrowser>>
let page: Page
const dialogs: Array<string> = []
const pageErrors: Array<string> = []
const consoleErrors: Array<string> = []

const memdir = (args: ReadonlyArray<string>) =>
  execFileSync(process.execPath, [cliPath, ...args], { cwd: project, env: scratchHomeEnv(home), encoding: "utf8" })

const write = (type: string, name: string, description: string, body: string) =>
  memdir(["write", "--type", type, "--name", name, "--description", description, "--body", body])

const HOSTILE_FILE = "project_hostile.md"
const HUGE_LINE = "x".repeat(120_000)
/** Markdown delimiters that never close, 100 KB of them: a renderer that rescans per delimiter never finishes. */
const UNCLOSED = "[[a [b](".repeat(12_500)
const hostileText = [
  "---",
  "name: \"<img src=x onerror=\\\"window.__pwned='name'\\\">Hostile\"",
  "description: \"<script>window.__pwned='description'</script> and more\"",
  "type: project",
  "---",
  "",
  "<script>window.__pwned='body'</script>",
  "",
  "<img src=x onerror=\"window.__pwned='img'; alert(1)\">",
  "",
  "[click me](javascript:window.__pwned='link') and [data](data:text/html,<script>alert(1)</script>)",
  "",
  "bell:\u0007 escape:\u001b[31m reversed:\u202eevil\u202c",
  "",
  HUGE_LINE,
  "",
  UNCLOSED,
  ""
].join("\n")

const pwned = () => page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)

/**
 * A row's text as the page shows it. Rows off screen are not rendered (`content-visibility: auto`), and Chromium
 * gives no `innerText` for them: the row is scrolled into view first, and read again after a frame while it is still
 * empty (rendered with the next frame, later on a loaded machine). The list redraws when files change on disk
 * (an earlier test's writes may still be arriving): a row replaced meanwhile is looked up again.
 */
const shownText = async (row: Locator): Promise<string> => {
  for (let attempt = 1;; attempt++) {
    try {
      await row.scrollIntoViewIfNeeded()
      const text = await row.innerText()
      // a row just scrolled in is rendered with the next frame: on a loaded machine its text can still be empty
      if (text !== "" || attempt >= 10) return text
      await row.evaluate(() =>
        new Promise((resolve) =>
          (globalThis as unknown as { requestAnimationFrame: (next: () => void) => void }).requestAnimationFrame(() =>
            resolve(undefined)
          )
        )
      )
    } catch (error) {
      if (attempt >= 10 || !/not attached to the DOM/.test(String(error))) throw error
    }
  }
}

/** The page at a route of the running ui (the cookie was set by the first visit with the token). */
const visit = async (route: string) => {
  await page.goto(`${ui.origin}/${route}`)
}

beforeAll(async () => {
  buildCli()
  ;({ scratch, home, project } = makeScratchProject("memdir-ui-browser-"))
  write("project", "Deploy steps", "How we deploy to production", "Run `make deploy`, then watch the dashboard.")
  write(
    "feedback",
    "Testing policy",
    "Integration tests hit a real database",
    "Never mock the database. See [[Deploy steps]].\nWhy: mocks hid a broken migration."
  )
  write("reference", "Old ticket tracker", "Where bugs were tracked before 2025", "Bugs lived in the old tracker.")
  memoryDir = memdir(["path"]).trim()
  fs.writeFileSync(path.join(memoryDir, HOSTILE_FILE), hostileText)
  ui = await startUi({ project, home })
  browser = await launchBrowser()
  page = await browser.context.newPage()
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  page.on("pageerror", (error) => pageErrors.push(error.message))
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text())
  })
  await page.goto(ui.url)
})

afterAll(async () => {
  await browser?.close()
  await ui?.stop()
  // a hook daemon started by a hook may still run inside it
  await removeScratch(scratch)
})

describe("memdir ui in Chromium", () => {
  it("browses every memory with its type, age, links and index line, the token gone from the address bar", async () => {
    assert.strictEqual(new URL(page.url()).search, "")
    await page.waitForSelector("[data-testid=memory-row]")
    const rows = page.locator("[data-testid=memory-row]")
    assert.strictEqual(await rows.count(), 4)
    const testing = page.locator("[data-testid=memory-row][data-path='feedback_testing_policy.md']")
    const text = await shownText(testing)
    assert.include(text, "Testing policy")
    assert.include(text, "feedback")
    assert.include(text, "today")
    assert.include(text, "in index")
    // one [[link]], to Deploy steps
    assert.strictEqual((await testing.locator(".links-cell").innerText()).trim(), "1")
    await page.fill("[data-testid=filter]", "tracker")
    assert.strictEqual(await rows.count(), 1)
    assert.include(await page.innerText("[data-testid=count]"), "1 of 4")
    await page.fill("[data-testid=filter]", "")
    assert.strictEqual(await rows.count(), 4)
  })

  it("shows a memory an agent saves while the page is open, without a reload", async () => {
    await visit("#/browse")
    await page.waitForSelector("[data-testid=memory-row]")
    await page.evaluate(() => {
      ;(globalThis as { __samePage?: boolean }).__samePage = true
    })
    write("project", "Feature flags", "Flags live in LaunchDarkly", "Every new feature ships behind a flag.")
    await page.waitForSelector("[data-path='project_feature_flags.md']")
    // the same document: the list refreshed itself
    assert.isTrue(await page.evaluate(() => (globalThis as { __samePage?: boolean }).__samePage === true))
  })

  it("searches and shows what recall selects and why", async () => {
    await visit("#/search")
    await page.fill("[data-testid=query]", "how do we deploy to production")
    await page.click("[data-testid=run-search]")
    await page.waitForSelector("[data-testid=explain]")
    const recalled = await page.locator("[data-testid=recalled]").allInnerTexts()
    assert.strictEqual(recalled.length, 1)
    assert.include(recalled[0], "Deploy steps")
    const explain = await page.innerText("[data-testid=explain]")
    assert.match(explain, /project_deploy_steps\.md/)
    assert.match(explain, /kept/)
    assert.include(await page.innerText("[data-testid=search-results]"), "Deploy steps")
    // no key configured: no model button
    assert.strictEqual(await page.locator("[data-testid=ask-model]").count(), 0)
    // words its body says together rank it: the score shows what they add, the row which words
    await page.fill("[data-testid=query]", "after make deploy, which dashboard do I watch?")
    await page.click("[data-testid=run-search]")
    await page.locator("[data-testid=explain] tr.kept", { hasText: "together in one passage" }).waitFor()
    const row = await page.innerText("[data-testid=explain] tr.kept")
    assert.match(row, /\d\.\d\d\+\d\.\d\d/)
    assert.include(row, "together in one passage: deploi, dashboard, watch")
  })

  it("shows a memory changed on disk during an edit beside the edit, and keeps the disk's text", async () => {
    await visit("#/memory/feedback_testing_policy.md")
    await page.click("[data-testid=edit]")
    await page.fill("[data-testid=edit-body]", "Never mock the database. MY EDIT.")
    // meanwhile, an agent updates the same memory
    write("feedback", "Testing policy", "Integration tests hit a real database", "AGENT'S CHANGE: use testcontainers.")
    await page.click("[data-testid=save]")
    await page.waitForSelector("[data-testid=conflict]")
    const conflict = await page.innerText("[data-testid=conflict]")
    assert.include(conflict, "changed on disk")
    assert.include(conflict, "AGENT'S CHANGE")
    assert.include(conflict, "MY EDIT")
    const onDisk = fs.readFileSync(path.join(memoryDir, "feedback_testing_policy.md"), "utf8")
    assert.include(onDisk, "AGENT'S CHANGE")
    assert.notInclude(onDisk, "MY EDIT")
    // redo the change on the current text
    await page.click("[data-testid=edit-current]")
    await page.waitForSelector("[data-testid=edit-body]")
    assert.include(await page.inputValue("[data-testid=edit-body]"), "AGENT'S CHANGE")
    await page.fill("[data-testid=edit-body]", "AGENT'S CHANGE: use testcontainers. MY EDIT.")
    await page.fill("[data-testid=edit-description]", "Integration tests hit a real database, in containers")
    await page.click("[data-testid=save]")
    await page.waitForSelector("[data-testid=memory-body]")
    assert.include(await page.innerText("[data-testid=memory-body]"), "MY EDIT")
    const saved = fs.readFileSync(path.join(memoryDir, "feedback_testing_policy.md"), "utf8")
    assert.include(saved, "AGENT'S CHANGE: use testcontainers. MY EDIT.")
    assert.include(saved, "description: Integration tests hit a real database, in containers")
    assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "in containers")
  })

  it("renames a memory, and deletes one with undo from its backup", async () => {
    await visit("#/memory/reference_old_ticket_tracker.md")
    await page.click("[data-testid=rename]")
    await page.fill("[data-testid=rename-path]", "reference_tracker_history.md")
    await page.click("[data-testid=rename-confirm]")
    await page.waitForURL(/reference_tracker_history\.md$/)
    await page.waitForSelector("[data-testid=memory-body]")
    assert.isFalse(fs.existsSync(path.join(memoryDir, "reference_old_ticket_tracker.md")))
    const before = fs.readFileSync(path.join(memoryDir, "reference_tracker_history.md"), "utf8")

    await page.click("[data-testid=delete]")
    await page.click("[data-testid=delete-confirm]")
    await page.waitForSelector("[data-testid=toast-action]")
    assert.isFalse(fs.existsSync(path.join(memoryDir, "reference_tracker_history.md")))
    assert.notInclude(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "reference_tracker_history.md")
    await page.waitForSelector("[data-testid=memory-row]")
    assert.strictEqual(await page.locator("[data-path='reference_tracker_history.md']").count(), 0)
    await page.click("[data-testid=toast-action]")
    await page.waitForURL(/reference_tracker_history\.md$/)
    await page.waitForSelector("[data-testid=memory-body]")
    // back as it was (a restore is a write: it stamps the time it was written again)
    const unstamped = (text: string) => text.replace(/^modified: .*\n/m, "")
    const after = fs.readFileSync(path.join(memoryDir, "reference_tracker_history.md"), "utf8")
    assert.strictEqual(unstamped(after), unstamped(before))
    assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "reference_tracker_history.md")
    // its history shows the delete, with the text it removed
    await page.click("[data-testid=show-history]")
    await page.waitForSelector("[data-testid=history-entry]")
    const history = await page.locator("[data-testid=history-entry]").allInnerTexts()
    assert.isTrue(history.some((entry) => entry.includes("deleted")), history.join("\n"))
  })

  it("shows a hostile memory as text: nothing runs, no dialog, and the page stays usable", async () => {
    await visit("#/browse")
    await page.waitForSelector(`[data-path='${HOSTILE_FILE}']`)
    const row = await shownText(page.locator(`[data-path='${HOSTILE_FILE}']`))
    assert.include(row, "<img src=x onerror=")
    assert.include(row, "<script>window.__pwned='description'</script>")
    await page.click(`[data-path='${HOSTILE_FILE}'] a.memory-name`)
    await page.waitForSelector("[data-testid=memory-body]")
    const body = page.locator("[data-testid=memory-body]")
    const text = await body.innerText()
    assert.include(text, "<script>window.__pwned='body'</script>")
    assert.include(text, "<img src=x onerror=")
    // shown as the CLI shows them on a terminal: a control picture, a bidi control by its code
    assert.include(text, "bell:␇ escape:␛[31m")
    assert.include(text, "reversed:\\u{202e}evil\\u{202c}")
    assert.include(text, HUGE_LINE)
    assert.include(text, UNCLOSED.slice(0, 1_000))
    assert.include(await page.innerText("[data-testid=memory-title]"), "<img src=x onerror=")
    assert.strictEqual(await body.locator("script, img, iframe, object, embed").count(), 0)
    const hrefs = await body.locator("a").evaluateAll((links) => links.map((a) => a.getAttribute("href")))
    for (const href of hrefs) assert.notMatch(String(href), /^(javascript|data):/i)
    assert.strictEqual(await pwned(), undefined)
    assert.deepStrictEqual(dialogs, [])
    assert.deepStrictEqual(pageErrors, [])
    // the page itself never trips its Content-Security-Policy (4xx answers the page handles are logged, and fine)
    assert.deepStrictEqual(consoleErrors.filter((text) => !text.startsWith("Failed to load resource")), [])
    // still usable: the navigation works and the other memories open
    await page.click("nav a[data-route=browse]")
    await page.waitForSelector("[data-path='project_deploy_steps.md']")
    await page.click("[data-path='project_deploy_steps.md'] a.memory-name")
    await page.waitForSelector("[data-testid=memory-body]")
    assert.include(await page.innerText("[data-testid=memory-body]"), "make deploy")
    assert.strictEqual(await pwned(), undefined)
  })

  it("shows what the hooks gave which session, and doctor's findings with a safe fix one click away", async () => {
    const session = "6b0d9a4e-2f7c-4c1e-8d35-91a2f0e7c3d1"
    execFileSync(process.execPath, [cliPath, "hook"], {
      cwd: project,
      env: scratchHomeEnv(home),
      input: JSON.stringify({
        hook_event_name: "UserPromptSubmit",
        session_id: session,
        prompt: "how do we deploy to production",
        cwd: project,
        transcript_path: path.join(scratch, "none.jsonl")
      })
    })
    await visit("#/activity")
    await page.waitForSelector("[data-testid=injections]")
    const injections = await page.innerText("[data-testid=injections]")
    assert.include(injections, session)
    assert.include(injections, "project_deploy_steps.md")

    // the hostile memory was written by hand: MEMORY.md has no line for it, which doctor --fix adds
    await visit("#/health")
    await page.waitForSelector("[data-testid=health-summary]")
    const findings = await page.locator("[data-testid=finding]").allInnerTexts()
    assert.isTrue(
      findings.some((f) => f.includes("missing-from-index") && f.includes(HOSTILE_FILE)),
      findings.join("\n")
    )
    assert.notInclude(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), HOSTILE_FILE)
    await page.click("[data-testid=finding]:has-text('missing-from-index') [data-testid=apply-fix]")
    // the view reloads without the finding once the fix is made
    await page.waitForSelector(`[data-testid=finding]:has-text('missing-from-index'):has-text('${HOSTILE_FILE}')`, {
      state: "detached"
    })
    assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), HOSTILE_FILE)
    assert.strictEqual(await pwned(), undefined)
  })

  it("asks the model selector only when a key is configured and the person clicks for it", async () => {
    const scope = Scope.makeUnsafe()
    try {
      const server = await Effect.runPromise(
        MessagesApiServer.make({
          apiKey: "test",
          replies: [MessagesApiServer.toolUse("select_memories", { selected_memories: ["project_deploy_steps.md"] })]
        }).pipe(Effect.provideService(Scope.Scope, scope))
      )
      const withKey = await startUi({
        project,
        home,
        env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: server.url }
      })
      try {
        await page.goto(withKey.url)
        await page.goto(`${withKey.origin}/#/search?q=${encodeURIComponent("how do we deploy to production")}`)
        await page.waitForSelector("[data-testid=explain]")
        assert.strictEqual((await Effect.runPromise(server.requests)).length, 0)
        await page.click("[data-testid=ask-model]")
        await page.waitForSelector("[data-testid=recall-model]")
        const chosen = await page.innerText("[data-testid=recall-model]")
        assert.include(chosen, "Deploy steps")
        assert.include(chosen, "model selector")
        assert.strictEqual((await Effect.runPromise(server.requests)).length, 1)
      } finally {
        await withKey.stop()
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("team memory: listed with its scope, and an edit that would share a secret is refused, the file kept", async () => {
    const team = { MEMDIR_TEAM_MEMORY: "1" }
    execFileSync(process.execPath, [cliPath, "team", "write", "reference_ci.md"], {
      cwd: project,
      env: scratchHomeEnv(home, team),
      input: "---\nname: CI\ndescription: Where CI runs\ntype: reference\n---\n\nCI runs on GitHub Actions.\n"
    })
    const teamFile = path.join(memoryDir, "team", "reference_ci.md")
    const before = fs.readFileSync(teamFile, "utf8")
    const withTeam = await startUi({ project, home, env: team })
    try {
      await page.goto(withTeam.url)
      await page.waitForSelector("[data-path='team/reference_ci.md']")
      assert.include(await shownText(page.locator("[data-path='team/reference_ci.md']")), "team")
      await page.goto(`${withTeam.origin}/#/memory/team%2Freference_ci.md`)
      await page.click("[data-testid=edit]")
      await page.fill(
        "[data-testid=edit-body]",
        `CI runs on GitHub Actions. Token: ghp_${"a1B2c3D4e5".repeat(4).slice(0, 36)}`
      )
      await page.click("[data-testid=save]")
      await page.waitForSelector("[data-testid=error]")
      assert.match(await page.innerText("[data-testid=error]"), /secret/i)
      assert.strictEqual(fs.readFileSync(teamFile, "utf8"), before)
    } finally {
      await withTeam.stop()
    }
  })

  it("shows the index as the model gets it: what its 200-line cap cuts, and the memories it hides", async () => {
    const indexFile = path.join(memoryDir, "MEMORY.md")
    const original = fs.readFileSync(indexFile, "utf8")
    const filler = Array.from({ length: 200 }, (_, i) => `- note ${i}: kept by hand`).join("\n")
    fs.writeFileSync(indexFile, `${filler}\n${original}`)
    try {
      await visit("#/index")
      await page.waitForSelector("[data-testid=index-cut]")
      assert.include(await page.innerText("[data-testid=index-cut]"), "project_deploy_steps.md")
      assert.include(await page.innerText("[data-testid=index-warning]"), "200")
      // the listing refreshes itself on the change (its badge then says the line is cut)
      await visit("#/browse")
      await page.locator("[data-path='project_deploy_steps.md']", { hasText: "cut" }).waitFor()
    } finally {
      fs.writeFileSync(indexFile, original)
    }
  })

  it("shows what the last dream merged, rewrote and pruned", async () => {
    // the report a dream leaves in its run directory (docs/dream-and-logs.md#backups-and-the-report)
    const run = path.join(memoryDir, ".dream", "2026-12-01T10-00-00Z")
    fs.mkdirSync(run, { recursive: true })
    fs.writeFileSync(
      path.join(run, "report.json"),
      JSON.stringify({
        startedAt: "2026-12-01T10:00:00.000Z",
        finishedAt: "2026-12-01T10:01:00.000Z",
        status: "completed",
        created: [],
        updated: [{ file: "project_deploy_steps.md" }],
        merged: [{ from: "feedback_db_mocks.md", into: "feedback_testing_policy.md" }],
        deleted: [{ file: "feedback_db_mocks.md" }, { file: "project_old_plan.md" }],
        summary: "Merged the testing memories <script>window.__pwned='dream'</script>, dropped the old plan."
      })
    )
    await visit("#/dreams")
    await page.waitForSelector("[data-testid=dream]")
    const dream = await page.innerText("[data-testid=dream]")
    assert.include(dream, "completed")
    assert.include(dream, "feedback_db_mocks.md → feedback_testing_policy.md")
    assert.include(dream, "rewrote (1): project_deploy_steps.md")
    assert.include(dream, "pruned (1): project_old_plan.md")
    assert.include(dream, "<script>window.__pwned='dream'</script>")
    assert.strictEqual(await pwned(), undefined)
  })

  it("--read-only: the page shows memory but no edit, rename or delete control; a stopped server is said", async () => {
    const readOnly = await startUi({ project, home, args: ["--read-only"] })
    try {
      await page.goto(readOnly.url)
      await page.waitForSelector("[data-testid=read-only]")
      await page.goto(`${readOnly.origin}/#/memory/project_deploy_steps.md`)
      await page.waitForSelector("[data-testid=memory-body]")
      assert.strictEqual(await page.locator("[data-testid=memory-actions]").count(), 0)
      assert.strictEqual(await page.locator("[data-testid=edit], [data-testid=delete]").count(), 0)
      // the server goes away: the page says so
      await readOnly.stop()
      await page.waitForSelector("[data-testid=connection-lost]")
    } finally {
      await readOnly.stop()
    }
  })
})
