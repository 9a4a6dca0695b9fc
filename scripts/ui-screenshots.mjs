// The screenshots of docs/ui.md: a scratch project with a few realistic memories, a real `memdir dream` answered by
// a local stand-in for the Messages API (a scripted dreamer: no key, no network), the bundled CLI's `memdir ui`, and
// Debian's Chromium (playwright-core) taking one PNG per view into docs/ui/.
//
//   node apps/cli/build.mjs && node scripts/ui-screenshots.mjs
import { execFile, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const cli = path.join(repoRoot, "apps/cli/dist/memdir.js")
const out = path.join(repoRoot, "docs/ui")
const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-ui-shots-")))
const home = path.join(scratch, "home")
const project = path.join(scratch, "shop")
fs.mkdirSync(home)
fs.mkdirSync(project)
execFileSync("git", ["init", "-q"], { cwd: project })
// no hook daemon: the one hook below answers in its own process, and nothing is left running in the scratch
const env = { PATH: process.env.PATH, HOME: home, MEMDIR_HOME: path.join(home, ".memdir"), TZ: "UTC", MEMDIR_HOOK_DAEMON: "off" }
const memdir = (args, input) =>
  execFileSync(process.execPath, [cli, ...args], { cwd: project, env, encoding: "utf8", input })

const memories = [
  ["feedback", "Integration tests hit a real database", "Never mock Postgres in integration tests",
    "Integration tests run against the Postgres in `docker compose`, never a mock.\n\n**Why:** a mocked " +
    "repository hid the broken `orders` migration in March.\n\n**How to apply:** use `makeTestDatabase()`; " +
    "see [[Deploy checklist]] for the migration step."],
  ["project", "Deploy checklist", "How a release goes out: tag, migrate, deploy, watch",
    "1. Tag the release (`pnpm release`).\n2. Run the migrations (`make migrate`) before the deploy.\n" +
    "3. `make deploy`, then watch the *checkout latency* dashboard for 15 minutes."],
  ["project", "Payments freeze", "No changes to payments code until the audit closes",
    "The PCI audit runs until the end of the quarter: no merges under `src/payments/` without Dana's review."],
  ["user", "Ana prefers small PRs", "Ana reviews PRs under 300 lines the same day",
    "Split work into PRs under 300 lines; Ana reviews those the same day."],
  ["reference", "Grafana dashboards", "Where checkout latency and error rates are graphed",
    "Checkout latency: Grafana → *Shop / Checkout*. Error budget: *Shop / SLO*."],
  ["feedback", "Use pnpm, not npm", "The repository uses pnpm workspaces",
    "Always `pnpm install`; npm breaks the workspace links.\n\n**Why:** two lockfiles diverged in May."],
  ["reference", "Incident runbook", "What to do when checkout errors spike",
    "Page the on-call, freeze deploys, check the payments provider status page first."],
  ["project", "Search rewrite", "Moving product search from Elasticsearch to Postgres FTS",
    "The rewrite is behind the `search_v2` flag; keep both paths working until it ships."],
  // what the dream below consolidates: a duplicate, a relative date, a plan nobody follows
  ["feedback", "No database mocks", "Do not mock the database in tests",
    "Mocks of the repository hid a broken migration."],
  ["project", "Merge freeze", "No merges to main during the release freeze",
    "The merge freeze starts Thursday and lasts until the release is out."],
  ["project", "Old launch plan", "Ship the mobile app by spring", "Ship the mobile app by spring."]
]
for (const [type, name, description, body] of memories) {
  memdir(["write", "--type", type, "--name", name, "--description", description, "--body", body])
}
const memoryDir = memdir(["path"]).trim()
// an old memory (stale)
const old = path.join(memoryDir, "reference_grafana_dashboards.md")
fs.writeFileSync(old, fs.readFileSync(old, "utf8").replace(/^modified: .*$/m, "modified: 2026-08-02T09:00:00.000Z"))
// what the hooks gave a session
memdir(["hook"], JSON.stringify({
  hook_event_name: "UserPromptSubmit",
  session_id: "3f9c2a7e-5b1d-4e8a-9c6f-2d7b8e1a4c90",
  prompt: "run the migration and deploy the release",
  cwd: project,
  transcript_path: path.join(scratch, "none.jsonl")
}))

// a dream, its dreamer scripted: merge the duplicate, date the freeze, prune the old plan
const dreamer = [
  ["memory_write", {
    path: "feedback_integration_tests_hit_a_real_database.md",
    content: "---\nname: Integration tests hit a real database\ndescription: Never mock Postgres in integration tests\n" +
      "type: feedback\n---\n\nIntegration tests run against the Postgres in `docker compose`, never a mock.\n\n" +
      "**Why:** mocks of the repository hid a broken migration (`orders`, in March).\n\n**How to apply:** use " +
      "`makeTestDatabase()`; see [[Deploy checklist]] for the migration step.\n"
  }],
  ["memory_delete", { path: "feedback_no_database_mocks.md" }],
  ["memory_edit", { path: "project_merge_freeze.md", old_string: "starts Thursday", new_string: "starts 2026-12-10" }],
  ["memory_delete", { path: "project_old_launch_plan.md" }]
]
const standIn = http.createServer((request, response) => {
  let body = ""
  request.on("data", (chunk) => (body += chunk))
  request.on("end", () => {
    const turn = Math.min(standIn.turns++, dreamer.length)
    const step = dreamer[turn]
    const content = step === undefined ?
      [{ type: "text", text: "Merged the two database-testing memories, dated the merge freeze, pruned the old plan." }] :
      [{ type: "tool_use", id: `toolu_${turn}`, name: step[0], input: step[1] }]
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({
      id: `msg_${turn}`,
      type: "message",
      role: "assistant",
      model: JSON.parse(body).model,
      content,
      stop_reason: step === undefined ? "end_turn" : "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 2400, output_tokens: 120 }
    }))
  })
})
standIn.turns = 0
await new Promise((resolve) => standIn.listen(0, "127.0.0.1", resolve))
await new Promise((resolve, reject) =>
  execFile(process.execPath, [cli, "dream", "--force", "--no-commit"], {
    cwd: project,
    env: {
      ...env,
      ANTHROPIC_API_KEY: "sk-ant-screenshots",
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${standIn.address().port}`
    }
  }, (error, stdout, stderr) => error ? reject(new Error(`memdir dream: ${stderr}`)) : resolve(stdout))
)
standIn.close()
// one written by hand without an index line (a doctor finding; after the dream, which would index it)
fs.writeFileSync(
  path.join(memoryDir, "project_staging_database.md"),
  "---\nname: Staging database\ndescription: Staging is reset every Monday at 06:00 UTC\ntype: project\n---\n\n" +
    "Do not keep test data in staging over a weekend.\n"
)

const ui = spawn(process.execPath, [cli, "ui", "--no-open", "--cwd", project], {
  cwd: project,
  env,
  stdio: ["ignore", "pipe", "inherit"]
})
const url = await new Promise((resolve) => {
  let text = ""
  ui.stdout.on("data", (chunk) => {
    text += chunk
    if (text.includes("\n")) resolve(text.split("\n")[0])
  })
})
const origin = new URL(url).origin
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-ui-shots-chromium-"))
const context = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1280, height: 760 },
  colorScheme: "light",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
})
const page = await context.newPage()
const shot = async (name) => {
  await page.waitForTimeout(150)
  await page.screenshot({ path: path.join(out, `${name}.png`) })
  console.log(`docs/ui/${name}.png`)
}
try {
  fs.mkdirSync(out, { recursive: true })
  await page.goto(url)
  await page.waitForSelector("[data-testid=memory-row]")
  await shot("browse")

  await page.goto(`${origin}/#/memory/feedback_integration_tests_hit_a_real_database.md`)
  await page.waitForSelector("[data-testid=memory-body]")
  await shot("memory")

  await page.click("[data-testid=edit]")
  await page.fill("[data-testid=edit-body]", "Integration tests run against the Postgres in `docker compose`.\n\n" +
    "**Why:** a mocked repository hid the broken `orders` migration.\n\n**How to apply:** `makeTestDatabase()`.")
  memdir([
    "write",
    "--type",
    "feedback",
    "--name",
    "Integration tests hit a real database",
    "--description",
    "Never mock Postgres in integration tests",
    "--body",
    "Integration tests run against Testcontainers' Postgres, never a mock.\n\n**Why:** a mocked repository hid " +
    "the broken `orders` migration in March.\n\n**How to apply:** use `makeTestDatabase()`."
  ])
  await page.click("[data-testid=save]")
  await page.waitForSelector("[data-testid=conflict]")
  await shot("conflict")

  // a delete and its undo leave a history: the version the delete removed, side by side with the one put back
  await page.goto(`${origin}/#/memory/feedback_use_pnpm_not_npm.md`)
  await page.click("[data-testid=delete]")
  await page.click("[data-testid=delete-confirm]")
  await page.click("[data-testid=toast-action]")
  await page.waitForURL(/feedback_use_pnpm_not_npm\.md$/)
  await page.waitForSelector("[data-testid=memory-body]")
  await page.evaluate(() => document.querySelectorAll("[data-testid=toast]").forEach((toast) => toast.remove()))
  await page.click("[data-testid=show-history]")
  await page.waitForSelector("[data-testid=history-entry]")
  await page.click("[data-testid=history-entry] summary")
  await page.locator("[data-testid=history]").scrollIntoViewIfNeeded()
  await shot("history")

  await page.goto(`${origin}/#/search?q=${encodeURIComponent("how do we deploy the release with the migration")}`)
  await page.waitForSelector("[data-testid=explain]")
  await shot("search")

  await page.goto(`${origin}/#/index`)
  await page.waitForSelector("[data-testid=index-section]")
  await shot("index")

  await page.goto(`${origin}/#/dreams`)
  await page.waitForSelector("[data-testid=dreams]")
  await shot("dreams")

  await page.goto(`${origin}/#/activity`)
  await page.waitForSelector("[data-testid=injections]")
  await shot("activity")

  await page.goto(`${origin}/#/health`)
  await page.waitForSelector("[data-testid=health-summary]")
  await shot("health")
} finally {
  await context.close()
  // gone before its scratch goes: a server still writing its code cache would make the removal fail
  await new Promise((resolve) => {
    ui.on("exit", resolve)
    ui.kill("SIGTERM")
  })
  fs.rmSync(profile, { recursive: true, force: true })
  fs.rmSync(scratch, { recursive: true, force: true })
}
