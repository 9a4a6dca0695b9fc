/**
 * Ages that survive git, end to end: the bundled `memdir` binary as a child process over a memory directory kept in
 * git and cloned elsewhere, with commits backdated through GIT_COMMITTER_DATE. `ls`, `show` and recall must give
 * the age of the last commit (not of the checkout), a `modified:` timestamp wins, and a file edited since is fresh.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, parseJson, runCli, scratchHomeEnv } from "./support/cli.js"

const DAY = 86_400_000
let scratch: string
let home: string
let clone: string

const gitEnv = (when?: number): Record<string, string> => {
  const env: Record<string, string> = {
    ...scratchHomeEnv(home),
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1"
  }
  for (const k of Object.keys(env)) {
    if (k.startsWith("GIT_") && k !== "GIT_CONFIG_GLOBAL" && k !== "GIT_CONFIG_NOSYSTEM") delete env[k]
  }
  if (when === undefined) return env
  const date = `${Math.floor(when / 1000)} +0000`
  return { ...env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }
}

const git = (cwd: string, args: ReadonlyArray<string>, when?: number) =>
  execFileSync("git", ["-c", "user.name=erin", "-c", "user.email=e@memdir.invalid", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "pipe"],
    env: gitEnv(when)
  })

const memory = (name: string, description: string, type: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n${extra}---\n\n${description}.\n`

const memdir = (args: ReadonlyArray<string>) =>
  Effect.runPromise(runCli(args, { cwd: scratch, env: scratchHomeEnv(home, { MEMDIR_MEMORY_DIR: clone }) }))

const json = async (args: ReadonlyArray<string>) => {
  const run = await memdir(args)
  assert.strictEqual(run.status, 0, run.stderr)
  return parseJson(run)
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-ages-")))
  home = path.join(scratch, "home")
  fs.mkdirSync(home)
  // The memory directory lives in a project repository (`.claude/memory/`, as the reference agent's often does).
  const origin = path.join(scratch, "origin")
  const dir = path.join(origin, ".claude", "memory")
  fs.mkdirSync(dir, { recursive: true })
  git(origin, ["init", "-q", "-b", "main"])
  const now = Date.now()
  fs.writeFileSync(
    path.join(dir, "reference_oncall.md"),
    memory("Payments oncall", "The payments oncall pager rotation is PagerDuty schedule PAY-7", "reference")
  )
  fs.writeFileSync(path.join(dir, "MEMORY.md"), "- [Payments oncall](reference_oncall.md) — PAY-7\n")
  git(origin, ["add", "."])
  git(origin, ["commit", "-qm", "oncall"], now - 40 * DAY - 3_600_000)
  // Committed today, but its own `modified:` says 10 days ago.
  fs.writeFileSync(
    path.join(dir, "feedback_review.md"),
    memory("Review", "Reviews need two approvals", "feedback", `modified: ${new Date(now - 10 * DAY).toISOString()}\n`)
  )
  fs.writeFileSync(path.join(dir, "user_role.md"), memory("Role", "Staff engineer on payments", "user"))
  git(origin, ["add", "."])
  git(origin, ["commit", "-qm", "more"], now - 2 * DAY - 3_600_000)
  git(scratch, ["clone", "-q", origin, "clone"])
  clone = path.join(scratch, "clone", ".claude", "memory")
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("ages of a memory directory cloned from git", () => {
  it("ls, show and recall give the last commit's age (with its caveat), modified: first", async () => {
    const ls = await json(["ls", "--json"])
    const byPath = Object.fromEntries(ls.memories.map((m: any) => [m.path, m]))
    assert.deepStrictEqual(
      [byPath["reference_oncall.md"].ageDays, byPath["reference_oncall.md"].writtenFrom],
      [40, "commit"]
    )
    assert.deepStrictEqual([byPath["feedback_review.md"].ageDays, byPath["feedback_review.md"].writtenFrom], [
      10,
      "modified"
    ])
    assert.deepStrictEqual([byPath["user_role.md"].ageDays, byPath["user_role.md"].writtenFrom], [2, "commit"])
    const show = await json(["show", "--json", "reference_oncall.md"])
    assert.strictEqual(show.ageDays, 40)
    assert.include(show.caveat, "40 days old")
    const recall = await json(["recall", "--json", "who is on the payments oncall pager rotation"])
    assert.deepStrictEqual(recall.selected.map((m: any) => [m.path, m.ageDays]), [["reference_oncall.md", 40]])
    assert.include(recall.selected[0].caveat, "This memory is 40 days old")
    // Cached by HEAD under the memory directory: the next scan runs no git.
    const cache = JSON.parse(fs.readFileSync(path.join(clone, ".memdir-cache", "commit-times.json"), "utf8"))
    assert.strictEqual(cache.head, git(clone, ["rev-parse", "HEAD"]).trim())
  })

  it("a file edited since its commit counts from its own time", async () => {
    fs.writeFileSync(
      path.join(clone, "reference_oncall.md"),
      memory("Payments oncall", "The payments oncall pager rotation is PagerDuty schedule PAY-8", "reference")
    )
    const ls = await json(["ls", "--json"])
    const oncall = ls.memories.find((m: any) => m.path === "reference_oncall.md")
    assert.deepStrictEqual([oncall.ageDays, oncall.writtenFrom], [0, "mtime"])
  })
})
