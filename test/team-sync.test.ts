/**
 * Team memory end to end: the bundled `memdir` binary as child processes, two teammates (alice and bob, each with
 * a scratch HOME, settings and project) sharing a bare git "remote" in a temp dir, and a hostile teammate
 * (mallory) who crafts commits with git's plumbing. Git runs isolated from the machine's configuration. Every
 * link mallory commits points into the scratch tree or is a git object that is never checked out.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath as cli, parseJson, scrubbedEnv } from "./support/cli.js"

let scratch: string
let remote: string
let mallory: string

const gitEnv = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" }

const baseEnv = (): Record<string, string> => {
  const env = scrubbedEnv()
  for (const k of Object.keys(env)) if (k.startsWith("GIT_")) delete env[k]
  return { ...env, ...gitEnv }
}

interface Teammate {
  readonly name: string
  readonly home: string
  readonly project: string
}

const teammate = (name: string, settings: Record<string, unknown>): Teammate => {
  const home = path.join(scratch, name, "home")
  const project = path.join(scratch, name, "project")
  fs.mkdirSync(path.join(home, ".memdir"), { recursive: true })
  fs.mkdirSync(project, { recursive: true })
  fs.writeFileSync(path.join(home, ".memdir", "settings.json"), JSON.stringify(settings))
  return { name, home, project }
}

const envOf = (who: Teammate, extra: Record<string, string> = {}) => ({
  ...baseEnv(),
  HOME: who.home,
  MEMDIR_HOME: path.join(who.home, ".memdir"),
  ...extra
})

interface Run {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI as a child process; asynchronous, so two can run at once and the test worker stays responsive. */
const memdir = (
  who: Teammate,
  args: ReadonlyArray<string>,
  options: { input?: string; env?: Record<string, string> } = {}
): Promise<Run> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: who.project, env: envOf(who, options.env) })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resolve({ status: code ?? -1, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

const json = parseJson

const git = (cwd: string, args: ReadonlyArray<string>, input?: string) =>
  execFileSync("git", args, {
    cwd,
    input,
    encoding: "utf8",
    // git's own warnings about mallory's trees (hasDotdot) are expected: keep them out of the test output
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...baseEnv(),
      GIT_AUTHOR_NAME: "mallory",
      GIT_AUTHOR_EMAIL: "m@memdir.invalid",
      GIT_COMMITTER_NAME: "mallory",
      GIT_COMMITTER_EMAIL: "m@memdir.invalid"
    }
  })

/**
 * `<MEMDIR_HOME>/projects/<sanitized project>/memory/team` (docs/configuration.md), without spending a process on it.
 */
const teamDirOf = (who: Teammate) =>
  path.join(who.home, ".memdir", "projects", who.project.replace(/[^A-Za-z0-9]/g, "-"), "memory", "team")

const listTree = (dir: string): Array<string> =>
  fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as Array<string>).sort() : []

const remoteFiles = () => git(scratch, ["--git-dir", remote, "ls-tree", "-r", "--name-only", "main"]).trim().split("\n")

const writeTeam = async (who: Teammate, type: string, name: string, description: string, body: string) => {
  const run = await memdir(who, ["write", "--team", "--type", type, "--name", name, "--description", description], {
    input: body
  })
  assert.strictEqual(run.status, 0, run.stderr)
  return run.stdout.trim()
}

const sync = async (who: Teammate) => {
  const run = await memdir(who, ["team", "sync", "--json"])
  assert.strictEqual(run.status, 0, `${who.name}: ${run.stdout}\n${run.stderr}`)
  return json(run)
}

