import { assert, describe, it } from "@effect/vitest"
import { applyPatch } from "diff"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as HookConfig from "../src/hooks/HookConfig.js"

const ours = { hooks: [{ type: "command", command: "memdir-hook", timeout: 15 }] }
/** Claude Code runs memdir's SessionEnd handler in the background (docs/hooks.md#what-the-hooks-cost). */
const oursAsync = { hooks: [{ type: "command", command: "memdir-hook", timeout: 15, async: true }] }

const user = {
  env: { FOO: "1" },
  hooks: {
    Stop: [{ hooks: [{ type: "command", command: "say done" }] }],
    UserPromptSubmit: [{ matcher: "", hooks: [{ type: "command", command: "./redact.sh" }] }],
    PostToolUse: [{ matcher: "Write|Edit", hooks: [{ type: "command", command: "prettier --write" }] }]
  }
}

describe("HookConfig", () => {
  it("install appends memdir's group to each event, keeping the user's groups and keys", () => {
    const { config, events } = HookConfig.install(user, "claude")
    assert.deepStrictEqual(events, ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"])
    assert.deepStrictEqual(config, {
      env: { FOO: "1" },
      hooks: {
        Stop: [user.hooks.Stop[0], ours],
        UserPromptSubmit: [user.hooks.UserPromptSubmit[0], ours],
        PostToolUse: user.hooks.PostToolUse,
        SessionStart: [ours],
        SessionEnd: [oursAsync]
      }
    })
    assert.deepStrictEqual(
      HookConfig.install(config, "claude"),
      { config, events: [], removed: [], settings: {} },
      "idempotent"
    )
  })

  it("with automatic model calls off, install leaves Stop out, and takes out memdir's Stop of an earlier install", () => {
    const off = HookConfig.eventsFor(false)
    assert.deepStrictEqual(off, ["SessionStart", "UserPromptSubmit", "SessionEnd"])
    assert.deepStrictEqual(HookConfig.eventsFor(true), HookConfig.ALL_EVENTS)
    const fresh = HookConfig.install(user, "claude", undefined, undefined, off)
    assert.deepStrictEqual(fresh.events, off)
    assert.deepStrictEqual(fresh.removed, [])
    assert.deepStrictEqual((fresh.config.hooks as any).Stop, user.hooks.Stop, "the user's Stop hook only")
    // an earlier install's Stop handler goes, in a group of its own or shared with the user's
    const earlier = HookConfig.install(user, "claude").config
    const converged = HookConfig.install(earlier, "claude", undefined, undefined, off)
    assert.deepStrictEqual(converged.events, [])
    assert.deepStrictEqual(converged.removed, ["Stop"])
    assert.isTrue(HookConfig.isChange(converged))
    assert.deepStrictEqual(converged.config, fresh.config)
    const shared = { hooks: { Stop: [{ hooks: [{ type: "command", command: "say done" }, ours.hooks[0]!] }] } }
    assert.deepStrictEqual(HookConfig.install(shared, "codex", undefined, undefined, off).config.hooks, {
      Stop: [{ hooks: [{ type: "command", command: "say done" }] }],
      ...HookConfig.memdirHooks("codex", undefined, off)
    })
    // and back on: Stop again, after the user's
    const on = HookConfig.install(converged.config, "claude")
    assert.deepStrictEqual(on.events, ["Stop"])
    assert.deepStrictEqual(on.config, earlier)
  })

  it("install makes memdir's SessionEnd handler of an earlier install async, nothing else", () => {
    const earlier = {
      hooks: {
        SessionStart: [ours],
        UserPromptSubmit: [ours],
        Stop: [ours],
        SessionEnd: [{ matcher: "", hooks: [{ type: "command", command: "say bye" }, ours.hooks[0]!] }]
      }
    }
    const { config, events } = HookConfig.install(earlier, "claude")
    assert.deepStrictEqual(events, ["SessionEnd"])
    assert.deepStrictEqual(config, {
      hooks: {
        SessionStart: [ours],
        UserPromptSubmit: [ours],
        Stop: [ours],
        SessionEnd: [{ matcher: "", hooks: [{ type: "command", command: "say bye" }, oursAsync.hooks[0]!] }]
      }
    })
    assert.deepStrictEqual(HookConfig.install(config, "claude").events, [], "then idempotent")
    // uninstall takes memdir's handlers out whatever their flags, the user's handler stays
    assert.deepStrictEqual(HookConfig.uninstall(config).config, {
      hooks: { SessionEnd: [{ matcher: "", hooks: [{ type: "command", command: "say bye" }] }] }
    })
  })

  it("install turns an earlier install's `memdir hook` into `memdir-hook`, options kept, nothing else", () => {
    const earlier = (command: string) => ({ hooks: [{ type: "command", command, timeout: 15 }] })
    const config = {
      hooks: {
        SessionStart: [earlier("memdir hook")],
        UserPromptSubmit: [earlier("memdir hook --selector model")],
        Stop: [{ matcher: "", hooks: [{ type: "command", command: "say done" }, earlier("memdir hook").hooks[0]!] }],
        SessionEnd: [oursAsync]
      }
    }
    const { config: next, events } = HookConfig.install(config, "claude")
    assert.deepStrictEqual(events, ["SessionStart", "UserPromptSubmit", "Stop"])
    assert.deepStrictEqual(next, {
      hooks: {
        SessionStart: [ours],
        UserPromptSubmit: [earlier("memdir-hook --selector model")],
        Stop: [{ matcher: "", hooks: [{ type: "command", command: "say done" }, ours.hooks[0]!] }],
        SessionEnd: [oursAsync]
      }
    })
    assert.deepStrictEqual(HookConfig.install(next, "claude").events, [], "then idempotent")
    // a command of the user's choosing stays, and so does everything with --command
    const chosen = { hooks: { SessionStart: [earlier("npx @memdir/cli hook")] } }
    assert.deepStrictEqual(HookConfig.install(chosen, "claude", "memdir-hook", undefined, ["SessionStart"]).events, [])
    const asked = { hooks: { SessionStart: [earlier("memdir hook")] } }
    assert.deepStrictEqual(HookConfig.install(asked, "claude", "memdir hook", undefined, ["SessionStart"]).events, [])
  })

  it("codex 0.171 gets the four events, SessionEnd with the 3 s Codex allows it", () => {
    const hooks = HookConfig.install({}, "codex").config.hooks as any
    assert.deepStrictEqual(Object.keys(hooks), ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"])
    assert.deepStrictEqual(hooks.SessionEnd, [{ hooks: [{ type: "command", command: "memdir-hook", timeout: 3 }] }])
    assert.deepStrictEqual(hooks.Stop, [ours])
    assert.deepStrictEqual(HookConfig.memdirHooks("codex"), hooks)
  })

  it("uninstall removes only memdir's handlers, also from a group it shares with the user", () => {
    const shared = {
      hooks: {
        Stop: [{
          matcher: "",
          hooks: [{ type: "command", command: "say done" }, { type: "command", command: "memdir hook" }]
        }]
      }
    }
    assert.deepStrictEqual(HookConfig.uninstall(shared).config, {
      hooks: { Stop: [{ matcher: "", hooks: [{ type: "command", command: "say done" }] }] }
    })
    assert.deepStrictEqual(HookConfig.uninstall(user), { config: user, events: [], settings: {} })
  })

  it("recognises memdir's commands, not look-alikes", () => {
    for (
      const c of [
        "memdir hook",
        "npx @memdir/cli hook",
        "node /opt/memdir/dist/memdir.js hook",
        "\"/x/memdir\" hook",
        "memdir hook --selector model",
        "memdir-hook",
        "/usr/local/bin/memdir-hook --selector model",
        "\"/opt/my tools/memdir-hook\""
      ]
    ) {
      assert.isTrue(HookConfig.isMemdirCommand(c), c)
    }
    for (
      const c of [
        "memdir hooks install",
        "echo hook",
        "memdir recall hook x",
        "memdir hook x",
        "notmemdirhook",
        "memdir-hooks",
        "mymemdir-hook",
        "echo memdir-hook x",
        42,
        undefined
      ]
    ) {
      assert.isFalse(HookConfig.isMemdirCommand(c), String(c))
    }
  })

  it("refuses a file of another shape, naming where", () => {
    const refused = (text: string) => Result.getFailure(HookConfig.parseConfig("/h/settings.json", text))
    assert.strictEqual(refused("{").pipe((e) => e._tag === "Some" && e.value.at), "")
    assert.strictEqual(refused("[1]").pipe((e) => e._tag === "Some" && e.value.detail), "not a JSON object")
    assert.strictEqual(refused("{\"hooks\": []}").pipe((e) => e._tag === "Some" && e.value.at), "hooks")
    assert.strictEqual(
      refused("{\"hooks\": {\"Stop\": {}}}").pipe((e) => e._tag === "Some" && e.value.at),
      "hooks.Stop"
    )
    assert.strictEqual(
      refused("{\"hooks\": {\"Stop\": [{\"hooks\": \"x\"}]}}").pipe((e) => e._tag === "Some" && e.value.at),
      "hooks.Stop[0].hooks"
    )
    assert.deepStrictEqual(HookConfig.parseConfig("/h/settings.json", ""), Result.succeed({}))
  })

  const json = FastCheck.letrec((tie) => ({
    value: FastCheck.oneof(
      { depthSize: "small" },
      FastCheck.string(),
      FastCheck.integer(),
      FastCheck.boolean(),
      FastCheck.constant(null),
      FastCheck.array(tie("value"), { maxLength: 3 }),
      FastCheck.dictionary(FastCheck.string({ maxLength: 5 }), tie("value"), { maxKeys: 3 })
    )
  })).value
  const handler = FastCheck.record({
    type: FastCheck.constant("command"),
    command: FastCheck.string({ maxLength: 20 }).filter((c) => !HookConfig.isMemdirCommand(c))
  })
  const group = FastCheck.record({ hooks: FastCheck.array(handler, { minLength: 1, maxLength: 3 }) })
  const event = FastCheck.constantFrom("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreToolUse")
  const settings = FastCheck.record({
    other: FastCheck.dictionary(FastCheck.string({ maxLength: 8 }).filter((k) => k !== "hooks"), json, { maxKeys: 3 }),
    hooks: FastCheck.option(
      FastCheck.dictionary(event, FastCheck.array(group, { minLength: 1, maxLength: 2 }), { minKeys: 1 })
    )
  }).map(({ hooks, other }) => (hooks === null ? other : { ...other, hooks }))

  const setup = HookConfig.claudeAllowRules(["~/.memdir"])
  const claudeSetup: HookConfig.ClaudeSetup = { allow: setup, autoMemoryOff: true }
  // what a user may already have where memdir's Claude Code setup writes: its rules among theirs, memory on or off
  const claudeSettings = FastCheck.record({
    base: settings,
    autoMemoryEnabled: FastCheck.option(FastCheck.boolean()),
    permissions: FastCheck.option(FastCheck.record({
      allow: FastCheck.option(
        FastCheck.array(FastCheck.constantFrom("Bash(npm test)", "Read(~/notes/**)", ...setup), { maxLength: 4 })
      ),
      deny: FastCheck.option(FastCheck.constant(["Read(./.env)"]))
    }))
  }).map(({ autoMemoryEnabled, base, permissions }) => ({
    ...(base as Record<string, unknown>),
    ...(autoMemoryEnabled === null ? {} : { autoMemoryEnabled }),
    ...(permissions === null ? {} : {
      permissions: {
        ...(permissions.allow === null ? {} : { allow: permissions.allow }),
        ...(permissions.deny === null ? {} : { deny: permissions.deny })
      }
    })
  }))

  it("uninstall(install(config)) is the config again, for both agents, with model calls on or off", () => {
    FastCheck.assert(FastCheck.property(
      settings,
      FastCheck.constantFrom("claude", "codex"),
      FastCheck.boolean(),
      (config, agent, modelCalls) => {
        const original = config as any
        const events = HookConfig.eventsFor(modelCalls)
        const installed = HookConfig.install(original, agent as HookConfig.Agent, undefined, undefined, events).config
        assert.deepStrictEqual(HookConfig.uninstall(installed).config, original)
        assert.deepStrictEqual(JSON.parse(HookConfig.renderConfig(installed)), installed)
      }
    ))
  })

  it("install converges: switching model calls on and off ends where a fresh install with the last setting does", () => {
    FastCheck.assert(FastCheck.property(
      settings,
      FastCheck.constantFrom("claude", "codex"),
      FastCheck.array(FastCheck.boolean(), { minLength: 1, maxLength: 4 }),
      (config, agent, switches) => {
        const a = agent as HookConfig.Agent
        const installWith = (c: any, on: boolean) =>
          HookConfig.install(c, a, undefined, undefined, HookConfig.eventsFor(on)).config
        const last = switches.at(-1)!
        const stepped = switches.reduce((c: any, on) => installWith(c, on), config as any)
        assert.deepStrictEqual(stepped, installWith(config, last))
      }
    ))
  })

  const layout = FastCheck.record({
    indent: FastCheck.constantFrom<string | number>(2, 4, "\t"),
    end: FastCheck.constantFrom("\n", "", "\n\n")
  })

  it("install then uninstall gives the user's file back byte for byte (indented JSON.stringify layouts)", () => {
    FastCheck.assert(FastCheck.property(
      settings,
      layout,
      FastCheck.constantFrom("claude", "codex"),
      (config, { end, indent }, agent) => {
        const original = JSON.stringify(config, null, indent) + end
        const read = (text: string) => Result.getOrThrow(HookConfig.parseConfig("/h/hooks.json", text))
        const installed = HookConfig.renderConfig(
          HookConfig.install(read(original), agent as HookConfig.Agent).config,
          original
        )
        assert.deepStrictEqual(
          JSON.parse(installed),
          HookConfig.install(read(original), agent as HookConfig.Agent).config
        )
        assert.isTrue(installed.endsWith(end) && !installed.endsWith(end + "\n"), "the file's ending is kept")
        const change = HookConfig.uninstall(read(installed))
        assert.strictEqual(HookConfig.renderConfig(change.config, installed), original)
      }
    ))
  })

  it("Claude Code: install turns its auto memory off and allows memdir's rules; uninstall takes back exactly that", () => {
    const own = { model: "opus", permissions: { allow: ["Bash(npm test)"], deny: ["Read(./.env)"] } }
    const installed = HookConfig.install(own, "claude", undefined, claudeSetup)
    assert.deepStrictEqual(installed.settings, { autoMemoryEnabled: null, allow: setup })
    assert.strictEqual(installed.config.autoMemoryEnabled, false)
    assert.deepStrictEqual(installed.config.permissions, {
      allow: ["Bash(npm test)", "Read(~/.memdir/**)", "Edit(~/.memdir/**)", "mcp__memdir"],
      deny: ["Read(./.env)"]
    })
    const again = HookConfig.install(installed.config, "claude", undefined, claudeSetup)
    assert.isFalse(HookConfig.isChange(again), "a second install changes nothing")
    const removed = HookConfig.uninstall(installed.config, installed.settings)
    assert.deepStrictEqual(removed.config, own)
    assert.deepStrictEqual(removed.settings, installed.settings)
    // without the record (another machine, an older memdir) only the hooks go: nothing of the user's is guessed at
    const { hooks: _hooks, ...withoutHooks } = installed.config
    assert.deepStrictEqual(HookConfig.uninstall(installed.config).config, withoutHooks)
  })

  it("Claude Code: what the user had before install stays after uninstall", () => {
    const on = { autoMemoryEnabled: true }
    const installed = HookConfig.install(on, "claude", undefined, claudeSetup)
    assert.deepStrictEqual(installed.settings, { autoMemoryEnabled: true, allow: setup, created: "permissions" })
    assert.deepStrictEqual(HookConfig.uninstall(installed.config, installed.settings).config, on)
    // their own `false` and their own memdir rule are theirs: not recorded, not removed
    const theirs = { autoMemoryEnabled: false, permissions: { allow: ["mcp__memdir"] } }
    const mine = HookConfig.install(theirs, "claude", undefined, claudeSetup)
    assert.deepStrictEqual(mine.settings, { allow: ["Read(~/.memdir/**)", "Edit(~/.memdir/**)"] })
    assert.deepStrictEqual(HookConfig.uninstall(mine.config, mine.settings).config, theirs)
    // --keep-agent-memory: the rules only
    const kept = HookConfig.install({}, "claude", undefined, { allow: setup, autoMemoryOff: false })
    assert.isUndefined(kept.config.autoMemoryEnabled)
    // Codex has no such settings: its hooks.json gets the hooks only
    assert.deepStrictEqual(HookConfig.install({}, "codex", undefined, claudeSetup).settings, {})
  })

  it("Claude Code: install then uninstall gives the settings file back byte for byte", () => {
    FastCheck.assert(FastCheck.property(claudeSettings, layout, (config, { end, indent }) => {
      const original = JSON.stringify(config, null, indent) + end
      const read = (text: string) => Result.getOrThrow(HookConfig.parseConfig("/h/settings.json", text))
      const change = HookConfig.install(read(original), "claude", undefined, claudeSetup)
      const installed = HookConfig.renderConfig(change.config, original)
      assert.strictEqual(read(installed).autoMemoryEnabled, false)
      for (const rule of setup) assert.include((read(installed).permissions as any).allow, rule)
      const back = HookConfig.uninstall(read(installed), change.settings)
      assert.strictEqual(HookConfig.renderConfig(back.config, installed), original)
    }))
  })

  it("memdir's install records: written and read back; a hand-edited one is refused, naming the file", () => {
    const records = {
      "/h/.claude/settings.json": { autoMemoryEnabled: null, allow: [...setup], created: "permissions" as const }
    }
    assert.deepStrictEqual(
      HookConfig.parseRecords("/h/.memdir/agent-settings.json", HookConfig.renderRecords(records)),
      Result.succeed(records)
    )
    assert.deepStrictEqual(HookConfig.parseRecords("/r.json", undefined), Result.succeed({}))
    for (
      const text of [
        "{",
        "[]",
        "{\"files\": {\"/s\": {\"allow\": \"mcp__memdir\"}}}",
        "{\"files\": {\"/s\": {\"created\": \"x\"}}}"
      ]
    ) {
      const failure = Result.getFailure(HookConfig.parseRecords("/h/.memdir/agent-settings.json", text))
      assert.isTrue(failure._tag === "Some" && failure.value.path === "/h/.memdir/agent-settings.json", text)
    }
  })

  it("rule paths: ~/ under the user's home, // before any other absolute path", () => {
    assert.strictEqual(HookConfig.ruleRoot("/home/me/.memdir", "/home/me"), "~/.memdir")
    assert.strictEqual(HookConfig.ruleRoot("/home/me/.memdir/", "/home/me/"), "~/.memdir")
    assert.strictEqual(HookConfig.ruleRoot("/srv/memdir", "/home/me"), "//srv/memdir")
    assert.strictEqual(HookConfig.ruleRoot("/home/meow/.memdir", "/home/me"), "//home/meow/.memdir")
    assert.deepStrictEqual(HookConfig.claudeAllowRules(["~/.memdir", "//srv/memdir"]), [
      "Read(~/.memdir/**)",
      "Edit(~/.memdir/**)",
      "Read(//srv/memdir/**)",
      "Edit(//srv/memdir/**)",
      "mcp__memdir"
    ])
  })

  it("refuses settings memdir's setup would edit when they are not Claude Code's types", () => {
    const at = (text: string) =>
      Result.getFailure(HookConfig.parseConfig("/h/settings.json", text)).pipe((e) => e._tag === "Some" && e.value.at)
    assert.strictEqual(at("{\"autoMemoryEnabled\": \"no\"}"), "autoMemoryEnabled")
    assert.strictEqual(at("{\"permissions\": []}"), "permissions")
    assert.strictEqual(at("{\"permissions\": {\"allow\": \"mcp__memdir\"}}"), "permissions.allow")
    assert.strictEqual(at("{\"permissions\": {\"allow\": [1]}}"), "permissions.allow")
  })

  it("a new or empty file is written with two spaces and a final newline", () => {
    assert.strictEqual(HookConfig.renderConfig({ a: 1 }), "{\n  \"a\": 1\n}\n")
    assert.strictEqual(HookConfig.renderConfig({ a: 1 }, "  \n"), "{\n  \"a\": 1\n}\n")
    assert.strictEqual(HookConfig.renderConfig({ a: 1 }, "{}"), "{\n  \"a\": 1\n}")
    assert.strictEqual(HookConfig.renderConfig({ a: 1 }, "{\"b\": 2}\n"), "{\n  \"a\": 1\n}\n")
    assert.strictEqual(HookConfig.renderConfig({ a: [1] }, "{\n\t\"b\": 2\n}"), "{\n\t\"a\": [\n\t\t1\n\t]\n}")
  })

  it("the dry-run diff shows the added lines and the file", () => {
    const before = HookConfig.renderConfig(user)
    const after = HookConfig.renderConfig(HookConfig.install(user, "codex").config)
    const diff = HookConfig.lineDiff("/h/hooks.json", before, after)
    assert.match(diff, /^--- \/h\/hooks\.json\n\+\+\+ \/h\/hooks\.json\n/)
    assert.include(diff, "+            \"command\": \"memdir-hook\",")
    // only a closing bracket gains a comma: nothing of the user's is removed
    const removed = diff.split("\n").slice(2).filter((line) => line.startsWith("-"))
    for (const line of removed) assert.match(line, /^-\s*[\]}]$/)
    // a real unified diff: it applies to the file as it was and gives the file install writes
    assert.strictEqual(applyPatch(before, diff), after)
    assert.strictEqual(applyPatch("", HookConfig.lineDiff("/h/hooks.json", "", after)), after)
  })

  it("the plugin's hooks/hooks.json is what install writes for Claude Code with model calls off", () => {
    const here = path.dirname(fileURLToPath(import.meta.url))
    const plugin = JSON.parse(fs.readFileSync(path.join(here, "../../../plugins/claude-code/hooks/hooks.json"), "utf8"))
    assert.deepStrictEqual(plugin.hooks, HookConfig.memdirHooks("claude", undefined, HookConfig.eventsFor(false)))
    const manifest = JSON.parse(
      fs.readFileSync(path.join(here, "../../../plugins/claude-code/.claude-plugin/plugin.json"), "utf8")
    )
    assert.strictEqual(manifest.name, "memdir")
  })
})
