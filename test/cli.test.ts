/**
 * The `memdir` CLI end to end: the bundled binary as a child process, a real git repo, a scratch MEMDIR_HOME.
 * Checks the machine-readable contract of every command, the exit codes and the trust rules.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath as cli, parseJson, repoRoot, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let home: string
let project: string

interface Run {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

const memdir = (args: ReadonlyArray<string>, options: { input?: string; env?: Record<string, string> } = {}): Run => {
  // scrubbed of ANTHROPIC_* too: with a key, recall would default to the model selector and call the real API
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: project,
    env: scratchHomeEnv(home, options.env),
    input: options.input ?? "",
    encoding: "utf8"
  })
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr }
}

const json = parseJson

/** Like `memdir`, without blocking the event loop, so the test worker keeps answering its runner meanwhile. */
const runMemdir = (args: ReadonlyArray<string>, options: { env?: Record<string, string> } = {}): Promise<Run> =>
  Effect.runPromise(runCli(args, { cwd: project, env: scratchHomeEnv(home, options.env) }))

const git = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, encoding: "utf8" })

const setMtimeDaysAgo = (file: string, days: number) => {
  const t = Date.now() / 1000 - days * 86_400 - 60
  fs.utimesSync(file, t, t)
}

/** A memory memdir wrote, as if written `days` ago: its `modified:` (which the age counts from first) and mtime. */
const backdate = (file: string, days: number) => {
  const at = new Date(Date.now() - days * 86_400_000 - 60_000).toISOString()
  fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/^modified: .*$/m, `modified: ${at}`))
  setMtimeDaysAgo(file, days)
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-cli-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "my app")
  fs.mkdirSync(home, { recursive: true })
  fs.mkdirSync(path.join(project, "src"), { recursive: true })
  git(project, "init", "-q")
  git(project, "config", "user.email", "t@example.invalid")
  git(project, "config", "user.name", "t")
  fs.writeFileSync(path.join(project, "src/db.ts"), "export const pool = 10\n")
  git(project, "add", ".")
  git(project, "commit", "-qm", "init")
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

const expectedDir = () => path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory") + "/"

