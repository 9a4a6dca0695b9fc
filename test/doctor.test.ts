/**
 * `memdir doctor` as a person reads it (docs/cli.md): the counts first, then the findings of each kind together with
 * their count, each located once (`MEMORY.md:2` for a line of the index) with its own advice; `--fix` ends with a
 * line saying what it did and exits 0 once it has done what it safely can, listing what is left for a person. The
 * bundled CLI as a child process on scratch directories.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, parseJson, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let project: string

const memdir = (memoryDir: string, args: ReadonlyArray<string>) =>
  runCli([...args, "--memory-dir", memoryDir], { cwd: project, env: scratchHomeEnv(path.join(scratch, "home")) })

const memory = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\ntype: project\n${extra}---\n\nBody of ${name}.\n`

/** A fresh memory directory holding `files`. */
const directory = (label: string, files: Record<string, string>): string => {
  const dir = path.join(scratch, label)
  fs.mkdirSync(dir, { recursive: true })
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
  return dir
}

/** A directory with one finding of several kinds: a broken header, a dead index line, a future `modified:`. */
const troubled = (label: string) =>
  directory(label, {
    "MEMORY.md":
      "- [Here](project_here.md) — h\n- [Gone](gone.md) — deleted by hand\n- [Future](project_future.md) — f\n",
    "project_here.md": memory("Here", "a memory"),
    "project_future.md": memory("Future", "stamped ahead", "modified: 2099-01-01T00:00:00Z\n"),
    "broken.md": "---\nname: [broken\ndescription: x\ntype: project\n---\nbody\n"
  })

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-doctor-")))
  project = path.join(scratch, "app")
  fs.mkdirSync(project)
  execFileSync("git", ["init", "-q"], { cwd: project })
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("memdir doctor", () => {
  it.live("starts with the counts, then each kind with its count, located once, with its own advice; exit 20", () =>
    Effect.gen(function*() {
      const dir = troubled("report")
      const run = yield* memdir(dir, ["doctor"])
      assert.strictEqual(run.status, 20, run.stderr)
      const lines = run.stdout.split("\n")
      assert.deepStrictEqual(lines.slice(0, 4), [
        `${dir}/: 1 error, 2 warnings`,
        "  error   invalid-frontmatter  1",
        "  warning dead-link            1",
        "  warning modified-ignored     1"
      ])
      const section = (heading: string) => {
        const start = lines.indexOf(heading)
        assert.isAbove(start, 0, `no "${heading}" in:\n${run.stdout}`)
        const end = lines.indexOf("", start)
        return lines.slice(start + 1, end < 0 ? undefined : end)
      }
      // a dead line of the index is where it is, MEMORY.md:2, not "gone.md:2"
      assert.deepStrictEqual(section("warning dead-link (1)"), [
        "  MEMORY.md:2: points at gone.md, which does not exist",
        "  fix: Drop the line, or restore the file (memdir doctor --fix)"
      ])
      // the path once, not "broken.md: broken.md:3:"; the YAML advice once, as the fix
      const broken = section("error invalid-frontmatter (1)")
      assert.match(broken[0]!, /^ {2}broken\.md:\d+: invalid YAML: /)
      assert.notInclude(broken[0]!, "broken.md: broken.md")
      assert.notInclude(broken[0]!, "Fix the frontmatter")
      assert.match(broken[1]!, /^ {2}fix: Fix the YAML between the two '---' lines/)
      // a future `modified:` is not a frontmatter error with advice about names and types
      assert.deepStrictEqual(section("warning modified-ignored (1)"), [
        "  project_future.md: modified: 2099-01-01T00:00:00.000Z is in the future; the age counts from the file's mtime",
        "  fix: Set `modified:` to when the memory was written, an ISO 8601 time not in the future (e.g. " +
        "2026-03-05T12:00:00Z), or delete the line: the next `memdir write` of the memory stamps it"
      ])
      assert.notInclude(run.stdout, "mtime time")

      const json = parseJson(yield* memdir(dir, ["doctor", "--json"]))
      assert.deepStrictEqual(json.summary, {
        errors: 1,
        warnings: 2,
        byCode: [
          { code: "invalid-frontmatter", severity: "error", count: 1 },
          { code: "dead-link", severity: "warning", count: 1 },
          { code: "modified-ignored", severity: "warning", count: 1 }
        ]
      })
      assert.strictEqual(json.findings.length, 3)
    }))

  it.live("--fix repairs what it can, ends with what it did and what is left, and exits 0", () =>
    Effect.gen(function*() {
      const dir = troubled("fix")
      const run = yield* memdir(dir, ["doctor", "--fix"])
      assert.strictEqual(run.status, 0, run.stdout + run.stderr)
      const lines = run.stdout.trimEnd().split("\n")
      assert.strictEqual(
        lines[0],
        "fixed: removed MEMORY.md:2 (dead-link gone.md): - [Gone](gone.md) — deleted by hand"
      )
      assert.strictEqual(lines.at(-1), "fixed: MEMORY.md: removed 1 line; 2 findings above need you")
      assert.include(run.stdout, `${dir}/: 1 error, 1 warning`)
      assert.notInclude(fs.readFileSync(path.join(dir, "MEMORY.md"), "utf8"), "gone.md")

      // again: nothing left that --fix can do, still exit 0, and it says so last
      const again = yield* memdir(dir, ["doctor", "--fix"])
      assert.strictEqual(again.status, 0, again.stdout)
      assert.strictEqual(
        again.stdout.trimEnd().split("\n").at(-1),
        "fixed: nothing to repair; 2 findings above need you"
      )
      // a healthy directory
      const healthy = yield* memdir(directory("healthy", { "MEMORY.md": "" }), ["doctor", "--fix"])
      assert.strictEqual(healthy.status, 0)
      assert.strictEqual(healthy.stdout.trimEnd().split("\n").at(-1), "fixed: nothing to repair; nothing left to fix")
      // without --fix the errors that remain are still a failure to report
      assert.strictEqual((yield* memdir(dir, ["doctor"])).status, 20)
    }))

  it.live("thousands of findings: ten of a kind shown, the rest counted; --json lists every one", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = { "MEMORY.md": "" }
      for (let i = 0; i < 300; i++) files[`project_m${String(i).padStart(3, "0")}.md`] = memory(`M${i}`, `memory ${i}`)
      const dir = directory("many", files)
      const run = yield* memdir(dir, ["doctor"])
      assert.strictEqual(run.status, 0, run.stderr)
      const lines = run.stdout.trimEnd().split("\n")
      // the counts, ten findings with their advice, the advice of those not shown, the model-call lines: no more
      assert.isAtMost(lines.length, 30, run.stdout)
      assert.strictEqual(lines[0], `${dir}/: 0 errors, 300 warnings`)
      // MEMORY.md has room for 200 of them: the heading says how many --fix adds
      assert.include(run.stdout, "warning missing-from-index (300, 200 repaired by memdir doctor --fix)")
      assert.strictEqual(lines.filter((l) => / has no line in MEMORY\.md/.test(l)).length, 10)
      assert.include(run.stdout, "  … and 290 more of them (`memdir doctor --json` lists every one)")
      // each missing memory's own line to add is its advice, under it
      assert.match(run.stdout, /\n {4}fix: Add `- \[M\d+\]\(project_m\d+\.md\) — memory \d+` \(memdir doctor --fix\)/)
      // and the 100 it has no room for are told so, though none of them is shown
      assert.include(run.stdout, "\n  100 of those: fix: MEMORY.md has no room for its line (200 lines / 25 KB)")
      const json = parseJson(yield* memdir(dir, ["doctor", "--json"]))
      assert.strictEqual(json.findings.length, 300)
      assert.strictEqual(json.findings.filter((f: { fixable: boolean }) => f.fixable).length, 200)

      // --fix adds those 200 and says what it could not; what is left is not a failure of the repair
      const fixed = yield* memdir(dir, ["doctor", "--fix"])
      assert.strictEqual(fixed.status, 0, fixed.stderr)
      assert.include(fixed.stdout, "not added: 100 memories, MEMORY.md would exceed its caps (200 lines / 25 KB)")
      assert.strictEqual(
        fixed.stdout.trimEnd().split("\n").at(-1),
        "fixed: MEMORY.md: added 200 lines; 100 memories not added (no room in MEMORY.md); 100 findings above need you"
      )
    }))

  it.live("an index over its bytes in short lines is told to hold fewer entries, not shorter ones", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = {}
      const lines: Array<string> = []
      for (let i = 0; i < 190; i++) {
        const file = `project_m${String(i).padStart(3, "0")}.md`
        files[file] = memory(`M${i}`, `memory ${i}`)
        const head = `- [M${i}](${file}) — `
        lines.push(head + "h".repeat(137 - head.length))
      }
      files["MEMORY.md"] = lines.join("\n") + "\n"
      const run = yield* memdir(directory("full", files), ["doctor"])
      assert.strictEqual(run.status, 20)
      assert.include(run.stdout, "in 190 lines, every one under ~150 characters: more entries than one index holds")
      assert.include(run.stdout, "fix: Fewer entries: merge memories that say the same thing")
      assert.notInclude(run.stdout, "under ~150 chars and move")
      assert.notInclude(run.stdout, "Shorten")
    }))
})
