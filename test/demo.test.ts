/**
 * The README's demo (`pnpm demo`: the CLI bundled, then `bash scripts/demo.sh`) run as a newcomer runs it, its
 * output checked for what the README promises: one memory 40 days old, listed with that age and last, recalled
 * with its staleness caveat; a fresh one recalled without; nothing for an unrelated question; each step headed by
 * the command as typed, in plain text when piped. The bundle is the one the global setup built, as `pnpm demo`
 * builds it.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, repoRoot, scrubbedEnv } from "./support/cli.js"

interface DemoRun {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** `bash scripts/demo.sh` from the repository root, its scratch directory under `tmp` (the script's TMPDIR). */
const runDemo = (tmp: string): Promise<DemoRun> =>
  new Promise((resolve) => {
    execFile(
      "bash",
      [path.join(repoRoot, "scripts/demo.sh")],
      { cwd: repoRoot, env: { ...scrubbedEnv(), HOME: tmp, TMPDIR: tmp }, encoding: "utf8", maxBuffer: 8 << 20 },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    )
  })

/** The demo's output split at its `$ memdir …` headings: each command's heading (without `$ memdir `) → its output. */
const sections = (stdout: string): Map<string, string> => {
  const result = new Map<string, string>()
  let heading: string | undefined
  let lines: Array<string> = []
  for (const line of stdout.split("\n")) {
    if (line.startsWith("$ memdir ")) {
      if (heading !== undefined) result.set(heading, lines.join("\n").trim())
      heading = line.slice("$ memdir ".length)
      lines = []
    } else {
      lines.push(line)
    }
  }
  if (heading !== undefined) result.set(heading, lines.join("\n").trim())
  return result
}

const section = (all: Map<string, string>, prefix: string): string => {
  const found = [...all.entries()].find(([heading]) => heading.startsWith(prefix))
  assert.isDefined(found, `no "$ memdir ${prefix}…" in the demo's output: ${[...all.keys()].join(" | ")}`)
  return found![1]
}

describe("pnpm demo", () => {
  it("shows an old memory's age, its caveat on recall, and nothing for an unrelated question", async () => {
    buildCli()
    const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-demo-test-")))
    try {
      const run = await runDemo(tmp)
      assert.strictEqual(run.status, 0, `demo exited ${run.status}:\n${run.stdout}\n${run.stderr}`)
      assert.strictEqual(run.stderr, "", "the demo prints nothing on stderr (no warning, no problem)")
      // piped, as here, the output is plain text: no escape codes
      assert.notInclude(run.stdout, "\u001b", "no escape codes when stdout is not a terminal")
      const out = sections(run.stdout)

      // each heading is the command as you would type it, arguments with spaces in quotes
      assert.include([...out.keys()], "path")
      assert.isTrue(
        [...out.keys()].some((heading) => heading.startsWith("write --type feedback --name \"Testing policy\" ")),
        [...out.keys()].join(" | ")
      )

      // ls: the backdated memory shows its age and, newest first by that age, comes last
      const listing = section(out, "ls").split("\n")
      assert.strictEqual(listing.length, 3, section(out, "ls"))
      assert.match(
        listing[2]!,
        /^project_connection_pool_size\.md {2}\[project\] Connection pool size \(40 days ago\) — /
      )
      for (const line of listing.slice(0, 2)) assert.include(line, "(today)")

      // recall of the old memory: its age and the staleness caveat beside its body
      const old = section(out, "recall \"can I raise the database connection pool size?\"")
      assert.include(old, "## project_connection_pool_size.md [project] — saved 40 days ago")
      assert.include(old, "> This memory is 40 days old. Memories are point-in-time observations, not live state")
      assert.include(old, "The pool max is 10 (src/db.ts:1)")

      // recall of a fresh memory: no caveat
      const fresh = JSON.parse(section(out, "recall \"should the new integration test mock the database?\" --json"))
      assert.deepStrictEqual(
        fresh.selected.map((m: { path: string; age: string; caveat: string | null }) => [m.path, m.age, m.caveat]),
        [["feedback_testing_policy.md", "today", null]]
      )

      // an unrelated question: nothing recalled
      assert.strictEqual(
        section(out, "recall \"what's the weather like\""),
        "no relevant memory (3 candidates, selector: offline)"
      )
      assert.match(section(out, "doctor").split("\n")[0]!, /^ok: .* is healthy$/)

      // the scratch project and home lived in the demo's temp directory
      assert.deepStrictEqual(fs.readdirSync(tmp).filter((name) => name.startsWith("memdir-demo.")).length, 1)
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})
