/**
 * `memdir hooks install | uninstall --agent claude` beside the hooks (docs/hooks.md#one-memory-in-claude-code): the
 * bundled CLI turns Claude Code's own auto memory off and adds the permission rules memdir needs, shows the diff
 * before it writes, records what it changed in `$MEMDIR_HOME/agent-settings.json`, and uninstall takes back exactly
 * that: the user's settings file comes back byte for byte.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, cliPath, type CliRun, parseJson, scratchHomeEnv } from "./support/cli.js"
import { readRepoFile } from "./support/markdown.js"
import { removeScratch } from "./support/scratch.js"

let scratch: string
let project: string

/** A home of its own per test: `HOME` and `MEMDIR_HOME` both in it. */
const freshHome = (name: string) => {
  const dir = path.join(scratch, name)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

const memdir = (home: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<CliRun> =>
  Effect.callback<CliRun>((resume) => {
    execFile(
      process.execPath,
      [cliPath, ...args],
      { cwd: project, env: scratchHomeEnv(home, env), encoding: "utf8" },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ status, stdout, stderr }))
      }
    ).stdin?.end()
  })

const settingsFile = (home: string) => path.join(home, ".claude", "settings.json")
const writeSettings = (home: string, text: string) => {
  fs.mkdirSync(path.dirname(settingsFile(home)), { recursive: true })
  fs.writeFileSync(settingsFile(home), text)
}
const readSettings = (home: string) => JSON.parse(fs.readFileSync(settingsFile(home), "utf8"))

const rules = ["Read(~/.memdir/**)", "Edit(~/.memdir/**)", "mcp__memdir"]

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-hooks-install-")))
  project = path.join(scratch, "shop")
  fs.mkdirSync(project, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
})

// background jobs and a lingering hook daemon may still be writing into the tree
afterAll(() => removeScratch(scratch))

