/**
 * The `memdir` CLI end to end: the bundled binary as a child process, a real git repo, a scratch MEMDIR_HOME.
 * Checks the machine-readable contract of every command, the exit codes and the trust rules.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath as cli, parseJson, repoRoot, scratchHomeEnv } from "./support/cli.js"

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

const git = (cwd: string, ...args: Array<string>) => execFileSync("git", args, { cwd, encoding: "utf8" })

const setMtimeDaysAgo = (file: string, days: number) => {
  const t = Date.now() / 1000 - days * 86_400 - 60
  fs.utimesSync(file, t, t)
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
    setMtimeDaysAgo(pool.stdout.trim(), 40)

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
    assert.deepStrictEqual(fs.readdirSync(dir).sort(), files)
    assert.include(fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8"), "(reference_dashboards.md)")
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
})
