/**
 * What memdir says when a switch is off or team sync has nowhere to go, read as a user reads it: the bundled CLI
 * as a child process, scratch HOME. Each message names what decided and the fix that works for that cause.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { buildCli, cliPath, makeScratchProject, scratchHomeEnv } from "./support/cli.js"

let scratch: string
let home: string
let project: string

const memdir = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    cwd: project,
    env: scratchHomeEnv(home, env),
    input: "",
    encoding: "utf8",
    timeout: 30_000
  })
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr }
}

beforeAll(() => {
  buildCli()
  ;({ scratch, home, project } = makeScratchProject("memdir-switch-messages-"))
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("switch and team sync messages", () => {
  it("team memory off by default: \"(the default)\", exit 14", () => {
    const run = memdir(["team", "ls"])
    assert.strictEqual(run.status, 14, run.stderr)
    assert.match(run.stderr, /^memdir: team memory is off \(the default\)\. Turn it on with "teamMemory": true/)
    assert.notInclude(run.stderr, "default (off)")
  })

  it("MEMDIR_DISABLE_AUTO_MEMORY: the fix is to unset it, not a setting it overrides", () => {
    const run = memdir(
      ["write", "--type", "user", "--name", "Role", "--description", "What the user does", "--body", "Dev"],
      { MEMDIR_DISABLE_AUTO_MEMORY: "1" }
    )
    assert.strictEqual(run.status, 9, run.stderr)
    assert.include(
      run.stderr,
      "memdir: auto memory is disabled (env MEMDIR_DISABLE_AUTO_MEMORY). Unset MEMDIR_DISABLE_AUTO_MEMORY to turn " +
        "it on; no setting overrides it."
    )
    assert.notInclude(run.stderr, "autoMemoryEnabled")
  })

  it("team sync without a remote says none is configured and where to set one", () => {
    const run = memdir(["team", "sync"], { MEMDIR_TEAM_MEMORY: "1" })
    assert.strictEqual(run.status, 16, run.stderr)
    assert.match(run.stderr, /^memdir: team sync cannot start: no remote is configured: set "teamRemote"/)
    assert.include(run.stderr, "$MEMDIR_HOME/settings.json")
    assert.notInclude(run.stderr, "team sync with \"\"")
  })
})
