import { assert, describe, it } from "@effect/vitest"
import { applyPatch } from "diff"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as HookConfig from "../src/hooks/HookConfig.js"

const ours = { hooks: [{ type: "command", command: "memdir hook", timeout: 15 }] }

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
        SessionEnd: [ours]
      }
    })
    assert.deepStrictEqual(HookConfig.install(config, "claude"), { config, events: [] }, "idempotent")
  })

  it("codex 0.171 gets the four events, SessionEnd with the 3 s Codex allows it", () => {
    const hooks = HookConfig.install({}, "codex").config.hooks as any
    assert.deepStrictEqual(Object.keys(hooks), ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"])
    assert.deepStrictEqual(hooks.SessionEnd, [{ hooks: [{ type: "command", command: "memdir hook", timeout: 3 }] }])
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
    assert.deepStrictEqual(HookConfig.uninstall(user), { config: user, events: [] })
  })

  it("recognises memdir's commands, not look-alikes", () => {
    for (
      const c of [
        "memdir hook",
        "npx @memdir/cli hook",
        "node /opt/memdir/dist/memdir.js hook",
        "\"/x/memdir\" hook",
        "memdir hook --selector model"
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

  it("uninstall(install(config)) is the config again, for both agents", () => {
    FastCheck.assert(FastCheck.property(settings, FastCheck.constantFrom("claude", "codex"), (config, agent) => {
      const original = config as any
      const installed = HookConfig.install(original, agent as HookConfig.Agent).config
      assert.deepStrictEqual(HookConfig.uninstall(installed).config, original)
      assert.deepStrictEqual(JSON.parse(HookConfig.renderConfig(installed)), installed)
    }))
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
    assert.include(diff, "+            \"command\": \"memdir hook\",")
    // only a closing bracket gains a comma: nothing of the user's is removed
    const removed = diff.split("\n").slice(2).filter((line) => line.startsWith("-"))
    for (const line of removed) assert.match(line, /^-\s*[\]}]$/)
    // a real unified diff: it applies to the file as it was and gives the file install writes
    assert.strictEqual(applyPatch(before, diff), after)
    assert.strictEqual(applyPatch("", HookConfig.lineDiff("/h/hooks.json", "", after)), after)
  })

  it("the plugin's hooks/hooks.json is what install writes for Claude Code", () => {
    const here = path.dirname(fileURLToPath(import.meta.url))
    const plugin = JSON.parse(fs.readFileSync(path.join(here, "../../../plugins/claude-code/hooks/hooks.json"), "utf8"))
    assert.deepStrictEqual(plugin.hooks, HookConfig.memdirHooks("claude"))
    const manifest = JSON.parse(
      fs.readFileSync(path.join(here, "../../../plugins/claude-code/.claude-plugin/plugin.json"), "utf8")
    )
    assert.strictEqual(manifest.name, "memdir")
  })
})
