/**
 * Codex's half of one memory for every agent (docs/hooks.md, "Codex: memory and MCP"), in the real Codex CLI
 * (`@openai/codex` at `CODEX_VERSION`, from the npm registry into the test cache): its workspace-write sandbox
 * refuses a write into memdir's memory directory until `memdir hooks install --agent codex` adds it to
 * `writable_roots`, then allows exactly that (the rest of the home stays read-only); Codex lists memdir's MCP server;
 * `uninstall` takes both back. `codex sandbox` runs a command under the sandbox the configuration describes, with
 * no model and no login.
 *
 * The scratch home lies in the test cache, not under the temporary directory: Codex's workspace-write sandbox lets
 * every command write `/tmp`, which would make the probe pass whatever memdir set.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildCli, cliPath, scratchHomeEnv, writeMemdirShim } from "./support/cli.js"
import { registryTool, testCache } from "./support/registryTool.js"

const CODEX_VERSION = "0.171.0"
const codex = registryTool("@openai/codex", CODEX_VERSION, "codex", "codex")
const skipReason = codex.ensure()
if (skipReason !== undefined) console.error(`SKIPPED: the real Codex tests: ${skipReason}`)

let scratch: string

beforeAll(() => {
  buildCli()
  fs.mkdirSync(testCache, { recursive: true })
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(testCache, "codex-sandbox-")))
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

/** `file args` in `cwd` with `env`, stdin closed, within a minute: its status and both streams. */
const run = (file: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) => {
  const result = spawnSync(file, args, {
    cwd,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000
  })
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" }
}

describe.skipIf(skipReason !== undefined)(`memdir for the real Codex ${CODEX_VERSION}`, () => {
  it("its sandbox writes memdir's memory only after hooks install, and lists memdir's MCP server", () => {
    const home = path.join(scratch, "user")
    const project = path.join(home, "shop")
    const bin = path.join(home, "bin")
    fs.mkdirSync(project, { recursive: true })
    fs.mkdirSync(bin, { recursive: true })
    execFileSync("git", ["init", "-q"], { cwd: project })
    writeMemdirShim(bin)
    const codexHome = path.join(home, ".codex")
    fs.mkdirSync(codexHome)
    const env = scratchHomeEnv(home, {
      CODEX_HOME: codexHome,
      PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`
    })
    const memdir = (args: ReadonlyArray<string>) => run(process.execPath, [cliPath, ...args], project, env)
    const memoryDir = memdir(["path"]).stdout.trim()
    fs.mkdirSync(memoryDir, { recursive: true })
    const probe = path.join(memoryDir, "probe.md")
    const outside = path.join(home, "outside.txt")
    // a write into the memory directory and one elsewhere in the home, under Codex's workspace-write sandbox
    const sandboxed = () =>
      run(
        codex.bin,
        [
          "sandbox",
          "-c",
          "sandbox_mode=\"workspace-write\"",
          "--",
          "sh",
          "-c",
          `echo memory > '${probe}' && echo WROTE-MEMORY; echo other > '${outside}' && echo WROTE-OUTSIDE; ` +
          `echo work > '${path.join(project, "work.txt")}' && echo WROTE-WORKSPACE`
        ],
        project,
        env
      )

    const before = sandboxed()
    assert.include(before.stdout, "WROTE-WORKSPACE", before.stderr)
    assert.notInclude(before.stdout, "WROTE-MEMORY", "the sandbox is on: the memory directory is read-only")
    assert.include(before.stderr, "Read-only file system")
    assert.isFalse(fs.existsSync(probe))

    const install = memdir(["hooks", "install", "--agent", "codex"])
    assert.strictEqual(install.status, 0, install.stderr)
    const after = sandboxed()
    assert.include(after.stdout, "WROTE-MEMORY", after.stderr)
    assert.strictEqual(fs.readFileSync(probe, "utf8"), "memory\n")
    assert.notInclude(after.stdout, "WROTE-OUTSIDE", "only memdir's memory was made writable")
    assert.isFalse(fs.existsSync(outside))
    const servers = run(codex.bin, ["mcp", "list"], project, env)
    assert.strictEqual(servers.status, 0, servers.stderr)
    assert.match(servers.stdout, /^memdir\s+memdir\s+mcp\b.*\benabled\b/m)
    // Codex edits config.toml itself after install: what it adds stays through memdir's uninstall
    const added = run(codex.bin, ["mcp", "add", "other", "--", "echo", "hi"], project, env)
    assert.strictEqual(added.status, 0, added.stderr)

    fs.rmSync(probe)
    const uninstall = memdir(["hooks", "uninstall", "--agent", "codex"])
    assert.strictEqual(uninstall.status, 0, uninstall.stderr)
    const again = sandboxed()
    assert.notInclude(again.stdout, "WROTE-MEMORY", "uninstall took the writable root back")
    const left = run(codex.bin, ["mcp", "list"], project, env)
    assert.notMatch(left.stdout, /^memdir\s/m)
    assert.match(left.stdout, /^other\s+echo\s+hi\b/m, "the server Codex added after install is still there")
    assert.notInclude(fs.readFileSync(path.join(codexHome, "config.toml"), "utf8"), "memdir")
  })
})
