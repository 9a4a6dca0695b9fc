/**
 * `memdir dream` and `memdir log` end to end: the bundled CLI as a child process, a real git repository as the
 * memory directory, the real SDK against the local Messages API server of this test process. Covers the gate
 * output, a whole dream with parallel tool calls in one turn (merge, contradiction, relative date, index caps,
 * one git commit), what memdir sends, the dry run and the no-key path, and the daily log.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as MessagesApiServer from "@memdir/testing/MessagesApiServer"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, type CliRun, parseJson, runCli, scratchHomeEnv } from "./support/cli.js"

const HOUR = 3_600_000

let scratch: string
let home: string
let project: string
let projectDir: string
let memoryDir: string

const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<CliRun> =>
  runCli(args, { cwd: project, env: scratchHomeEnv(home, env) })

const json = parseJson

const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.email=t@memdir.invalid", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" })

const memoryText = (type: string, name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}`

const write = (file: string, text: string, mtime?: number) => {
  const target = path.join(memoryDir, file)
  fs.mkdirSync(path.dirname(target), { recursive: true })
  fs.writeFileSync(target, text)
  if (mtime !== undefined) fs.utimesSync(target, new Date(mtime), new Date(mtime))
}
const read = (file: string) => fs.readFileSync(path.join(memoryDir, file), "utf8")
const sessions = (n: number, mtime = Date.now()) => {
  for (let i = 0; i < n; i++) {
    const file = path.join(projectDir, `session-${i}.jsonl`)
    fs.writeFileSync(
      file,
      JSON.stringify({
        type: "user",
        sessionId: `session-${i}`,
        message: { role: "user", content: `the mobile release freeze starts Thursday (${i})` }
      }) + "\n"
    )
    fs.utimesSync(file, new Date(mtime), new Date(mtime))
  }
}
const listing = (dir: string) =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((p) => !p.startsWith(".git")).sort()

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-dream-cli-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "app")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  projectDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"))
  memoryDir = path.join(projectDir, "memory")
  fs.mkdirSync(memoryDir, { recursive: true })
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir dream (CLI, real SDK, local Messages API server)", () => {
  it.live("the gates: which one stopped it, in words and in JSON (exit 0: not due is not an error)", () =>
    Effect.gen(function*() {
      const human = yield* memdir(["dream"])
      assert.strictEqual(human.status, 0, human.stderr)
      assert.include(human.stdout, "dream: not now — stopped by the sessions gate: 0 sessions touched so far")
      assert.include(human.stdout, `(sessions are the *.jsonl transcripts in ${projectDir})`)

      // the transcripts directory can be given; the current session is not counted
      const other = path.join(scratch, "transcripts")
      fs.mkdirSync(other, { recursive: true })
      for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(other, `s${i}.jsonl`), "{}\n")
      const current = json(yield* memdir(["dream", "--json", "--transcripts", other, "--session-id", "s5"]))
      assert.isFalse(current.ran)
      assert.strictEqual(current.stoppedBy, "sessions")
      assert.strictEqual(current.gates.sessions.length, 5)

      const lock = path.join(memoryDir, ".consolidate-lock")
      fs.writeFileSync(lock, "")
      const recent = Date.now() - 2 * HOUR
      fs.utimesSync(lock, new Date(recent), new Date(recent))
      const time = json(yield* memdir(["dream", "--json"]))
      assert.strictEqual(time.stoppedBy, "time")
      assert.deepStrictEqual(time.gates.checks.map((c: any) => c.status), ["failed", "not-evaluated", "not-evaluated"])
      fs.rmSync(lock)
      fs.rmSync(path.join(memoryDir, ".dream-scan.json"), { force: true })
    }))

  it.live("dry run without a key: gates and the exact prompt, nothing written; a real run without a key: exit 13", () =>
    Effect.gen(function*() {
      write("user_role.md", memoryText("user", "Role", "Data engineer, new to React", "Data engineer.\n"))
      write("MEMORY.md", "- [Role](user_role.md) — data engineer, new to React\n")
      sessions(6)
      const before = listing(memoryDir)
      const dry = yield* memdir(["dream", "--dry-run"])
      assert.strictEqual(dry.status, 0, dry.stderr)
      assert.include(dry.stdout, "dream: dry run — the gates are open")
      assert.include(dry.stdout, "would send to claude-")
      assert.include(dry.stdout, "tools: read_file, list_dir, grep, memory_list, memory_read, memory_write")
      assert.include(dry.stdout, "transcript_search")
      assert.include(dry.stdout, "## 1. Orient")
      assert.include(dry.stdout, "- [user] user_role.md")
      assert.include(dry.stdout, "Sessions since the last consolidation (6)")
      assert.deepStrictEqual(listing(memoryDir), before, "a dry run writes nothing, not even the scan cache")

      const noKey = yield* memdir(["dream"])
      assert.strictEqual(noKey.status, 13)
      assert.include(noKey.stderr, "no model is configured: set ANTHROPIC_API_KEY")
      assert.isFalse(fs.existsSync(path.join(memoryDir, ".consolidate-lock")))
    }))

  it.live("a whole dream: parallel tool calls in one turn, memdir's report, index under its caps, one git commit", () =>
    Effect.scoped(Effect.gen(function*() {
      for (const name of fs.readdirSync(memoryDir)) fs.rmSync(path.join(memoryDir, name), { recursive: true })
      const old = Date.now() - 40 * 24 * HOUR
      write(
        "feedback_testing.md",
        memoryText("feedback", "Testing policy", "Integration tests hit the real database", "Use docker Postgres.\n"),
        old
      )
      write(
        "feedback_db_mocks.md",
        memoryText(
          "feedback",
          "No database mocks",
          "Do not mock the database in tests",
          "Never mock the database in integration tests: mocks hid a broken migration in production.\n"
        ),
        old
      )
      write(
        "project_release.md",
        memoryText(
          "project",
          "Release freeze",
          "Merge freeze for the mobile release",
          "Merge freeze starts Thursday.\n"
        )
      )
      write("project_no_freeze.md", memoryText("project", "No freeze", "No freeze this quarter", "No freeze.\n"), old)
      const dead = Array.from({ length: 230 }, (_, i) => `- [Gone ${i}](project_gone_${i}.md) — deleted by hand`)
      write(
        "MEMORY.md",
        [
          "- [Testing policy](feedback_testing.md) — integration tests hit the real database",
          "- [No database mocks](feedback_db_mocks.md) — do not mock the database",
          "- [Release freeze](project_release.md) — merge freeze for the mobile release",
          "- [No freeze](project_no_freeze.md) — no freeze this quarter",
          ...dead
        ].join("\n") + "\n"
      )
      git(memoryDir, "init", "-q", "-b", "main")
      git(memoryDir, "add", ".")
      git(memoryDir, "commit", "-qm", "memories before the dream")
      sessions(6)
      yield* memdir(["log", "Dana confirmed: the mobile freeze starts Thursday"])

      const merged = memoryText(
        "feedback",
        "Testing policy",
        "Integration tests hit the real database, never mocks",
        "Use docker Postgres; never mock the database.\n\n**Why:** mocks hid a broken migration in production.\n"
      )
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.message([
            { type: "text", text: "Reading the pair and checking the sessions." },
            { type: "tool_use", name: "memory_read", input: { path: "feedback_db_mocks.md" } },
            { type: "tool_use", name: "transcript_search", input: { query: "freeze starts" } }
          ]),
          MessagesApiServer.message([
            { type: "tool_use", name: "memory_write", input: { path: "feedback_testing.md", content: merged } },
            { type: "tool_use", name: "memory_delete", input: { path: "feedback_db_mocks.md" } },
            {
              type: "tool_use",
              name: "memory_edit",
              input: { path: "project_release.md", old_string: "Thursday", new_string: "2026-12-03" }
            },
            { type: "tool_use", name: "memory_delete", input: { path: "project_no_freeze.md" } }
          ]),
          MessagesApiServer.text("Merged the testing pair, dated the freeze, removed the contradicted memory.")
        ]
      })
      const run = yield* memdir(["dream", "--json"], {
        ANTHROPIC_API_KEY: "sk-test-dream",
        ANTHROPIC_BASE_URL: server.url,
        MEMDIR_MODEL_DREAMER: "claude-test-dreamer"
      })
      assert.strictEqual(run.status, 0, run.stderr)
      const outcome = json(run)
      assert.isTrue(outcome.ran)
      const report = outcome.report
      assert.strictEqual(report.status, "completed")
      assert.strictEqual(report.model, "claude-test-dreamer")
      assert.deepStrictEqual(report.merged.map((m: any) => [m.from, m.into]), [[
        "feedback_db_mocks.md",
        "feedback_testing.md"
      ]])
      assert.deepStrictEqual(report.deleted.map((d: any) => d.file).sort(), [
        "feedback_db_mocks.md",
        "project_no_freeze.md"
      ])
      assert.include(report.deleted.find((d: any) => d.file === "feedback_db_mocks.md").text, "broken migration")
      const release = report.updated.find((u: any) => u.file === "project_release.md")
      assert.strictEqual(release.removed, "Merge freeze starts Thursday.\n")
      // The dream's write stamps `modified:` too (docs/file-format.md#age-and-staleness).
      assert.match(release.added, /^modified: \S+\nMerge freeze starts 2026-12-03\.\n$/)
      assert.isTrue(report.index.underCaps)
      assert.strictEqual(report.index.removed.filter((r: any) => r.reason === "dead pointer").length, 230)
      assert.strictEqual(report.commit.status, "committed")

      // on disk
      const index = read("MEMORY.md")
      assert.notInclude(index, "project_gone_")
      assert.include(index, "(feedback_testing.md)")
      assert.notInclude(index, "(feedback_db_mocks.md)")
      assert.include(read("project_release.md"), "2026-12-03")
      assert.include(
        fs.readFileSync(path.join(memoryDir, report.backupDir, "feedback_db_mocks.md"), "utf8"),
        "No database mocks"
      )
      assert.match(
        git(memoryDir, "log", "-1", "--format=%s"),
        /^memdir dream: 0 created, 2 updated, 1 merged, 2 deleted/
      )
      assert.strictEqual(git(memoryDir, "rev-parse", "HEAD").trim(), report.commit.sha)
      const files = git(memoryDir, "show", "--name-only", "--format=", "HEAD").trim().split("\n")
      assert.isFalse(files.some((f) => f.startsWith(".")), `memdir's own files are not committed: ${files}`)

      // what memdir sent, through the real SDK
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 3)
      const first = requests[0]!.body
      assert.strictEqual(first.model, "claude-test-dreamer")
      assert.strictEqual(first.max_tokens, 8192)
      assert.strictEqual(MessagesApiServer.apiKeyOf(requests[0]!), "sk-test-dream")
      assert.strictEqual(first.system[0].cache_control.type, "ephemeral")
      assert.include(first.system[0].text, "## 3. Consolidate")
      const opening = first.messages[0].content.map((b: any) => b.text).join("")
      assert.include(opening, "- [feedback] feedback_db_mocks.md")
      assert.include(opening, "Dana confirmed: the mobile freeze starts Thursday")
      const tools = first.tools.map((t: any) => t.name)
      assert.includeMembers(tools, ["memory_write", "memory_edit", "memory_delete", "transcript_search", "read_file"])
      // the second turn carries both tool results; the search found the sessions
      const results = requests[1]!.body.messages.at(-1).content
      assert.deepStrictEqual(results.map((r: any) => r.type), ["tool_result", "tool_result"])
      assert.include(String(results[1].content), "session-")
      // the third turn answers the four parallel calls, none refused
      const third = requests[2]!.body.messages.at(-1).content
      assert.strictEqual(third.length, 4)
      assert.isFalse(third.some((r: any) => r.is_error === true), JSON.stringify(third))

      // human output of the next (forced) dream, and the time gate right after a dream
      const again = json(yield* memdir(["dream", "--json"]))
      assert.strictEqual(again.stoppedBy, "time")
    })))

  it.live("human report: merged/deleted text is printed, nothing disappears without a trace", () =>
    Effect.scoped(Effect.gen(function*() {
      write("user_a.md", memoryText("user", "Editor", "Uses vim with a dark theme", "Vim, dark theme.\n"))
      write(
        "user_b.md",
        memoryText("user", "Editor setup", "Uses vim with a dark theme daily", "Vim, dark theme daily.\n")
      )
      const server = yield* MessagesApiServer.make({
        replies: [
          MessagesApiServer.toolUse("memory_delete", { path: "user_b.md" }),
          MessagesApiServer.toolUse("memory_edit", { path: "user_a.md", old_string: "Vim,", new_string: "Neovim," }),
          MessagesApiServer.text("Removed a duplicate.")
        ]
      })
      const run = yield* memdir(["dream", "--force", "--no-commit"], {
        ANTHROPIC_API_KEY: "sk-test",
        ANTHROPIC_BASE_URL: server.url
      })
      assert.strictEqual(run.status, 0, run.stderr)
      assert.include(run.stdout, "dream: consolidated")
      assert.match(run.stdout, /deleted {2}user_b\.md \(copy: \.dream\/[^)]+\/user_b\.md\)/)
      assert.include(run.stdout, "  | Vim, dark theme daily.")
      assert.match(run.stdout, /updated {2}user_a\.md \(previous: \.dream\/[^)]+\/user_a\.md\)/)
      assert.include(run.stdout, "  + Neovim, dark theme.")
      assert.include(run.stdout, "Removed a duplicate.")
      assert.notInclude(run.stdout, "commit:")
      // --no-commit: the new file stays uncommitted
      assert.include(git(memoryDir, "status", "--porcelain"), "?? user_a.md")
    })))

  it.live("progress on stderr while the model is slow to answer; stdout stays one JSON document", () =>
    Effect.scoped(Effect.gen(function*() {
      write("user_c.md", memoryText("user", "Shell", "Uses fish as the login shell", "fish.\n"))
      const server = yield* MessagesApiServer.make({
        replies: [MessagesApiServer.slow(MessagesApiServer.text("Nothing to consolidate."), 1_600)]
      })
      const run = yield* memdir(["dream", "--force", "--no-commit", "--json"], {
        ANTHROPIC_API_KEY: "sk-test",
        ANTHROPIC_BASE_URL: server.url,
        MEMDIR_PROGRESS_EVERY: "400 millis"
      })
      assert.strictEqual(run.status, 0, run.stderr)
      assert.isTrue(json(run).ran)
      assert.notInclude(run.stdout, "waiting")
      assert.match(run.stderr, /^memdir dream: model call 1 to claude-\S+ started, waiting…$/m)
      const waited = [...run.stderr.matchAll(/^memdir dream: still waiting on claude-\S+ \(call 1\): (\d+\.\d) s$/gm)]
        .map((m) => Number(m[1]))
      assert.isAtLeast(waited.length, 2, run.stderr)
      assert.isAtLeast(waited[0]!, 0.3)
      for (let i = 1; i < waited.length; i++) assert.isAbove(waited[i]!, waited[i - 1]!)
      const answered = /^memdir dream: claude-\S+ answered call 1 in (\d+\.\d) s$/m.exec(run.stderr)
      assert.isNotNull(answered, run.stderr)
      assert.isAtLeast(Number(answered![1]), 1.5)
    })))
})

describe("memdir log", () => {
  it.live("appends timestamped UTC bullets to logs/YYYY/MM/YYYY-MM-DD.md; --json; --prompt names the pattern", () =>
    Effect.gen(function*() {
      const first = yield* memdir(["log", "shipped", "the", "migration"])
      assert.strictEqual(first.status, 0, first.stderr)
      const today = new Date().toISOString().slice(0, 10)
      const file = `logs/${today.slice(0, 4)}/${today.slice(5, 7)}/${today}.md`
      assert.match(first.stdout.trim(), new RegExp(`^${file}: - \\d\\d:\\d\\d:\\d\\d shipped the migration$`))
      const second = json(yield* memdir(["log", "--json", "Dana: roll out on 2026-12-09"]))
      assert.strictEqual(second.file, file)
      const text = read(file)
      assert.isTrue(text.startsWith(`# ${today} (UTC)\n\n`))
      assert.isTrue(text.endsWith(" Dana: roll out on 2026-12-09\n"))

      const prompt = yield* memdir(["log", "--prompt"])
      assert.include(prompt.stdout, `${memoryDir}/logs/YYYY/MM/YYYY-MM-DD.md`)
      assert.notInclude(prompt.stdout, today)

      const empty = yield* memdir(["log", "  "])
      assert.strictEqual(empty.status, 2)
      const disabled = yield* memdir(["log", "x"], { MEMDIR_DISABLE_AUTO_MEMORY: "1" })
      assert.strictEqual(disabled.status, 9)
      const dreamDisabled = yield* memdir(["dream"], { MEMDIR_DISABLE_AUTO_MEMORY: "1" })
      assert.strictEqual(dreamDisabled.status, 9)
    }))
})
