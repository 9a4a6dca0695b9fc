/**
 * The README's library example must run as documented: executed here with tsx against a scratch
 * MEMDIR_HOME and a real git repository.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./support/cli.js"

describe("examples", () => {
  it("packages/core/examples/agent-loop.ts writes, prompts and recalls through prefetch", () => {
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-example-")))
    try {
      const project = path.join(scratch, "project")
      fs.mkdirSync(project)
      execFileSync("git", ["init", "-q"], { cwd: project })
      const env: Record<string, string> = {}
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MEMDIR_")) env[k] = v
      const out = execFileSync(
        process.execPath,
        ["--import", "tsx", path.join(repoRoot, "packages/core/examples/agent-loop.ts"), project],
        { cwd: repoRoot, env: { ...env, HOME: scratch, MEMDIR_HOME: path.join(scratch, "home") }, encoding: "utf8" }
      )
      assert.include(out, "system prompt:")
      assert.include(out, "feedback_testing_policy.md")
      assert.match(out, /recall: 1\/1 selected/)
      const memoryDir = path.join(scratch, "home/projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
      assert.include(fs.readFileSync(path.join(memoryDir, "MEMORY.md"), "utf8"), "(feedback_testing_policy.md)")
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true })
    }
  })
})
