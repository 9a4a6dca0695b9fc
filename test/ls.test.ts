/**
 * `memdir ls` lists newest first by the time each line's age counts from (docs/file-format.md#age-and-staleness):
 * a memory's `modified:` when it has one, else its mtime. A memory written long ago (its `modified:`) whose file was
 * touched today lists with the old ones, not on top; the text and `--json` agree on the order.
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

/** A memory file as a person or another tool leaves it: `modified:` (when given) and mtime set independently. */
const memory = (
  file: string,
  options: { readonly modifiedDaysAgo?: number; readonly mtimeDaysAgo: number },
  dir = memoryDir
) => {
  const now = Date.now()
  const modified = options.modifiedDaysAgo === undefined ?
    "" :
    `modified: ${new Date(now - options.modifiedDaysAgo * DAY).toISOString()}\n`
  const target = path.join(dir, file)
  fs.writeFileSync(
    target,
    `---\nname: ${file}\ndescription: about ${file}\ntype: project\n${modified}---\n\nBody of ${file}.\n`
  )
  const mtime = new Date(now - options.mtimeDaysAgo * DAY)
  fs.utimesSync(target, mtime, mtime)
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-ls-")))
  project = path.join(scratch, "app")
  memoryDir = path.join(scratch, "memory")
  fs.mkdirSync(project)
  fs.mkdirSync(memoryDir)
  execFileSync("git", ["init", "-q"], { cwd: project })
  // written 271 days ago, file touched today: the old one, whatever its mtime says
  memory("project_old_but_touched.md", { modifiedDaysAgo: 271, mtimeDaysAgo: 0 })
  // written yesterday, file copied in 10 days ago with an older mtime
  memory("project_written_yesterday.md", { modifiedDaysAgo: 1, mtimeDaysAgo: 10 })
  // no `modified:`: its mtime, 5 days ago
  memory("project_no_stamp.md", { mtimeDaysAgo: 5 })
  fs.writeFileSync(path.join(memoryDir, "broken.md"), "---\nname: [broken\ndescription: x\ntype: project\n---\nbody\n")
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir ls", () => {
  const expected = [
    ["project_written_yesterday.md", "yesterday"],
    ["project_no_stamp.md", "5 days ago"],
    ["project_old_but_touched.md", "271 days ago"]
  ]

  it.live("sorts newest first by the written time it shows, not by mtime", () =>
    Effect.gen(function*() {
      const run = yield* memdir(["ls"])
      assert.strictEqual(run.status, 0, run.stderr)
      // a file that is not a memory: reported once, its path not repeated
      assert.match(run.stderr, /^problem: broken\.md:\d+: invalid YAML: /)
      assert.notInclude(run.stderr, "broken.md: broken.md")
      const lines = run.stdout.trimEnd().split("\n")
      assert.deepStrictEqual(
        lines.map((line) => [line.split("  ")[0], /\(([^)]+)\) — /.exec(line)?.[1]]),
        expected
      )
    }))

  it.live("--json lists in the same order, with the same ages", () =>
    Effect.gen(function*() {
      const listing = parseJson(yield* memdir(["ls", "--json"]))
      assert.deepStrictEqual(
        listing.memories.map((m: { path: string; age: string }) => [m.path, m.age]),
        expected
      )
      assert.deepStrictEqual(
        listing.memories.map((m: { writtenFrom: string }) => m.writtenFrom),
        ["modified", "mtime", "modified"]
      )
    }))

  it.live("team ls sorts its memories the same way", () =>
    Effect.gen(function*() {
      const teamMemoryDir = path.join(scratch, "team-memory")
      const teamDir = path.join(teamMemoryDir, "team")
      fs.mkdirSync(teamDir, { recursive: true })
      memory("project_old_but_touched.md", { modifiedDaysAgo: 271, mtimeDaysAgo: 0 }, teamDir)
      memory("project_written_yesterday.md", { modifiedDaysAgo: 1, mtimeDaysAgo: 10 }, teamDir)
      fs.writeFileSync(
        path.join(teamDir, "broken.md"),
        "---\nname: [broken\ndescription: x\ntype: project\n---\nbody\n"
      )
      const teamLs = (args: ReadonlyArray<string>) =>
        runCli(["team", "ls", ...args, "--memory-dir", teamMemoryDir], {
          cwd: project,
          env: scratchHomeEnv(path.join(scratch, "home"), { MEMDIR_TEAM_MEMORY: "1" })
        })
      assert.deepStrictEqual(
        parseJson(yield* teamLs(["--json"])).memories.map((m: { path: string; age: string }) => [m.path, m.age]),
        [["team/project_written_yesterday.md", "yesterday"], ["team/project_old_but_touched.md", "271 days ago"]]
      )
      const text = yield* teamLs([])
      assert.deepStrictEqual(text.stdout.trimEnd().split("\n").map((line) => line.split("  ")[0]), [
        "team/project_written_yesterday.md",
        "team/project_old_but_touched.md"
      ])
      // the broken file named once, from the memory directory
      assert.match(text.stderr, /^problem: team\/broken\.md:\d+: invalid YAML: /)
    }))
})
