/**
 * `memdir team audit` end to end: the bundled binary as a child process against a team/ directory built on disk
 * the way a hostile sync or a careless copy leaves it. Scratch HOME and MEMDIR_HOME; every link points into the
 * scratch dir, never at the real /etc.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildCli, cliPath as cli, makeScratchProject, scratchHomeEnv } from "./support/cli.js"

const AUDIT_EXIT = 21

let scratch: string
let home: string
let project: string

const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: project,
    env: scratchHomeEnv(home, env),
    encoding: "utf8",
    timeout: 30_000
  })
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr }
}

const teamDir = () => path.join(memdir(["path"]).stdout.trim(), "team")

beforeAll(() => {
  buildCli()
  ;({ scratch, home, project } = makeScratchProject("memdir-team-audit-"))
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir team audit", () => {
  it("no team directory yet: no violations, exit 0; with team memory off it says so and that nothing was audited", () => {
    const run = memdir(["team", "audit", "--json"])
    assert.strictEqual(run.status, 0, run.stderr)
    const out = JSON.parse(run.stdout)
    assert.deepStrictEqual(out.violations, [])
    assert.strictEqual(out.teamDir, teamDir())
    assert.deepStrictEqual([out.teamEnabled, out.audited], [false, false])

    const off = memdir(["team", "audit"])
    assert.strictEqual(off.status, 0, off.stderr)
    assert.strictEqual(
      off.stdout,
      `team memory is off (the default) and ${teamDir()} does not exist: nothing was audited\n`
    )
    const on = memdir(["team", "audit"], { MEMDIR_TEAM_MEMORY: "1" })
    assert.strictEqual(on.status, 0, on.stderr)
    assert.strictEqual(on.stdout, `ok: ${teamDir()} does not exist yet: nothing to audit\n`)
  })

  it("a clean team directory: exit 0 and an ok line", () => {
    fs.mkdirSync(path.join(teamDir(), "notes"), { recursive: true })
    fs.writeFileSync(path.join(teamDir(), "notes", "reference_tracker.md"), "---\nname: Tracker\n---\nJIRA INFRA\n")
    const run = memdir(["team", "audit"])
    assert.strictEqual(run.status, 0, run.stderr)
    assert.match(run.stdout, /^ok: .*team has no violations/m)
    // the ok is about the files on disk: team memory being off is said first
    assert.strictEqual(
      run.stdout.split("\n")[0],
      `team memory is off (the default); ${teamDir()} audited as it is on disk`
    )
    assert.isTrue(JSON.parse(memdir(["team", "audit", "--json"]).stdout).audited)
  })

  it("a hostile tree: every violation in the JSON contract, exit 21; the human form lists them too", () => {
    const team = teamDir()
    const fakeEtc = path.join(scratch, "etc")
    fs.mkdirSync(fakeEtc, { recursive: true })
    fs.writeFileSync(path.join(fakeEtc, "passwd"), "root:x:0:0\n")
    fs.symlinkSync(fakeEtc, path.join(team, "evil"))
    fs.symlinkSync(path.join(scratch, "missing"), path.join(team, "dangling"))
    fs.symlinkSync("loop", path.join(team, "loop"))
    execFileSync("mkfifo", [path.join(team, "pipe.md")])
    fs.writeFileSync(path.join(team, "huge.md"), "h".repeat(250_001))
    fs.writeFileSync(path.join(team, "ci.md"), `CI token: ${"gh" + "p_"}${"A1b2C3d4E5".repeat(4).slice(0, 36)}\n`)
    fs.writeFileSync(path.join(team, "..%2fx.md"), "x")
    fs.writeFileSync(path.join(team, "a\\b.md"), "x")
    // a name that would clear the screen of whoever reads the human output
    fs.writeFileSync(path.join(team, "\u001b[2Jx.md"), "x")

    const run = memdir(["team", "audit", "--json"])
    assert.strictEqual(run.status, AUDIT_EXIT, run.stderr)
    const { violations } = JSON.parse(run.stdout) as {
      violations: Array<{ path: string; reason: string; detail: string }>
    }
    for (const v of violations) assert.deepStrictEqual(Object.keys(v).sort(), ["detail", "path", "reason"])
    assert.deepStrictEqual(violations.map((v) => `${v.path} ${v.reason}`), [
      "\u001b[2Jx.md unicode-traversal",
      "..%2fx.md encoded-traversal",
      "a\\b.md backslash",
      "ci.md secret",
      "dangling dangling-symlink",
      "evil symlink-escape",
      "huge.md oversized",
      "loop symlink-loop",
      "pipe.md special-file"
    ])
    assert.include(violations.find((v) => v.path === "evil")!.detail, fakeEtc)
    // the secret is named, never printed
    assert.notInclude(run.stdout, "A1b2C3d4E5A1b2")
    // the audit read nothing through the link
    assert.strictEqual(fs.readFileSync(path.join(fakeEtc, "passwd"), "utf8"), "root:x:0:0\n")

    const human = memdir(["team", "audit"])
    assert.strictEqual(human.status, AUDIT_EXIT)
    assert.match(human.stdout, /^symlink-escape evil: -> /m)
    assert.match(human.stdout, /^9 violation\(s\) in /m)
    assert.notInclude(human.stdout, "\u001b", "a raw escape sequence reached the terminal")
    assert.include(human.stdout, JSON.stringify("\u001b[2Jx.md"))
  })
})
