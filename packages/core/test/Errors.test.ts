/**
 * The error classes (`Schema.TaggedError`): tagged and named, their fields validated and kept in the declared
 * order (after `_tag`, which Effect 4 sets first), yieldable, structurally equal, with their own `message`, and every
 * `_tag` has its exit code.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Errors from "../src/Errors.js"

describe("Errors", () => {
  it("an error is tagged and named, `_tag` first, then its fields in the declared order, unknown keys dropped", () => {
    const error = new Errors.InvalidMemoryInputError(
      { reason: "must be ≥ 1", value: "0", field: "--max", extra: 1 } as unknown as ConstructorParameters<
        typeof Errors.InvalidMemoryInputError
      >[0]
    )
    assert.strictEqual(error._tag, "InvalidMemoryInputError")
    assert.strictEqual(error.name, "InvalidMemoryInputError")
    assert.instanceOf(error, Error)
    assert.deepStrictEqual(Object.keys(error), ["_tag", "field", "value", "reason"])
    assert.strictEqual(
      JSON.stringify(error),
      JSON.stringify({ _tag: "InvalidMemoryInputError", field: "--max", value: "0", reason: "must be ≥ 1" })
    )
    assert.match(error.message, /--max/)
  })

  it("a construction with fields of the wrong type throws, its cause naming the field and what was expected", () => {
    const thrown = (() => {
      try {
        new Errors.SettingsError({ path: 42 as unknown as string, detail: "d" })
      } catch (error) {
        return error
      }
      return undefined
    })()
    assert.instanceOf(thrown, Error)
    const cause = (thrown as Error).cause
    assert.isTrue(SchemaIssue.isIssue(cause))
    assert.match(SchemaIssue.makeFormatterDefault()(cause as SchemaIssue.Issue), /Expected string[\s\S]*\["path"\]/)
  })

  it("an optional field given as undefined is kept, one not given is absent", () => {
    assert.deepStrictEqual(Object.keys(new Errors.SettingsError({ path: "p", detail: "d" })), [
      "_tag",
      "path",
      "detail"
    ])
    assert.deepStrictEqual(
      Object.keys(new Errors.SettingsError({ path: "p", key: undefined, detail: "d" })),
      ["_tag", "path", "key", "detail"]
    )
  })

  it.effect("an error is yieldable (the effect fails with it), caught by its tag, and equal to one with the same fields", () =>
    Effect.gen(function*() {
      const error = new Errors.MemoryIoError({ op: "read", path: "/m/a.md", detail: "EACCES" })
      const failedWith = yield* Effect.flip(Effect.gen(function*() {
        return yield* error
      }))
      assert.strictEqual(failedWith, error)
      const caught = yield* Effect.catchTag(Effect.fail(error), "MemoryIoError", (e) => Effect.succeed(e.path))
      assert.strictEqual(caught, "/m/a.md")
      assert.isTrue(Equal.equals(error, new Errors.MemoryIoError({ op: "read", path: "/m/a.md", detail: "EACCES" })))
      assert.isFalse(Equal.equals(error, new Errors.MemoryIoError({ op: "write", path: "/m/a.md", detail: "EACCES" })))
    }))

  it("every error class's tag but the memory tool's (a tool result, never an exit) has an exit code", () => {
    // a `Schema.TaggedError` class keeps its tag as the literal of its `_tag` field
    const tagOf = (value: unknown): ReadonlyArray<string> => {
      if (!Schema.isSchema(value) || !("fields" in value)) return []
      const field = (value.fields as { readonly _tag?: { readonly schema?: { readonly literal?: unknown } } })._tag
      return typeof field?.schema?.literal === "string" ? [field.schema.literal] : []
    }
    const tags = Object.values(Errors).flatMap(tagOf).filter((tag) => tag !== "MemoryToolError")
    assert.isAbove(tags.length, 15)
    for (const tag of tags) assert.isNumber(Errors.exitCodes[tag as keyof typeof Errors.exitCodes], tag)
  })
})

describe("switch messages", () => {
  it("team memory off by default reads \"(the default)\", not \"(default (off))\"", () => {
    const message = new Errors.TeamMemoryDisabledError({ source: "default" }).message
    assert.match(message, /^team memory is off \(the default\)\. Turn it on with "teamMemory": true/)
    assert.notInclude(message, "default (")
  })

  it("each way team memory is off says the way to turn it on that works", () => {
    const team = (source: string) => new Errors.TeamMemoryDisabledError({ source }).message
    assert.include(team("env MEMDIR_TEAM_MEMORY"), "Set MEMDIR_TEAM_MEMORY=1, or unset it")
    assert.include(team("project settings /p/.memdir/settings.json"), "remove \"teamMemory\": false from /p/.memdir/")
    assert.include(team("policy settings /etc/memdir/policy.json"), "only MEMDIR_TEAM_MEMORY=1 overrides it")
    assert.include(
      team("user settings /h/.memdir/settings.json"),
      "Set \"teamMemory\": true in /h/.memdir/settings.json"
    )
  })

  it("auto memory disabled by MEMDIR_DISABLE_AUTO_MEMORY says to unset it, never a setting that cannot win", () => {
    const message = new Errors.MemoryDisabledError({ source: "env MEMDIR_DISABLE_AUTO_MEMORY" }).message
    assert.strictEqual(
      message,
      "auto memory is disabled (env MEMDIR_DISABLE_AUTO_MEMORY). Unset MEMDIR_DISABLE_AUTO_MEMORY to turn it on; " +
        "no setting overrides it."
    )
    assert.notInclude(message, "autoMemoryEnabled")
    const bySettings = new Errors.MemoryDisabledError({ source: "user settings /h/.memdir/settings.json" }).message
    assert.include(bySettings, "Set \"autoMemoryEnabled\": true in /h/.memdir/settings.json")
    assert.include(new Errors.MemoryDisabledError({ source: "env MEMDIR_SIMPLE" }).message, "Unset MEMDIR_SIMPLE")
  })

  it("a switch's source in a sentence: the default is \"the default\"", () => {
    assert.strictEqual(Errors.switchSourceText("default"), "the default")
    assert.strictEqual(Errors.switchSourceText("env MEMDIR_TEAM_MEMORY"), "env MEMDIR_TEAM_MEMORY")
  })
})
