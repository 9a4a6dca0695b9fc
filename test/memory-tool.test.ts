/**
 * `memdir memory-tool` as a child process (the bundled CLI): JSON lines in, `{content, is_error}` lines out, in
 * order, one answer per input as it arrives; malformed lines answered, never a crash; exit 0 at the end of stdin.
 * And docs/memory-tool.md's JSONL example, run as written.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { buildCli, cliPath, scratchHomeEnv } from "./support/cli.js"
import { codeBlocksIn, readRepoFile } from "./support/markdown.js"

let scratch: string
let home: string
let project: string

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-memory-tool-")))
  home = path.join(scratch, "home")
  project = path.join(scratch, "project")
  fs.mkdirSync(home)
  fs.mkdirSync(project)
  execFileSync("git", ["init", "-q"], { cwd: project })
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

const memoryDir = () => path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")

const MEMORY = "---\nname: Testing policy\ndescription: Integration tests hit a real database\ntype: feedback\n---\n" +
  "Use the real database.\n"

/** Runs `memdir memory-tool` with the whole of stdin at once. */
const memoryTool = (
  lines: ReadonlyArray<string>,
  env: Record<string, string> = {},
  args: ReadonlyArray<string> = []
) => {
  const result = spawnSync(process.execPath, [cliPath, "memory-tool", ...args], {
    cwd: project,
    env: scratchHomeEnv(home, env),
    input: lines.map((line) => `${line}\n`).join(""),
    encoding: "utf8"
  })
  const answers = result.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
  return { status: result.status, answers, stderr: result.stderr }
}

describe("memdir memory-tool", () => {
  it("answers each line in order, malformed ones with an error line, and exits 0 at the end", () => {
    const run = memoryTool([
      JSON.stringify({ command: "create", path: "/memories/feedback_testing.md", file_text: MEMORY }),
      "{\"command\": \"view\"",
      "[1, 2]",
      "",
      JSON.stringify({ command: "frobnicate", path: "/memories" }),
      JSON.stringify({ command: "view", path: "/memories/../etc/passwd" }),
      JSON.stringify({ command: "view", path: "/memories/feedback_testing.md", view_range: [6, 6] }),
      JSON.stringify({ command: "create", path: "/memories/team/reference_ci.md", file_text: MEMORY }),
      JSON.stringify({ command: "view", path: "/memories" })
    ])
    assert.strictEqual(run.status, 0, run.stderr)
    assert.strictEqual(run.answers.length, 8)
    for (const answer of run.answers) assert.deepStrictEqual(Object.keys(answer).sort(), ["content", "is_error"])
    const [created, badJson, notCommand, unknown, escape, viewed, team, listing] = run.answers
    assert.deepStrictEqual(created, {
      content: "File created successfully at: /memories/feedback_testing.md",
      is_error: false
    })
    assert.isTrue(badJson.is_error)
    assert.match(badJson.content, /^Error: line 2 of stdin is not JSON/)
    assert.isTrue(notCommand.is_error)
    assert.match(notCommand.content, /^Error: invalid memory tool input/)
    assert.deepStrictEqual(unknown, { content: "Error: frobnicate not implemented", is_error: true })
    assert.deepStrictEqual(escape, {
      content: "Error: Path /memories/../etc/passwd would escape /memories directory",
      is_error: true
    })
    assert.deepStrictEqual(viewed, {
      content: "Here's the content of /memories/feedback_testing.md with line numbers:\n     6\tUse the real database.",
      is_error: false
    })
    assert.isTrue(team.is_error)
    assert.match(team.content, /^Error: team memory is off/)
    assert.isFalse(listing.is_error)
    assert.match(listing.content, /\t\/memories\/feedback_testing\.md$/)
    assert.notInclude(listing.content, "MEMORY.md")
    // on disk: the memory and its index line, nothing under team/
    assert.strictEqual(fs.readFileSync(path.join(memoryDir(), "feedback_testing.md"), "utf8"), MEMORY)
    assert.include(fs.readFileSync(path.join(memoryDir(), "MEMORY.md"), "utf8"), "(feedback_testing.md)")
    assert.isFalse(fs.existsSync(path.join(memoryDir(), "team")))
  })

  it("/memories/team is team/ when team memory is on; --memory-dir chooses the directory", () => {
    const elsewhere = path.join(scratch, "elsewhere")
    const run = memoryTool(
      [JSON.stringify({ command: "create", path: "/memories/team/reference_ci.md", file_text: MEMORY })],
      { MEMDIR_TEAM_MEMORY: "1" },
      ["--memory-dir", elsewhere]
    )
    assert.strictEqual(run.status, 0, run.stderr)
    assert.deepStrictEqual(run.answers, [{
      content: "File created successfully at: /memories/team/reference_ci.md",
      is_error: false
    }])
    assert.strictEqual(fs.readFileSync(path.join(elsewhere, "team/reference_ci.md"), "utf8"), MEMORY)
    assert.include(fs.readFileSync(path.join(elsewhere, "team/MEMORY.md"), "utf8"), "(reference_ci.md)")
  })

  it("answers each line as it arrives (a runtime can wait for one answer before sending the next)", async () => {
    const child = spawn(process.execPath, [cliPath, "memory-tool"], { cwd: project, env: scratchHomeEnv(home) })
    const answers = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]()
    const ask = async (input: unknown) => {
      child.stdin.write(`${JSON.stringify(input)}\n`)
      const next = await answers.next()
      return JSON.parse(next.value as string)
    }
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.deepStrictEqual(await ask({ command: "create", path: "/memories/user_role.md", file_text: MEMORY }), {
      content: "File created successfully at: /memories/user_role.md",
      is_error: false
    })
    assert.deepStrictEqual(await ask({ command: "delete", path: "/memories/user_role.md" }), {
      content: "Successfully deleted /memories/user_role.md",
      is_error: false
    })
    child.stdin.end()
    assert.strictEqual(await exited, 0)
  })

  it("with auto memory off, exits 9 before reading (nothing written)", () => {
    const run = memoryTool(
      [JSON.stringify({ command: "create", path: "/memories/x.md", file_text: MEMORY })],
      { MEMDIR_DISABLE_AUTO_MEMORY: "1" }
    )
    assert.strictEqual(run.status, 9)
    assert.deepStrictEqual(run.answers, [])
    assert.isFalse(fs.existsSync(path.join(memoryDir(), "x.md")))
  })
})

describe("docs/memory-tool.md", () => {
  it("the JSONL example prints what the page shows", () => {
    const blocks = codeBlocksIn(readRepoFile("docs/memory-tool.md"))
    const at = blocks.findIndex((b) => b.lang === "sh" && b.code.includes("| memdir memory-tool"))
    assert.isAtLeast(at, 0, "the page has the example")
    const expected = blocks[at + 1]!
    assert.strictEqual(expected.lang, "jsonl")
    const fresh = path.join(scratch, "docs-project")
    fs.mkdirSync(fresh)
    execFileSync("git", ["init", "-q"], { cwd: fresh })
    const script = `memdir() { "${process.execPath}" "${cliPath}" "$@"; }\n${blocks[at]!.code}\n`
    const out = execFileSync("bash", ["-c", script], { cwd: fresh, env: scratchHomeEnv(home), encoding: "utf8" })
    assert.strictEqual(out.trimEnd(), expected.code.trimEnd())
  })
})