describe("memdir CLI", () => {
  it("--version starts and prints the package version", () => {
    const run = memdir(["--version"])
    assert.strictEqual(run.status, 0, run.stderr)
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "apps/cli/package.json"), "utf8"))
    assert.include(run.stdout, pkg.version)
  })

  it("path resolves the default directory from the git root, also from a subdirectory", () => {
    const fromRoot = memdir(["path"])
    assert.strictEqual(fromRoot.status, 0, fromRoot.stderr)
    assert.strictEqual(fromRoot.stdout.trim(), expectedDir())
    const fromSub = memdir(["path", "--cwd", path.join(project, "src")])
    assert.strictEqual(fromSub.stdout.trim(), expectedDir())
  })

  it("an environment variable set to the empty string is set: MEMDIR_DISABLE_AUTO_MEMORY= forces memory on", () => {
    // Effect 4's default config provider drops empty values; memdir's keeps them (docs/configuration.md)
    const settings = path.join(home, ".memdir", "settings.json")
    fs.mkdirSync(path.dirname(settings), { recursive: true })
    fs.writeFileSync(settings, JSON.stringify({ autoMemoryEnabled: false }))
    try {
      assert.isFalse(json(memdir(["path", "--json"])).enabled, "the user setting turns memory off")
      const empty = json(memdir(["path", "--json"], { env: { MEMDIR_DISABLE_AUTO_MEMORY: "" } }))
      assert.isTrue(empty.enabled)
      assert.strictEqual(empty.enabledBy, "env MEMDIR_DISABLE_AUTO_MEMORY")
    } finally {
      fs.rmSync(settings)
    }
  })

  it("a warning is logged to stderr, never into --json output on stdout", () => {
    const dir = path.join(scratch, "stale-lock-memory")
    // a memory-index lock left by a writer long gone: the write breaks it and logs a warning
    const lock = path.join(dir, ".memory-index.lock")
    fs.mkdirSync(lock, { recursive: true, mode: 0o700 })
    fs.chmodSync(dir, 0o700)
    fs.writeFileSync(path.join(lock, "owner.gone.json"), "{}")
    setMtimeDaysAgo(path.join(lock, "owner.gone.json"), 1)
    const written = memdir([
      "write",
      "--memory-dir",
      dir,
      "--json",
      "--type",
      "user",
      "--name",
      "Editor",
      "--description",
      "Uses Neovim",
      "--body",
      "Neovim."
    ])
    assert.strictEqual(written.status, 0, written.stderr)
    assert.strictEqual(json(written).path, path.join(dir, "user_editor.md"))
    assert.match(written.stderr, /broke stale lock/)
  })

  it("a cloned repository's committed or linked settings.local.json is ignored, and path says why", () => {
    const cloned = path.join(scratch, "cloned repo")
    const local = path.join(cloned, ".memdir", "settings.local.json")
    fs.mkdirSync(path.dirname(local), { recursive: true })
    git(cloned, "init", "-q")
    fs.writeFileSync(local, JSON.stringify({ autoMemoryDirectory: "~/.ssh", teamMemory: true, teamRemote: "/x.git" }))
    git(cloned, "add", ".memdir/settings.local.json")
    const tracked = memdir(["path", "--json", "--cwd", cloned])
    assert.strictEqual(tracked.status, 0, tracked.stderr)
    const answer = json(tracked)
    assert.strictEqual(answer.source, "default")
    assert.notInclude(answer.memoryDir, ".ssh")
    assert.strictEqual(answer.refusedSettings.length, 1)
    assert.strictEqual(answer.refusedSettings[0].path, local)
    assert.include(answer.refusedSettings[0].reason, "tracked by git")
    assert.include(tracked.stderr, local)
    assert.include(tracked.stderr, "git rm --cached .memdir/settings.local.json")
    // a link is refused too, even to the user's own file
    git(cloned, "rm", "-q", "--cached", ".memdir/settings.local.json")
    const mine = path.join(home, "mine.json")
    fs.renameSync(local, mine)
    fs.symlinkSync(mine, local)
    const linked = memdir(["path", "--cwd", cloned])
    assert.strictEqual(linked.status, 0, linked.stderr)
    assert.notInclude(linked.stdout, ".ssh")
    assert.include(linked.stderr, "replace the link with a file")
    // an untracked regular file of the user's own is trusted
    fs.rmSync(local)
    fs.writeFileSync(local, JSON.stringify({ autoMemoryDirectory: path.join(scratch, "cloned-mem") }))
    const trusted = json(memdir(["path", "--json", "--cwd", cloned]))
    assert.strictEqual(trusted.source, "local")
    assert.strictEqual(trusted.refusedSettings, undefined)
  })

  it("init creates the directory (0700) and an empty MEMORY.md", () => {
    const run = memdir(["init"])
    assert.strictEqual(run.status, 0, run.stderr)
    const index = path.join(expectedDir(), "MEMORY.md")
    assert.strictEqual(fs.readFileSync(index, "utf8"), "")
    assert.strictEqual(fs.statSync(expectedDir()).mode & 0o777, 0o700)
  })

  it("write → ls → show → recall with staleness, and a second write updates", () => {
    const first = memdir([
      "write",
      "--type",
      "feedback",
      "--name",
      "Testing policy",
      "--description",
      "Integration tests must hit a real database, never mocks"
    ], { input: "Use the docker-compose Postgres.\n\n**Why:** mocked tests hid a broken migration.\n" })
    assert.strictEqual(first.status, 0, first.stderr)
    const file = first.stdout.trim()
    assert.strictEqual(path.basename(file), "feedback_testing_policy.md")
    assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)

    const pool = memdir([
      "write",
      "--type",
      "project",
      "--name",
      "Connection pool",
      "--description",
      "Database connection pool is capped at 10 in src/db.ts:1",
      "--body",
      "Pool max 10 (src/db.ts:1)."
    ])
    assert.strictEqual(pool.status, 0, pool.stderr)
    backdate(pool.stdout.trim(), 40)

    const index = fs.readFileSync(path.join(expectedDir(), "MEMORY.md"), "utf8")
    assert.include(index, "[Testing policy](feedback_testing_policy.md)")
    assert.include(index, "(project_connection_pool.md)")
    for (const line of index.split("\n")) assert.isAtMost(line.length, 150)

    // same memory again: updated in place, no duplicate file or line
    const again = memdir([
      "write",
      "--type",
      "feedback",
      "--name",
      "Testing policy",
      "--description",
      "Integration tests must hit the real database (docker-compose), never mocks",
      "--body",
      "Updated body"
    ])
    assert.strictEqual(again.status, 0, again.stderr)
    assert.strictEqual(again.stdout.trim(), file)
    const index2 = fs.readFileSync(path.join(expectedDir(), "MEMORY.md"), "utf8")
    assert.strictEqual(index2.split("feedback_testing_policy.md").length - 1, 1)
    assert.include(fs.readFileSync(file, "utf8"), "Updated body")

    const ls = json(memdir(["ls", "--json"]))
    assert.deepStrictEqual(ls.memories.map((m: any) => m.path).sort(), [
      "feedback_testing_policy.md",
      "project_connection_pool.md"
    ])
    const poolEntry = ls.memories.find((m: any) => m.path === "project_connection_pool.md")
    assert.strictEqual(poolEntry.type, "project")
    assert.strictEqual(poolEntry.ageDays, 40)
    assert.strictEqual(poolEntry.name, "Connection pool")
    assert.isString(poolEntry.mtime)
    assert.deepStrictEqual(ls.problems, [])
    // newest first
    assert.strictEqual(ls.memories[0].path, "feedback_testing_policy.md")

    const show = memdir(["show", "project_connection_pool.md"])
    assert.strictEqual(show.status, 0, show.stderr)
    assert.include(show.stdout, "40 days ago")
    assert.include(show.stdout, "This memory is 40 days old.")

    const recall = json(memdir(["recall", "can I raise the database connection pool size?", "--json"]))
    assert.strictEqual(recall.selector, "offline")
    assert.strictEqual(recall.candidates, 2)
    const hit = recall.selected.find((m: any) => m.path === "project_connection_pool.md")
    assert.isDefined(hit, JSON.stringify(recall))
    assert.strictEqual(hit.age, "40 days ago")
    assert.strictEqual(hit.ageDays, 40)
    assert.include(hit.caveat, "40 days old")
    assert.include(hit.content, "Pool max 10")

    const fresh = json(memdir(["recall", "should integration tests mock the database?", "--json"]))
    const policy = fresh.selected.find((m: any) => m.path === "feedback_testing_policy.md")
    assert.isDefined(policy, JSON.stringify(fresh))
    assert.strictEqual(policy.age, "today")
    assert.isNull(policy.caveat)

    const none = json(memdir(["recall", "what is the capital of Mongolia", "--json"]))
    assert.deepStrictEqual(none.selected, [])
  })

  it("prompt contains the protocol, the verify-before-recommending section and the index", () => {
    const run = memdir(["prompt"])
    assert.strictEqual(run.status, 0, run.stderr)
    assert.include(run.stdout, expectedDir())
    assert.include(run.stdout, "Before recommending from memory")
    assert.include(run.stdout, "[Testing policy](feedback_testing_policy.md)")
  })

  it("typed errors: one line + hint, distinct exit codes, JSON form", () => {
    const badType = memdir(["write", "--type", "nonsense", "--name", "x", "--description", "y", "--body", "z"])
    assert.strictEqual(badType.status, 2)
    assert.match(badType.stderr, /^memdir: invalid type "nonsense"/)
    assert.include(badType.stderr, "hint:")

    const traversal = memdir(["show", "../../etc/passwd", "--json"])
    assert.strictEqual(traversal.status, 8)
    assert.strictEqual(json(traversal).error._tag, "PathTraversalError")

    const missing = memdir(["show", "user_nobody.md"])
    assert.strictEqual(missing.status, 7)

    const badOverride = memdir(["path"], { env: { MEMDIR_MEMORY_DIR: "~" } })
    assert.strictEqual(badOverride.status, 4)
    assert.include(badOverride.stderr, "MEMDIR_MEMORY_DIR")

    const usage = memdir(["write", "--name"])
    assert.strictEqual(usage.status, 64)
  })

  it("settings trust: the committed project file cannot move memory, local settings can", () => {
    const settingsDir = path.join(project, ".memdir")
    fs.mkdirSync(settingsDir, { recursive: true })
    const evil = path.join(scratch, "ssh-lookalike")
    fs.writeFileSync(path.join(settingsDir, "settings.json"), JSON.stringify({ autoMemoryDirectory: evil }))
    assert.strictEqual(memdir(["path"]).stdout.trim(), expectedDir())

    const mine = path.join(scratch, "my-memory")
    fs.writeFileSync(path.join(settingsDir, "settings.local.json"), JSON.stringify({ autoMemoryDirectory: mine }))
    assert.strictEqual(memdir(["path"]).stdout.trim(), mine + "/")
    const flagged = path.join(scratch, "flag-memory")
    // the env override beats every settings source, the flag beats local settings
    assert.strictEqual(memdir(["path", "--memory-dir", flagged]).stdout.trim(), flagged + "/")
    assert.strictEqual(memdir(["path"], { env: { MEMDIR_MEMORY_DIR: evil } }).stdout.trim(), evil + "/")
    fs.rmSync(settingsDir, { recursive: true })
  })

  it("two worktrees of one repo share one memory", () => {
    const worktree = path.join(scratch, "wt")
    git(project, "worktree", "add", "-q", worktree)
    const run = memdir(["path", "--cwd", worktree])
    assert.strictEqual(run.stdout.trim(), expectedDir(), run.stderr)
  })

  it("doctor finds a dead link and a memory missing from the index; --fix repairs without deleting", () => {
    const dir = expectedDir()
    fs.appendFileSync(path.join(dir, "MEMORY.md"), "- [Gone](user_gone.md) — deleted by hand\n")
    fs.writeFileSync(
      path.join(dir, "reference_dashboards.md"),
      "---\nname: Dashboards\ndescription: Grafana board api-latency for p99\ntype: reference\n---\nSee grafana.\n"
    )
    const before = memdir(["doctor", "--json"])
    const codes = json(before).findings.map((f: any) => f.code)
    assert.include(codes, "dead-link")
    assert.include(codes, "missing-from-index")
    const files = fs.readdirSync(dir).sort()
    const fixed = memdir(["doctor", "--fix", "--json"])
    const after = json(fixed).findings.map((f: any) => f.code)
    assert.notInclude(after, "dead-link")
    assert.notInclude(after, "missing-from-index")
    // nothing deleted; the one new entry holds the backup of the MEMORY.md the fix rewrote
    assert.deepStrictEqual(fs.readdirSync(dir).sort(), [...files, ".doctor"].sort())
    assert.include(fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8"), "(reference_dashboards.md)")
  })

  it("doctor --fix says what it changed, line by line, and where it backed up MEMORY.md (text and JSON)", async () => {
    const dir = expectedDir()
    const index = path.join(dir, "MEMORY.md")
    fs.appendFileSync(index, "- [Gone](user_gone_again.md) — deleted by hand\n")
    const before = fs.readFileSync(index, "utf8")
    const gone = before.split("\n").indexOf("- [Gone](user_gone_again.md) — deleted by hand") + 1
    const text = await runMemdir(["doctor", "--fix"])
    assert.notInclude(text.stdout, "[object Object]")
    assert.include(
      text.stdout,
      `fixed: removed MEMORY.md:${gone} (dead-link user_gone_again.md): - [Gone](user_gone_again.md) — deleted by hand\n`
    )
    const backupLine = text.stdout.split("\n").find((l) => l.startsWith("backup: the previous MEMORY.md is at "))!
    const backup = backupLine.slice("backup: the previous MEMORY.md is at ".length)
    assert.isTrue(backup.startsWith(path.join(dir, ".doctor") + "/"), backup)
    assert.strictEqual(fs.readFileSync(backup, "utf8"), before)
    assert.strictEqual(fs.statSync(backup).mode & 0o777, 0o600)
    assert.notInclude(fs.readFileSync(index, "utf8"), "user_gone_again.md")

    fs.appendFileSync(index, "- [Gone](user_gone_twice.md) — deleted twice\n")
    const again = fs.readFileSync(index, "utf8")
    const out = json(await runMemdir(["doctor", "--fix", "--json"]))
    assert.deepStrictEqual(out.fixed.changes.map((c: any) => [c.action, c.code, c.path]), [
      ["removed-line", "dead-link", "user_gone_twice.md"]
    ])
    assert.strictEqual(out.fixed.changes[0].text, "- [Gone](user_gone_twice.md) — deleted twice")
    assert.match(out.fixed.backup, /^\.doctor\/[^/]+\/MEMORY\.md$/)
    assert.strictEqual(fs.readFileSync(path.join(dir, out.fixed.backup), "utf8"), again)

    const idle = await runMemdir(["doctor", "--fix"])
    assert.include(idle.stdout, "fixed: nothing to repair")
    assert.notInclude(idle.stdout, "backup:")
  })

  it("doctor explains a directory not in memdir's shape: prose index, name prefix vs type, links out", async () => {
    const memoryDir = path.join(scratch, "old-style", "memory")
    fs.mkdirSync(memoryDir, { recursive: true })
    const env = { MEMDIR_MEMORY_DIR: memoryDir }
    fs.copyFileSync(
      path.join(repoRoot, "packages/core/test/fixtures/prose-index/MEMORY.md"),
      path.join(memoryDir, "MEMORY.md")
    )
    const prose = await runMemdir(["doctor"], { env })
    assert.strictEqual(prose.status, 0, prose.stderr)
    assert.notInclude(prose.stdout, "is healthy")
    assert.match(prose.stdout, /^warning prose-index \(1\)\n {2}MEMORY\.md: 162 lines of notes without one index line/m)
    assert.match(prose.stdout, /^ {2}fix: Split the prose into one memory file per topic/m)
    assert.include((await runMemdir(["ls"], { env })).stdout, "no memories in")

    fs.writeFileSync(
      path.join(memoryDir, "feedback_deploys.md"),
      "---\nname: Deploys\ndescription: Deploys happen on Fridays\ntype: project\n---\nFridays.\n"
    )
    fs.writeFileSync(
      path.join(memoryDir, "MEMORY.md"),
      "- [Deploys](feedback_deploys.md) — Fridays\n- [Secrets](../../home/.ssh/notes.md) — elsewhere\n"
    )
    const shape = json(await runMemdir(["doctor", "--json"], { env }))
    const byCode = (code: string) => shape.findings.find((f: any) => f.code === code)
    assert.deepStrictEqual(shape.findings.map((f: any) => f.code).sort(), ["link-outside", "type-prefix-mismatch"])
    assert.strictEqual(byCode("type-prefix-mismatch").path, "feedback_deploys.md")
    assert.include(byCode("type-prefix-mismatch").fix, "project_deploys.md")
    assert.deepStrictEqual([byCode("link-outside").path, byCode("link-outside").line], ["../../home/.ssh/notes.md", 2])
    assert.include(byCode("link-outside").message, "outside the memory directory")
  })

  it("terminal escapes from memory files never reach the terminal raw; JSON keeps the exact text", async () => {
    const memoryDir = path.join(scratch, "hostile", "memory")
    fs.mkdirSync(path.join(memoryDir, "team"), { recursive: true })
    const env = { MEMDIR_MEMORY_DIR: memoryDir, MEMDIR_TEAM_MEMORY: "1" }
    const hyperlink = "\u001b]8;;http://evil\u0007click\u001b]8;;\u0007"
    const description = `${hyperlink} then \u001b[2J cleared`
    const hostile = (name: string) =>
      `---\nname: ${name}\u001b[2J\ndescription: ${description}\ntype: project\n---\nbody \u001b[2J \u202eevil\n`
    fs.writeFileSync(path.join(memoryDir, "project_hostile.md"), hostile("Hostile"))
    fs.writeFileSync(path.join(memoryDir, "team", "project_teammate.md"), hostile("Teammate"))
    fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), "")
    const runs = {
      ls: await runMemdir(["ls"], { env }),
      "team ls": await runMemdir(["team", "ls"], { env }),
      show: await runMemdir(["show", "project_hostile.md"], { env }),
      doctor: await runMemdir(["doctor"], { env })
    }
    for (const [command, run] of Object.entries(runs)) {
      assert.strictEqual(run.status, 0, `${command}: ${run.stderr}`)
      for (const raw of ["\u001b", "\u0007", "\u202e"]) {
        assert.notInclude(run.stdout + run.stderr, raw, `${command} printed ${JSON.stringify(raw)} raw`)
      }
    }
    assert.include(runs.ls.stdout, "Hostile␛[2J (today) — ␛]8;;http://evil␇click␛]8;;␇ then ␛[2J cleared")
    assert.include(runs["team ls"].stdout, "Teammate␛[2J")
    assert.include(runs["team ls"].stdout, "␛]8;;http://evil␇click")
    assert.include(runs.show.stdout, "body ␛[2J \\u{202e}evil")
    assert.include(runs.doctor.stdout, "\n  project_hostile.md: Hostile␛[2J has no line in MEMORY.md")

    const listing = json(await runMemdir(["ls", "--json"], { env }))
    assert.strictEqual(listing.memories.find((m: any) => m.path === "project_hostile.md").description, description)
    assert.include(
      json(await runMemdir(["show", "project_hostile.md", "--json"], { env })).content,
      "body \u001b[2J \u202eevil"
    )
  })

  it("hints name the docs that exist", async () => {
    const disabled = await runMemdir(["write", "--type", "user", "--name", "x", "--description", "y", "--body", "z"], {
      env: { MEMDIR_DISABLE_AUTO_MEMORY: "1" }
    })
    assert.include(disabled.stderr, "hint: auto memory is off for this project; see docs/configuration.md")
    assert.isTrue(fs.existsSync(path.join(repoRoot, "docs/configuration.md")))
    const team = await runMemdir(["team", "ls"])
    assert.include(team.stderr, "see docs/team-memory.md")
    assert.isTrue(fs.existsSync(path.join(repoRoot, "docs/team-memory.md")))
  })
  it("ls reports bad files as problems and still lists the good ones", () => {
    const dir = expectedDir()
    fs.writeFileSync(path.join(dir, "notes.md"), "just text, no frontmatter\n")
    const ls = json(memdir(["ls", "--json"]))
    assert.isTrue(ls.memories.length >= 2)
    const problem = ls.problems.find((p: any) => p.path === "notes.md")
    assert.isDefined(problem)
    assert.strictEqual(problem.code, "missing-frontmatter")
    fs.rmSync(path.join(dir, "notes.md"))
  })

  it("ls --json streams a 5k-file listing as one JSON document of the same shape, newest first", () => {
    const dir = path.join(scratch, "big-memory")
    fs.mkdirSync(path.join(dir, "team"), { recursive: true })
    const now = Date.now() / 1000
    const expected: Array<Record<string, unknown>> = []
    for (let i = 0; i < 5000; i++) {
      const relative = i % 10 === 3 ? `team/project_m${i}.md` : `project_m${i}.md`
      const description = i === 7 ? "quotes \" and a tab\t and ümlauts" : `description ${i}`
      const file = path.join(dir, relative)
      fs.writeFileSync(
        file,
        `---\nname: Memory ${i}\ndescription: ${JSON.stringify(description)}\ntype: project\n---\n\nBody ${i}.\n`
      )
      // Memory i is i hours old (plus a minute): a distinct mtime each, newest first by index.
      const mtime = Math.floor(now - i * 3600 - 60)
      fs.utimesSync(file, mtime, mtime)
      expected.push({
        path: relative,
        scope: i % 10 === 3 ? "team" : "private",
        name: `Memory ${i}`,
        description,
        type: "project",
        mtime: new Date(mtime * 1000).toISOString()
      })
    }
    fs.writeFileSync(path.join(dir, "broken.md"), "no frontmatter\n")
    // ~2 MB of JSON: more than spawnSync's default 1 MiB buffer.
    const run = spawnSync(process.execPath, [cli, "ls", "--json"], {
      cwd: project,
      env: scratchHomeEnv(home, { MEMDIR_MEMORY_DIR: dir, MEMDIR_TEAM_MEMORY: "1" }),
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024
    })
    assert.strictEqual(run.status, 0, run.stderr)
    const ls = JSON.parse(run.stdout)
    assert.deepStrictEqual(Object.keys(ls), ["memoryDir", "memories", "problems"])
    assert.strictEqual(ls.memories.length, 5000)
    assert.deepStrictEqual(
      ls.memories.map((m: any) => ({
        path: m.path,
        scope: m.scope,
        name: m.name,
        description: m.description,
        type: m.type,
        mtime: m.mtime
      })),
      expected
    )
    for (const m of ls.memories) {
      assert.deepStrictEqual(Object.keys(m), [
        "path",
        "scope",
        "name",
        "description",
        "type",
        "mtime",
        "written",
        "writtenFrom",
        "ageDays",
        "age"
      ])
      assert.isNumber(m.ageDays)
      assert.isString(m.age)
    }
    assert.strictEqual(ls.memories[4999].ageDays, Math.floor((4999 * 3600 + 60) / 86_400))
    assert.deepStrictEqual(ls.problems.map((p: any) => [p.path, p.code]), [["broken.md", "missing-frontmatter"]])
    // Byte for byte what the whole-document pretty printer wrote before.
    assert.strictEqual(run.stdout, JSON.stringify(ls, null, 2) + "\n")

    const empty = path.join(scratch, "empty-memory")
    fs.mkdirSync(empty)
    const none = memdir(["ls", "--json"], { env: { MEMDIR_MEMORY_DIR: empty } })
    assert.strictEqual(
      none.stdout,
      JSON.stringify({ memoryDir: JSON.parse(none.stdout).memoryDir, memories: [], problems: [] }, null, 2) + "\n"
    )
  })

  it("disabled auto memory: prompt prints nothing, write refuses", () => {
    const prompt = memdir(["prompt"], { env: { MEMDIR_DISABLE_AUTO_MEMORY: "1" } })
    assert.strictEqual(prompt.status, 0)
    assert.strictEqual(prompt.stdout, "")
    const write = memdir(["write", "--type", "user", "--name", "x", "--description", "y", "--body", "z"], {
      env: { MEMDIR_DISABLE_AUTO_MEMORY: "1" }
    })
    assert.strictEqual(write.status, 9)
  })

  // These run the CLI without blocking the event loop (runCli), so the test worker keeps answering its runner.
  const memdirAsync = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    Effect.runPromise(runCli(args, { cwd: project, env: scratchHomeEnv(home, env) }).pipe(Effect.timeout("60 seconds")))
  const writeFile = (file: string, body = "b", env: Record<string, string> = {}) =>
    memdirAsync(
      ["write", "--type", "project", "--name", "P", "--description", "d", "--body", body, "--file", file, "--json"],
      env
    )

  it("write --file goes through the one door: logs/, MEMORY.md, .dream/, .team.git/ and forged names refused", async () => {
    const dir = expectedDir()
    fs.mkdirSync(path.join(dir, "logs/2026/03"), { recursive: true })
    const log = path.join(dir, "logs/2026/03/2026-03-05.md")
    fs.writeFileSync(log, "- 10:00:00 first\n")
    const write = writeFile
    for (const file of ["logs/2026/03/2026-03-05.md", "MEMORY.md", ".dream/state.md", ".team.git/config.md"]) {
      const run = await write(file)
      assert.strictEqual(run.status, 2, `${file}: ${run.stdout}`)
      assert.strictEqual(json(run).error._tag, "InvalidMemoryInputError", file)
    }
    assert.strictEqual(fs.readFileSync(log, "utf8"), "- 10:00:00 first\n")
    assert.isFalse(fs.existsSync(path.join(dir, ".dream")))
    assert.isFalse(fs.existsSync(path.join(dir, ".team.git")))
    // names that forge index lines or terminal output
    const forged = await write("a\n## INJECTED\nb.md")
    assert.strictEqual(forged.status, 8, forged.stdout)
    assert.notInclude(fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8"), "INJECTED")
  })

  it("write --file team/… obeys the team rules: off → refused, on → secret refused, team/MEMORY.md line kept", async () => {
    const dir = expectedDir()
    const write = writeFile
    // team/ through --file: refused while team memory is off; on, the team rules hold (secret, index)
    assert.strictEqual((await write("team/k.md")).status, 14)
    const on = { MEMDIR_TEAM_MEMORY: "1" }
    const secret = await write("team/k.md", `deploy key AKIA${"2Z3Y4X5W6V7UTSRQ"}`, on)
    assert.strictEqual(secret.status, 15, secret.stdout)
    assert.strictEqual(json(secret).error._tag, "SecretDetectedError")
    assert.isFalse(fs.existsSync(path.join(dir, "team/k.md")))
    assert.strictEqual((await write("team/MEMORY.md", "b", on)).status, 2)
    const teamWrite = await write("team/project_k.md", "shared", on)
    assert.strictEqual(teamWrite.status, 0, teamWrite.stderr)
    assert.include(fs.readFileSync(path.join(dir, "team/MEMORY.md"), "utf8"), "(project_k.md)")
    fs.rmSync(path.join(dir, "team"), { recursive: true })
  })

  it("show answers a FIFO at once and refuses a link out of the memory directory", async () => {
    const dir = expectedDir()
    // show: a FIFO answers at once, a link out is refused
    const pipe = path.join(dir, "feedback_pipe.md")
    execFileSync("mkfifo", [pipe])
    const outside = path.join(scratch, "outside-secret.md")
    fs.writeFileSync(outside, "---\nname: S\ndescription: s\ntype: user\n---\n\nsecret\n")
    const link = path.join(dir, "reference_out.md")
    fs.symlinkSync(outside, link)
    try {
      const fifo = await memdirAsync(["show", "feedback_pipe.md", "--json"])
      assert.strictEqual(fifo.status, 8, fifo.stdout)
      const out = await memdirAsync(["show", "reference_out.md", "--json"])
      assert.strictEqual(out.status, 8, out.stdout)
      assert.strictEqual(json(out).error.reason, "symlink-escape")
      assert.notInclude(out.stdout, "secret\n")
    } finally {
      fs.rmSync(pipe)
      fs.rmSync(link)
    }
  })

  it("usage errors (exit 64) are a JSON document on stdout under --json, and text on stderr", async () => {
    const unknown = await runMemdir(["ls", "--bogus", "--json"])
    assert.strictEqual(unknown.status, 64)
    const error = json(unknown).error
    assert.strictEqual(error._tag, "UsageError")
    assert.strictEqual(error.exitCode, 64)
    assert.include(error.message, "--bogus")
    assert.notMatch(error.message, /\u001b/)
    const command = await runMemdir(["nosuch", "--json"])
    assert.strictEqual(command.status, 64)
    assert.include(json(command).error.message, "'recall'")
    const missing = await runMemdir(["write", "--json", "--name"])
    assert.strictEqual(missing.status, 64)
    assert.strictEqual(json(missing).error._tag, "UsageError")
    // without --json: nothing on stdout, the text on stderr
    const text = await runMemdir(["ls", "--bogus"])
    assert.strictEqual(text.status, 64)
    assert.strictEqual(text.stdout, "")
    assert.include(text.stderr, "--bogus")
  })

  it("--cwd naming a missing directory is an input error with a hint (a file: a usage error); no memory is made", async () => {
    const projects = path.join(home, ".memdir", "projects")
    const before = fs.existsSync(projects) ? fs.readdirSync(projects) : []
    const missing = path.join(scratch, "no such project")
    for (const args of [["path"], ["write", "--type", "user", "--name", "n", "--description", "d", "--body", "b"]]) {
      const run = await runMemdir([...args, "--cwd", missing])
      assert.strictEqual(run.status, 2, run.stderr)
      assert.include(run.stderr, `invalid --cwd ${JSON.stringify(missing)}: no such directory`)
      assert.include(run.stderr, "hint: --cwd names the project directory")
    }
    const init = await runMemdir(["init", "--cwd", missing])
    assert.strictEqual(init.status, 2)
    const file = path.join(project, "src/db.ts")
    // a file: effect/cli's directory flag refuses it as a usage error, JSON under --json
    const notDir = await runMemdir(["ls", "--json", "--cwd", file])
    assert.strictEqual(notDir.status, 64)
    assert.strictEqual(json(notDir).error._tag, "UsageError")
    assert.deepStrictEqual(fs.existsSync(projects) ? fs.readdirSync(projects) : [], before)
    assert.isFalse(fs.existsSync(missing))
  })

  it("a relative or empty --memory-dir is refused (exit 4, as docs/configuration.md says), nothing created", async () => {
    for (const value of ["relative-mem", "./mem", ""]) {
      const run = await runMemdir([
        "write",
        "--type",
        "user",
        "--name",
        "n",
        "--description",
        "d",
        "--body",
        "b",
        "--memory-dir",
        value,
        "--json"
      ])
      assert.strictEqual(run.status, 4, run.stdout)
      assert.deepInclude(json(run).error, { _tag: "InvalidMemoryDirError", source: "flag --memory-dir", value })
    }
    assert.isFalse(fs.existsSync(path.join(project, "relative-mem")))
    assert.isFalse(fs.existsSync(path.join(project, "mem")))
    const text = await runMemdir(["path", "--memory-dir", "relative-mem"])
    assert.include(text.stderr, "hint: give an absolute path or ~/…")
  })

  it("show of a directory says so (no EISDIR, no I/O advice); input-error hints name the command that ran", async () => {
    const dir = path.join(expectedDir(), "some-dir")
    fs.mkdirSync(dir, { recursive: true })
    try {
      const text = await runMemdir(["show", "some-dir"])
      assert.strictEqual(text.status, 2)
      assert.include(text.stderr, "memdir: invalid FILE \"some-dir\": is a directory, not a memory file")
      assert.include(text.stderr, "hint: give a memory file; `memdir ls` lists the memories")
      assert.notInclude(text.stderr, "EISDIR")
      assert.notInclude(text.stderr, "free space")
      assert.deepInclude(json(await runMemdir(["show", "some-dir", "--json"])).error, { rule: "directory" })
    } finally {
      fs.rmSync(dir, { recursive: true })
    }
    const recall = await runMemdir(["recall", "--max", "0", "anything"])
    assert.strictEqual(recall.status, 2)
    assert.include(recall.stderr, "hint: see `memdir recall --help`")
    const write = await runMemdir(["write", "--type", "nonsense", "--name", "x", "--description", "y", "--body", "z"])
    assert.include(write.stderr, "hint: see `memdir write --help`")
    const teamWrite = await runMemdir(["team", "write", "x.md"], { env: { MEMDIR_TEAM_MEMORY: "1" } })
    assert.include(teamWrite.stderr, "`memdir team write --help`")
  })
})
