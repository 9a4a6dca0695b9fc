/**
 * The library examples the README and docs/ show must run as documented: each file of packages/core/examples/
 * is executed here with tsx against a scratch MEMDIR_HOME and a real git repository (test/docs-links.test.ts
 * checks that the docs show exactly these files).
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./support/cli.js"
import { codeBlocksIn, examplePath, markdownFiles, readRepoFile } from "./support/markdown.js"

const examplesDir = path.join(repoRoot, "packages/core/examples")

/** Runs an example with tsx on a fresh git project in a scratch home; `check` sees its output and the home. */
const runExample = (file: string, check: (out: string, memoryDir: string) => void) => {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-example-")))
  try {
    const project = path.join(scratch, "project")
    fs.mkdirSync(project)
    execFileSync("git", ["init", "-q"], { cwd: project })
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MEMDIR_")) env[k] = v
    const out = execFileSync(
      process.execPath,
      ["--import", "tsx", path.join(examplesDir, file), project],
      { cwd: repoRoot, env: { ...env, HOME: scratch, MEMDIR_HOME: path.join(scratch, "home") }, encoding: "utf8" }
    )
    check(out, path.join(scratch, "home/projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory"))
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

describe("examples", () => {
  it("packages/core/examples/agent-loop.ts writes, prompts and recalls through prefetch", () => {
    runExample("agent-loop.ts", (out, memoryDir) => {
      assert.include(out, "system prompt:")
      assert.include(out, "feedback_testing_policy.md")
      assert.match(out, /recall: 1\/1 selected/)
      assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "(feedback_testing_policy.md)")
    })
  })

  it("packages/core/examples/quick-start.ts (the README's snippet) writes, prompts and recalls", () => {
    runExample("quick-start.ts", (out, memoryDir) => {
      assert.match(out, /^system prompt: \d+ characters$/m)
      assert.include(out, "Memory feedback_testing_policy.md (feedback, saved today): Testing policy")
      assert.include(out, "**Why:** mocked tests hid a broken migration.")
      assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "(feedback_testing_policy.md)")
    })
  })

  it("every example file is run above and every one the docs show exists", () => {
    const source = fs.readFileSync(new URL(import.meta.url), "utf8")
    const files = fs.readdirSync(examplesDir).filter((f) => f.endsWith(".ts"))
    assert.deepStrictEqual(files.filter((f) => !source.includes(`runExample("${f}"`)), [])
    const shown = markdownFiles().flatMap((page) => codeBlocksIn(readRepoFile(page)).map(examplePath))
      .filter((p): p is string => p?.startsWith("packages/core/examples/") === true)
    assert.isAbove(shown.length, 0)
    for (const p of shown) assert.include(files, path.posix.basename(p))
  })
})