describe("memdir hooks install --agent claude: one memory", () => {
  it.live("turns Claude Code's auto memory off, allows memdir's rules, shows the diff first; uninstall restores the file byte for byte", () =>
    Effect.gen(function*() {
      const h = freshHome("home-roundtrip")
      const own = JSON.stringify(
        {
          model: "opus",
          permissions: { allow: ["Bash(npm test)"], deny: ["Read(./.env)"] },
          hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }] }
        },
        null,
        4
      ) + "\n"
      writeSettings(h, own)

      const install = yield* memdir(h, ["hooks", "install", "--agent", "claude", "--model-calls", "off"])
      assert.strictEqual(install.status, 0, install.stderr)
      const diffAt = install.stdout.indexOf(`+++ ${settingsFile(h)}`)
      assert.isAtLeast(diffAt, 0, install.stdout)
      assert.include(install.stdout, "+    \"autoMemoryEnabled\": false")
      assert.include(install.stdout, "+            \"mcp__memdir\"")
      assert.isBelow(diffAt, install.stdout.indexOf("installed memdir hooks"), "the diff comes before the write")
      assert.include(install.stdout, "Claude Code's own auto memory turned off")

      const installed = readSettings(h)
      assert.strictEqual(installed.autoMemoryEnabled, false)
      assert.deepStrictEqual(installed.permissions, { allow: ["Bash(npm test)", ...rules], deny: ["Read(./.env)"] })
      assert.strictEqual(installed.hooks.SessionStart[0].hooks[0].command, "memdir-hook")
      const record = JSON.parse(fs.readFileSync(path.join(h, ".memdir", "agent-settings.json"), "utf8"))
      assert.deepStrictEqual(record, {
        files: { [settingsFile(h)]: { autoMemoryEnabled: null, allow: rules } }
      })

      const again = yield* memdir(h, ["hooks", "install", "--agent", "claude", "--json", "--model-calls", "off"])
      assert.strictEqual(parseJson(again).changed, false, "a second install changes nothing")

      const uninstall = yield* memdir(h, ["hooks", "uninstall", "--agent", "claude"])
      assert.strictEqual(uninstall.status, 0, uninstall.stderr)
      assert.include(uninstall.stdout, "Claude Code's own auto memory back as it was")
      assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), own)
      assert.deepStrictEqual(
        JSON.parse(fs.readFileSync(path.join(h, ".memdir", "agent-settings.json"), "utf8")),
        { files: {} }
      )
    }))

  it.live("a new settings file: install creates it, uninstall leaves {} with nothing of memdir's", () =>
    Effect.gen(function*() {
      const h = freshHome("home-new")
      const install = yield* memdir(h, ["hooks", "install", "--agent", "claude", "--json", "--model-calls", "off"])
      assert.strictEqual(install.status, 0, install.stderr)
      const answer = parseJson(install)
      assert.deepStrictEqual(answer.settings, { autoMemoryEnabled: null, allow: rules, created: "permissions" })
      assert.include(answer.diff, "+  \"autoMemoryEnabled\": false,")
      yield* memdir(h, ["hooks", "uninstall", "--agent", "claude"])
      assert.deepStrictEqual(readSettings(h), {})
    }))

  it.live("says how to add memdir's MCP server, and what it costs, unless Claude Code already runs one", () =>
    Effect.gen(function*() {
      const h = freshHome("home-mcp")
      const first = yield* memdir(h, ["hooks", "install", "--agent", "claude", "--model-calls", "off"])
      assert.include(first.stdout, "claude mcp add -s user memdir -- memdir mcp")
      // Claude Code waits for MCP servers before the first request (docs/mcp.md): the hint says so
      assert.include(first.stdout.replace(/\s+/g, " "), "the server's start-up is added to every session")
      yield* memdir(h, ["hooks", "uninstall", "--agent", "claude"])
      // what `claude mcp add -s user memdir -- memdir mcp` writes
      fs.writeFileSync(
        path.join(h, ".claude.json"),
        JSON.stringify({ mcpServers: { memdir: { type: "stdio", command: "memdir", args: ["mcp"] } } })
      )
      const second = yield* memdir(h, ["hooks", "install", "--agent", "claude", "--model-calls", "off"])
      assert.strictEqual(second.status, 0, second.stderr)
      assert.notInclude(second.stdout, "claude mcp add")
    }))

  it.live("docs/hooks.md shows what install writes into an empty file", () =>
    Effect.gen(function*() {
      const block = /What `install --agent claude --model-calls on` adds to an empty file[^]*?```json\n([^]*?)```/.exec(
        readRepoFile("docs/hooks.md")
      )
      assert.isNotNull(block, "the example is in docs/hooks.md")
      const shown = JSON.parse(block![1]!)
      const on = freshHome("home-doc-on")
      const install = yield* memdir(on, ["hooks", "install", "--agent", "claude", "--model-calls", "on"])
      assert.strictEqual(install.status, 0, install.stderr)
      assert.deepStrictEqual(shown, readSettings(on))
      // "with model calls off, the same without Stop"
      const off = freshHome("home-doc-off")
      yield* memdir(off, ["hooks", "install", "--agent", "claude", "--model-calls", "off"])
      const { Stop: _stop, ...withoutStop } = shown.hooks
      assert.deepStrictEqual(readSettings(off), { ...shown, hooks: withoutStop })
    }))

  it.live("a memory directory outside $MEMDIR_HOME gets its own rules; one inside it does not", () =>
    Effect.gen(function*() {
      const h = freshHome("home-elsewhere")
      const elsewhere = { MEMDIR_MEMORY_DIR: path.join(h, "notes", "memory") }
      const install = yield* memdir(
        h,
        ["hooks", "install", "--agent", "claude", "--json", "--model-calls", "off"],
        elsewhere
      )
      assert.strictEqual(install.status, 0, install.stderr)
      assert.deepStrictEqual(readSettings(h).permissions.allow, [
        "Read(~/.memdir/**)",
        "Edit(~/.memdir/**)",
        "Read(~/notes/memory/**)",
        "Edit(~/notes/memory/**)",
        "mcp__memdir"
      ])
      yield* memdir(h, ["hooks", "uninstall", "--agent", "claude"], elsewhere)
      const inside = { MEMDIR_MEMORY_DIR: path.join(h, ".memdir", "mine") }
      yield* memdir(h, ["hooks", "install", "--agent", "claude", "--model-calls", "off"], inside)
      assert.deepStrictEqual(readSettings(h).permissions.allow, rules)
    }))

  it.live("hooks taken out by hand: uninstall still takes back the memory setting and the rules", () =>
    Effect.gen(function*() {
      const h = freshHome("home-hand")
      writeSettings(h, "{\n  \"model\": \"opus\"\n}\n")
      yield* memdir(h, ["hooks", "install", "--agent", "claude", "--model-calls", "off"])
      const { hooks: _hooks, ...rest } = readSettings(h)
      writeSettings(h, JSON.stringify(rest, null, 2) + "\n")
      const uninstall = yield* memdir(h, ["hooks", "uninstall", "--agent", "claude"])
      assert.strictEqual(uninstall.status, 0, uninstall.stderr)
      assert.include(uninstall.stdout, "(none were left)")
      assert.include(uninstall.stdout, "removed the rules Read(~/.memdir/**), Edit(~/.memdir/**), mcp__memdir")
      assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), "{\n  \"model\": \"opus\"\n}\n")
    }))

  it.live("the user's own true comes back; --keep-agent-memory leaves it on; --dry-run writes nothing", () =>
    Effect.gen(function*() {
      const h = freshHome("home-on")
      const own = "{\n  \"autoMemoryEnabled\": true\n}\n"
      writeSettings(h, own)
      const dry = yield* memdir(h, ["hooks", "install", "--agent", "claude", "--dry-run", "--model-calls", "off"])
      assert.include(dry.stdout, "-  \"autoMemoryEnabled\": true")
      assert.include(dry.stdout, "+  \"autoMemoryEnabled\": false,")
      assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), own)
      assert.isFalse(fs.existsSync(path.join(h, ".memdir", "agent-settings.json")), "a dry run records nothing")

      yield* memdir(h, ["hooks", "install", "--agent", "claude", "--model-calls", "off"])
      assert.strictEqual(readSettings(h).autoMemoryEnabled, false)
      yield* memdir(h, ["hooks", "uninstall", "--agent", "claude"])
      assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), own)

      const keep = yield* memdir(h, [
        "hooks",
        "install",
        "--agent",
        "claude",
        "--keep-agent-memory",
        "--model-calls",
        "off"
      ])
      assert.strictEqual(keep.status, 0, keep.stderr)
      assert.strictEqual(readSettings(h).autoMemoryEnabled, true)
      assert.deepStrictEqual(readSettings(h).permissions.allow, rules)
      yield* memdir(h, ["hooks", "uninstall", "--agent", "claude"])
      assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), own)
    }))

  it.live("on a terminal it asks about model calls, then shows the diff and asks: No writes nothing, yes writes", () =>
    Effect.gen(function*() {
      const h = freshHome("home-tty")
      writeSettings(h, "{}\n")
      // script(1) gives the CLI a terminal; the answer comes on its stdin
      const onTerminal = (answer: string, flags = "") =>
        Effect.callback<CliRun>((resume) => {
          execFile(
            "script",
            [
              "-qec",
              `${JSON.stringify(process.execPath)} ${JSON.stringify(cliPath)} hooks install --agent claude${flags}`,
              "/dev/null"
            ],
            { cwd: project, env: scratchHomeEnv(h), encoding: "utf8" },
            (error, stdout, stderr) => resume(Effect.succeed({ status: error === null ? 0 : -1, stdout, stderr }))
          ).stdin?.end(answer)
        })
      // model calls: yes; the write: no
      const no = yield* onTerminal("y\nn\n")
      assert.strictEqual(no.status, 0, no.stderr)
      // the answer decides the hooks (the Stop hook with model calls on), so it comes before the diff
      const asked = no.stdout.indexOf("Turn on automatic model calls?")
      assert.isAbove(asked, -1)
      assert.isBelow(asked, no.stdout.indexOf("+  \"autoMemoryEnabled\": false"))
      assert.include(no.stdout, "+    \"Stop\": [")
      assert.isBelow(no.stdout.indexOf("+  \"autoMemoryEnabled\": false"), no.stdout.indexOf("Write these changes"))
      assert.include(no.stdout, "nothing written")
      assert.notInclude(no.stdout, "wrote \"automaticModelCalls\"", "declined: the switch is not written either")
      assert.isFalse(fs.existsSync(path.join(h, ".memdir", "settings.json")))
      assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), "{}\n")
      // end of input (Ctrl-D) is No, to both questions: no crash, nothing written
      const ended = yield* onTerminal("\x04")
      assert.strictEqual(ended.status, 0, ended.stdout)
      assert.include(ended.stdout, "nothing written")
      assert.notInclude(ended.stdout, "Error")
      assert.isFalse(fs.existsSync(path.join(h, ".memdir", "settings.json")))
      assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), "{}\n")
      const yes = yield* onTerminal("y\n", " --model-calls off")
      assert.strictEqual(yes.status, 0, yes.stderr)
      assert.strictEqual(readSettings(h).autoMemoryEnabled, false)
      assert.isUndefined(readSettings(h).hooks.Stop)

      // on already: the question's default is on, so Enter on a re-install keeps it (and adds the Stop hook)
      const memdirSettings = path.join(h, ".memdir", "settings.json")
      fs.writeFileSync(memdirSettings, JSON.stringify({ automaticModelCalls: true }))
      const enter = yield* onTerminal("\n")
      assert.strictEqual(enter.status, 0, enter.stdout)
      assert.include(enter.stdout, "Keep automatic model calls on?")
      assert.include(enter.stdout, "[Y/n]")
      assert.isTrue(JSON.parse(fs.readFileSync(memdirSettings, "utf8")).automaticModelCalls)
      const stopHook = [{ hooks: [{ type: "command", command: "memdir-hook", timeout: 15 }] }]
      assert.deepStrictEqual(readSettings(h).hooks.Stop, stopHook)
      // Ctrl-D at that question is no answer: the switch stays on, the Stop hook stays
      const quit = yield* onTerminal("\x04")
      assert.strictEqual(quit.status, 0, quit.stdout)
      assert.isTrue(JSON.parse(fs.readFileSync(memdirSettings, "utf8")).automaticModelCalls)
      assert.deepStrictEqual(readSettings(h).hooks.Stop, stopHook)
    }))

  it.live("settings of the wrong type are refused, named, and left as they were", () =>
    Effect.gen(function*() {
      const h = freshHome("home-bad")
      for (
        const [text, at] of [["{\"permissions\": {\"allow\": \"mcp__memdir\"}}", "permissions.allow"], [
          "{\"autoMemoryEnabled\": \"no\"}",
          "autoMemoryEnabled"
        ]] as const
      ) {
        writeSettings(h, text)
        const run = yield* memdir(h, ["hooks", "install", "--agent", "claude", "--model-calls", "off"])
        assert.strictEqual(run.status, 18, run.stderr)
        assert.include(run.stderr, at)
        assert.strictEqual(fs.readFileSync(settingsFile(h), "utf8"), text)
      }
    }))
})
