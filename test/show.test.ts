/**
 * `memdir show` counts a memory's age from the time `ls` and doctor count it from, and says so when it ignores a
 * `modified:` (in the future, or not a time): the same words as doctor's `modified-ignored` finding.
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
let memoryDir: string
let project: string

const memdir = (args: ReadonlyArray<string>) =>
  runCli([...args, "--memory-dir", memoryDir], { cwd: project, env: scratchHomeEnv(path.join(scratch, "home")) })

const write = (file: string, modified: string, mtimeDaysAgo: number) => {
  const target = path.join(memoryDir, file)
  fs.writeFileSync(target, `---\nname: ${file}\ndescription: d\ntype: project\nmodified: ${modified}\n---\n\nBody.\n`)
  const mtime = new Date(Date.now() - mtimeDaysAgo * DAY)
  fs.utimesSync(target, mtime, mtime)
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-show-")))
  project = path.join(scratch, "app")
  memoryDir = path.join(scratch, "memory")
  fs.mkdirSync(project)
  fs.mkdirSync(memoryDir)
  execFileSync("git", ["init", "-q"], { cwd: project })
  write("project_dated.md", new Date(Date.now() - 30 * DAY).toISOString(), 0)
  write("project_future.md", "2099-01-01T00:00:00Z", 3)
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir show", () => {
  it.live("the age ls shows, from `modified:` over the mtime, with the caveat", () =>
    Effect.gen(function*() {
      const run = yield* memdir(["show", "project_dated.md"])
      assert.strictEqual(run.status, 0, run.stderr)
      assert.strictEqual(run.stderr, "")
      assert.include(run.stdout, "project_dated.md, saved 30 days ago")
      const listing = parseJson(yield* memdir(["ls", "--json"]))
      const listed = listing.memories.find((m: { path: string }) => m.path === "project_dated.md")
      assert.strictEqual(listed.age, "30 days ago")
    }))

  it.live("an ignored `modified:`: the age from the mtime, and a warning saying why (JSON: `warning`)", () =>
    Effect.gen(function*() {
      const run = yield* memdir(["show", "project_future.md"])
      assert.strictEqual(run.status, 0, run.stderr)
      assert.include(run.stdout, "saved 3 days ago")
      assert.strictEqual(
        run.stderr,
        "warning: modified: 2099-01-01T00:00:00.000Z is in the future; the age counts from the file's mtime\n"
      )
      const json = parseJson(yield* memdir(["show", "project_future.md", "--json"]))
      assert.strictEqual(json.writtenFrom, "mtime")
      assert.include(json.warning, "is in the future")
      const doctor = parseJson(yield* memdir(["doctor", "--json"]))
      const finding = doctor.findings.find((f: { code: string }) => f.code === "modified-ignored")
      assert.strictEqual(finding.message, json.warning)
    }))
})