let alice: Teammate
let bob: Teammate

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-team-sync-")))
  remote = path.join(scratch, "remote.git")
  git(scratch, ["init", "-q", "--bare", "-b", "main", remote])
  mallory = path.join(scratch, "mallory")
  alice = teammate("alice", { teamMemory: true, teamRemote: remote })
  bob = teammate("bob", { teamMemory: true, teamRemote: remote })
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir team (end to end)", () => {
  it("is off by default and with auto memory off; a project can neither switch it on nor pick the remote", async () => {
    const carol = teammate("carol", {})
    fs.mkdirSync(path.join(carol.project, ".memdir"), { recursive: true })
    fs.writeFileSync(
      path.join(carol.project, ".memdir", "settings.json"),
      JSON.stringify({ teamMemory: true, teamRemote: path.join(scratch, "loot.git") })
    )
    const [off, noRemote, autoOff] = await Promise.all([
      memdir(carol, ["team", "sync", "--json"]),
      // On by env, but the project's remote is not trusted: there is no remote.
      memdir(carol, ["team", "sync", "--json"], { env: { MEMDIR_TEAM_MEMORY: "1" } }),
      memdir(alice, ["team", "sync", "--json"], { env: { MEMDIR_DISABLE_AUTO_MEMORY: "1" } })
    ])
    assert.strictEqual(off.status, 14, off.stderr)
    assert.strictEqual(json(off).error._tag, "TeamMemoryDisabledError")
    assert.strictEqual(noRemote.status, 16)
    assert.strictEqual(json(noRemote).error.step, "configure")
    assert.isFalse(fs.existsSync(path.join(scratch, "loot.git")))
    assert.strictEqual(autoOff.status, 9)
  })

  it("write --team, team write, sync; bob sees it in team ls, recall (scope team) and the prompt", async () => {
    // Two writers of one team/ at once: the team lock serialises them, neither loses its index line.
    const [, raw] = await Promise.all([
      writeTeam(alice, "reference", "Dashboards", "Checkout latency dashboards on grafana.internal", "d/checkout"),
      memdir(alice, ["team", "write", "feedback_real_db.md"], {
        input: "---\nname: Real DB\ndescription: Integration tests must never mock the database\ntype: feedback\n" +
          "---\n\nUse the docker Postgres.\n"
      })
    ])
    assert.strictEqual(raw.status, 0, raw.stderr)
    const pushed = await sync(alice)
    assert.isTrue(pushed.pushed)
    assert.deepStrictEqual(remoteFiles(), ["MEMORY.md", "feedback_real_db.md", "reference_dashboards.md"])

    const received = await sync(bob)
    assert.strictEqual(received.merge, "fast-forward")
    const [ls, recall, prompt, contradicting] = await Promise.all([
      memdir(bob, ["team", "ls", "--json"]),
      memdir(bob, ["recall", "--json", "where", "are", "the", "checkout", "latency", "dashboards"]),
      memdir(bob, ["prompt"]),
      // The cross-check: private feedback contradicting team feedback is saved, with a warning.
      memdir(bob, [
        "write",
        "--type",
        "feedback",
        "--name",
        "Mock DB",
        "--description",
        "Mock the database in integration tests for speed"
      ], { input: "Faster CI.\n" })
    ])
    assert.deepStrictEqual(json(ls).memories.map((m: any) => m.path).sort(), [
      "team/feedback_real_db.md",
      "team/reference_dashboards.md"
    ])
    assert.deepStrictEqual(json(recall).selected.map((m: any) => [m.path, m.scope]), [[
      "team/reference_dashboards.md",
      "team"
    ]])
    assert.include(prompt.stdout, "## Team memory", prompt.stderr + " status " + prompt.status)
    assert.include(prompt.stdout, "- [Dashboards](reference_dashboards.md)")
    assert.strictEqual(contradicting.status, 0, contradicting.stderr)
    assert.match(contradicting.stderr, /warning: this may contradict team feedback team\/feedback_real_db\.md/)
  })

  it("refuses a hostile update whole (link to /etc, traversal, oversized, secret), then takes an honest one", async () => {
    git(scratch, ["clone", "-q", remote, mallory])
    const before = git(scratch, ["--git-dir", remote, "rev-parse", "main"]).trim()
    const blob = (content: string) => git(mallory, ["hash-object", "-w", "--stdin"], content).trim()
    const x = blob("---\nname: X\ndescription: x\ntype: project\n---\n\nx\n")
    const inner = git(mallory, ["mktree"], `100644 blob ${x}\tx.md\n`).trim()
    const dotdot = git(mallory, ["mktree"], `040000 tree ${inner}\t..\n`).trim()
    const base = git(mallory, ["ls-tree", "HEAD"]).trim()
    const hostile = [
      base,
      `120000 blob ${blob("/etc")}\tetc`,
      `120000 blob ${blob(path.join(scratch, "alice"))}\tevil`,
      `040000 tree ${dotdot}\t..`,
      `100644 blob ${blob("x".repeat(300_000))}\tproject_big.md`,
      `100644 blob ${blob(`aws ${"AKIA" + "2Z3Y4X5W6V7UTSRQ"}\n`)}\treference_keys.md`,
      `100644 blob ${blob("---\nname: Honest\ndescription: h\ntype: project\n---\n\nh\n")}\tproject_honest.md`
    ].join("\n") + "\n"
    const tree = git(mallory, ["mktree"], hostile).trim()
    const commit = git(mallory, ["commit-tree", tree, "-p", "HEAD", "-m", "update"]).trim()
    git(mallory, ["push", "-q", "origin", `${commit}:refs/heads/main`])

    const team = teamDirOf(alice)
    const teamBefore = listTree(team)
    // Everything alice has outside git's own store (fetched objects land there, inspected, never checked out).
    const outsideGit = () => listTree(path.join(scratch, "alice")).filter((f) => !f.includes(".team.git"))
    const aliceTreeBefore = outsideGit()
    const refused = await memdir(alice, ["team", "sync", "--json"])
    assert.strictEqual(refused.status, 17, refused.stderr)
    const error = json(refused).error
    assert.strictEqual(error._tag, "TeamSyncRejectedError")
    assert.strictEqual(error.direction, "incoming")
    assert.include(error.message, "nothing was merged")
    const reasons = Object.fromEntries(error.violations.map((v: any) => [v.path, v.reason]))
    assert.deepInclude(reasons, {
      etc: "symlink",
      evil: "symlink",
      "../../x.md": "escapes-root",
      "project_big.md": "oversized",
      "reference_keys.md": "secret"
    })
    assert.deepStrictEqual(listTree(team), teamBefore)
    assert.deepStrictEqual(outsideGit(), aliceTreeBefore)
    assert.isFalse(fs.existsSync(path.join(scratch, "x.md")))

    // The hostile commit is dropped from the remote; bob's honest change comes through.
    git(scratch, ["--git-dir", remote, "update-ref", "refs/heads/main", before])
    await writeTeam(bob, "project", "Freeze", "Merge freeze 2026-03-05 to 2026-03-09", "mobile release")
    await sync(bob)
    const accepted = await sync(alice)
    assert.strictEqual(accepted.merge, "fast-forward")
    assert.include(listTree(team), "project_freeze.md")
  })

  it("a likely secret is never pushed: a clear error naming the file and the pattern", async () => {
    const team = teamDirOf(alice)
    const head = git(scratch, ["--git-dir", remote, "rev-parse", "main"]).trim()
    fs.writeFileSync(
      path.join(team, "reference_deploy.md"),
      "---\nname: Deploy\ndescription: deploy\ntype: reference\n---\n\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n"
    )
    const run = await memdir(alice, ["team", "sync"])
    assert.strictEqual(run.status, 15)
    assert.include(run.stderr, "team/reference_deploy.md")
    assert.include(run.stderr, "private-key")
    assert.strictEqual(git(scratch, ["--git-dir", remote, "rev-parse", "main"]).trim(), head)
    fs.rmSync(path.join(team, "reference_deploy.md"))
  })

  it("two people editing one memory at once: both versions survive, doctor reports the conflict", async () => {
    await Promise.all([
      writeTeam(alice, "project", "Freeze", "Merge freeze 2026-03-05 to 2026-03-09", "alice: moved to 2026-03-06"),
      writeTeam(bob, "project", "Freeze", "Merge freeze 2026-03-05 to 2026-03-09", "bob: extended to 2026-03-10")
    ])
    await sync(alice)
    const merged = await sync(bob)
    assert.strictEqual(merged.merge, "merged")
    assert.strictEqual(merged.conflicts.length, 1)
    const copy: string = merged.conflicts[0].copy
    const team = teamDirOf(bob)
    assert.include(fs.readFileSync(path.join(team, "project_freeze.md"), "utf8"), "bob: extended")
    assert.include(fs.readFileSync(path.join(team, copy.slice("team/".length)), "utf8"), "alice: moved")

    const [doctor, ls] = await Promise.all([memdir(bob, ["doctor", "--json"]), memdir(bob, ["team", "ls", "--json"])])
    const findings = json(doctor).findings.filter((f: any) => f.code === "team-conflict")
    assert.deepStrictEqual(findings.map((f: any) => f.path), [copy])
    assert.deepStrictEqual(json(ls).conflicts, [{ path: copy, conflictsWith: "team/project_freeze.md" }])
  })

  it("two team sync processes at once, and both teammates at once: all succeed, the repos agree", async () => {
    await writeTeam(alice, "reference", "Runbook", "Deploy runbook in the wiki", "wiki/deploy")
    const same = await Promise.all([
      memdir(alice, ["team", "sync", "--json"]),
      memdir(alice, ["team", "sync", "--json"])
    ])
    for (const run of same) assert.strictEqual(run.status, 0, run.stderr)
    // Serialised by the team lock: one merges and pushes, the other finds nothing left to do.
    assert.deepStrictEqual(same.map((run) => JSON.parse(run.stdout).pushed).sort(), [false, true])

    await Promise.all([
      writeTeam(alice, "reference", "Tracker", "Bugs in linear.app/acme", "acme"),
      writeTeam(bob, "reference", "Chat", "Incidents in #ops on slack", "ops")
    ])
    const both = await Promise.all([memdir(alice, ["team", "sync", "--json"]), memdir(bob, ["team", "sync", "--json"])])
    for (const run of both) assert.strictEqual(run.status, 0, run.stderr)
    // The remote has both changes now; whoever pushed first takes the other's (nothing left to push: no race).
    await Promise.all([sync(alice), sync(bob)])
    const files = remoteFiles()
    for (const file of ["reference_runbook.md", "reference_tracker.md", "reference_chat.md"]) {
      assert.include(files, file)
    }
    const head = git(scratch, ["--git-dir", remote, "rev-parse", "main"]).trim()
    for (const who of [alice, bob]) {
      const gitDir = path.join(path.dirname(teamDirOf(who)), ".team.git")
      assert.strictEqual(git(scratch, ["--git-dir", gitDir, "rev-parse", "HEAD"]).trim(), head)
      assert.strictEqual(
        git(scratch, ["--git-dir", gitDir, "--work-tree", teamDirOf(who), "status", "--porcelain"]),
        ""
      )
      git(scratch, ["--git-dir", gitDir, "fsck", "--no-progress"])
      assert.deepStrictEqual(listTree(teamDirOf(who)).filter((f) => f.endsWith(".md")), files.slice().sort())
    }
  })
  it("run from a project's post-commit hook (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE set): syncs, project untouched", async () => {
    const dave = teammate("dave", { teamMemory: true, teamRemote: remote })
    await writeTeam(dave, "reference", "Hooked", "Synced from a post-commit hook", "via the hook")
    const projectGit = (args: ReadonlyArray<string>) =>
      execFileSync("git", ["-c", "user.name=dave", "-c", "user.email=d@memdir.invalid", ...args], {
        cwd: dave.project,
        encoding: "utf8",
        env: envOf(dave)
      })
    projectGit(["init", "-q", "-b", "main"])
    const out = path.join(scratch, "dave-hook")
    fs.writeFileSync(
      path.join(dave.project, ".git", "hooks", "post-commit"),
      "#!/bin/sh\n" +
        `export GIT_DIR="$PWD/.git" GIT_WORK_TREE="$PWD" GIT_INDEX_FILE="$PWD/.git/index"\n` +
        `"${process.execPath}" "${cli}" team sync --json > "${out}.json" 2> "${out}.err"\n` +
        `echo $? > "${out}.code"\n`,
      { mode: 0o755 }
    )
    fs.writeFileSync(path.join(dave.project, "README.md"), "the project\n")
    projectGit(["add", "README.md"])
    projectGit(["commit", "-qm", "project"])
    const stderr = fs.readFileSync(`${out}.err`, "utf8")
    assert.strictEqual(fs.readFileSync(`${out}.code`, "utf8").trim(), "0", stderr)
    assert.isTrue(JSON.parse(fs.readFileSync(`${out}.json`, "utf8")).pushed, stderr)
    assert.include(remoteFiles(), "reference_hooked.md")
    // The project's repository holds its one commit and README.md, nothing of memdir's.
    assert.strictEqual(projectGit(["rev-list", "--count", "HEAD"]).trim(), "1")
    assert.strictEqual(projectGit(["ls-files"]), "README.md\n")
    assert.strictEqual(projectGit(["status", "--porcelain"]), "")
  })
  it("a team memory committed 40 days ago is 40 days old, with its caveat, on bob's machine after sync", async () => {
    // erin pushes from a plain clone, her commit dated 40 days ago (git checks it out with today's mtime).
    const erin = path.join(scratch, "erin")
    git(scratch, ["clone", "-q", remote, erin])
    fs.writeFileSync(
      path.join(erin, "reference_payments_oncall.md"),
      "---\nname: Payments oncall\ndescription: The payments oncall pager rotation is PagerDuty schedule PAY-7\n" +
        "type: reference\n---\n\nPAY-7.\n"
    )
    const when = `${Math.floor((Date.now() - 40 * 86_400_000 - 3_600_000) / 1000)} +0000`
    const dated = { ...baseEnv(), GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when }
    const erinGit = (args: ReadonlyArray<string>) =>
      execFileSync("git", ["-c", "user.name=erin", "-c", "user.email=e@memdir.invalid", ...args], {
        cwd: erin,
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
        env: dated
      })
    erinGit(["add", "reference_payments_oncall.md"])
    erinGit(["commit", "-qm", "oncall"])
    erinGit(["push", "-q", "origin", "HEAD:main"])
    await sync(bob)
    const [ls, recall, show] = await Promise.all([
      memdir(bob, ["team", "ls", "--json"]),
      memdir(bob, ["recall", "--json", "who", "is", "on", "the", "payments", "oncall", "pager", "rotation"]),
      memdir(bob, ["show", "--json", "team/reference_payments_oncall.md"])
    ])
    const listed = json(ls).memories.find((m: any) => m.path === "team/reference_payments_oncall.md")
    assert.strictEqual(listed.ageDays, 40)
    const recalled = json(recall).selected.find((m: any) => m.path === "team/reference_payments_oncall.md")
    assert.isDefined(recalled, recall.stdout)
    assert.strictEqual(recalled.ageDays, 40)
    assert.include(recalled.caveat, "This memory is 40 days old")
    assert.strictEqual(json(show).ageDays, 40)
    // Files committed today stay today.
    const today = json(ls).memories.find((m: any) => m.path === "team/reference_dashboards.md")
    assert.strictEqual(today.ageDays, 0)
  })
})
