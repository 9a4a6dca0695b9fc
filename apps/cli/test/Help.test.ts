/**
 * Help's style and text helpers: when escape codes are allowed, how wide help is, how it wraps, what "did you
 * mean" offers. The CLI's help as a whole is tested end to end in test/cli-usage.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { MAX_WIDTH, styleFor, suggest, wrap } from "../src/Help.js"

describe("Help", () => {
  it("escape codes only on a terminal, with NO_COLOR unset or empty and TERM not dumb", () => {
    const terminal = { isTTY: true, columns: 80 }
    assert.isTrue(styleFor(terminal, {}).color)
    assert.isTrue(styleFor(terminal, { NO_COLOR: "" }).color)
    assert.isFalse(styleFor(terminal, { NO_COLOR: "1" }).color)
    assert.isFalse(styleFor(terminal, { TERM: "dumb" }).color)
    // a pipe or a file: never, even when asked to force colour
    assert.isFalse(styleFor({ isTTY: false }, { FORCE_COLOR: "1" }).color)
    assert.isFalse(styleFor({}, {}).color)
  })

  it("the terminal's width, at most 100 (and at least 40); 100 when not a terminal", () => {
    assert.strictEqual(styleFor({ isTTY: true, columns: 72 }, {}).width, 72)
    assert.strictEqual(styleFor({ isTTY: true, columns: 300 }, {}).width, MAX_WIDTH)
    assert.strictEqual(styleFor({ isTTY: true, columns: 10 }, {}).width, 40)
    assert.strictEqual(styleFor({ isTTY: false, columns: 300 }, {}).width, 100)
  })

  it("wraps at word boundaries and cuts a word longer than a line", () => {
    assert.deepStrictEqual(wrap("one two three four", 9), ["one two", "three", "four"])
    assert.deepStrictEqual(wrap("abcdefghij xy", 4), ["abcd", "efgh", "ij", "xy"])
    for (const line of wrap("word ".repeat(100), 37)) assert.isAtMost(line.length, 37)
  })

  it("suggests the closest names, none for a far or very short input", () => {
    assert.deepStrictEqual(suggest("recal", ["recall", "write", "ls"]), ["recall"])
    assert.deepStrictEqual(suggest("snyc", ["write", "ls", "sync", "audit"]), ["sync"])
    assert.deepStrictEqual(suggest("--jsn", ["--json", "--cwd"]), ["--json"])
    assert.deepStrictEqual(suggest("x", ["ls", "log"]), [])
    assert.deepStrictEqual(suggest("nosuch", ["path", "init", "recall"]), [])
  })
})
