import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { spawnSync } from "node:child_process"
import {
  compileSafeRegex,
  makeLineSearch,
  SAFE_REGEX_MAX_LINE_CHARS,
  SAFE_REGEX_MAX_PATTERN_CHARS
} from "../src/internal/text/safeRegex.js"

/** The attack of issue 13: a model's grep for `^(a+)+$` over a file of `a`×40 + `!`. */
const HOSTILE_PATTERN = "^(a+)+$"
const hostileLine = (n: number) => "a".repeat(n) + "!"

describe("SafeRegex", () => {
  it("the hostile input really hangs a backtracking engine (a child process, killed after 2 s)", () => {
    const child = spawnSync(
      process.execPath,
      ["-e", `process.stdout.write(String(/${HOSTILE_PATTERN}/.test(${JSON.stringify(hostileLine(40))})))`],
      { timeout: 2_000, encoding: "utf8" }
    )
    // Killed by the timeout, never answered: the attack is real, so the test below can fail.
    assert.strictEqual(child.signal, "SIGTERM")
    assert.strictEqual(child.stdout, "")
  })

  it.effect("the hostile grep over a real file answers at once, in time linear in the input", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "memdir-saferegex-" })
      const file = path.join(dir, "a.txt")
      // The attack's line, longer lines of the same shape, then the attack's line 10,000 times over.
      const lines = [hostileLine(40), hostileLine(1_000), hostileLine(SAFE_REGEX_MAX_LINE_CHARS - 1), "aaaa"]
      yield* fs.writeFileString(file, [...lines, ...Array.from({ length: 10_000 }, () => hostileLine(40))].join("\n"))
      const regex = yield* compileSafeRegex(HOSTILE_PATTERN)
      const search = makeLineSearch(regex)
      const started = performance.now()
      assert.isTrue(search.scan("a.txt", yield* fs.readFileString(file)))
      const elapsed = performance.now() - started
      assert.deepStrictEqual(search.matches(), [{ source: "a.txt", line: 4, text: "aaaa" }])
      assert.strictEqual(search.render(), "a.txt:4: aaaa")
      assert.isBelow(elapsed, 1_000)
    }).pipe(Effect.provide(NodeServices.layer)))

  it.effect("matches like a JavaScript regex for the syntax both share", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, boolean, string, boolean]> = [
        ["DATABASE_URL", true, "database_url=postgres://", true],
        ["DATABASE_URL", false, "database_url=postgres://", false],
        ["\\bfoo\\b", false, "a foo b", true],
        ["\\bfoo\\b", false, "afoob", false],
        ["^\\d{3}-\\d{4}$", false, "555-1234", true],
        ["(?<year>\\d{4})-\\d\\d", false, "on 2026-12", true],
        ["\\p{L}+é", false, "café", true],
        ["a/b", false, "x a/b y", true],
        ["\\u00e9", false, "é", true]
      ]
      for (const [pattern, ignoreCase, line, expected] of cases) {
        const regex = yield* compileSafeRegex(pattern, { ignoreCase })
        assert.strictEqual(regex.test(line), expected, `${pattern} on ${line}`)
        assert.strictEqual(new RegExp(pattern, ignoreCase ? "iu" : "u").test(line), expected, `native ${pattern}`)
      }
    }))

  it.effect("refuses backreferences and lookaround with a message that says what to use instead", () =>
    Effect.gen(function*() {
      const refused: ReadonlyArray<readonly [string, string, string]> = [
        ["(a)\\1", "backreference", "\\1"],
        ["(?<w>\\w+) \\k<w>", "backreference", "\\k<…>"],
        ["foo(?=bar)", "lookaround", "(?=…)"],
        ["foo(?!bar)", "lookaround", "(?!…)"],
        ["(?<=x)y", "lookaround", "(?<=…)"],
        ["(?<!x)y", "lookaround", "(?<!…)"]
      ]
      for (const [pattern, reason, detail] of refused) {
        const error = yield* Effect.flip(compileSafeRegex(pattern))
        assert.strictEqual(error._tag, "UnsafePatternError")
        assert.strictEqual(error.reason, reason, pattern)
        assert.strictEqual(error.detail, detail, pattern)
        assert.include(error.message, "linear-time matcher does not support")
        assert.include(error.message, reason === "lookaround" ? "match the surrounding text" : "match the repeated")
        assert.include(error.message, reason === "lookaround" ? "\"foo(?=bar)\" → \"foobar\"" : "\"(foo|bar) \\1\" → ")
      }
      // Inside a character class the same characters are literals, not constructs.
      assert.isTrue((yield* compileSafeRegex("[(?=]x")).test("=x"))
      assert.isTrue((yield* compileSafeRegex("[\\]]x")).test("]x"))
    }))

  it.effect("refuses invalid, oversized and over-complex patterns with a typed error", () =>
    Effect.gen(function*() {
      const invalid = yield* Effect.flip(compileSafeRegex("("))
      assert.strictEqual(invalid.reason, "syntax")
      assert.include(invalid.message, "missing closing )")
      const atomic = yield* Effect.flip(compileSafeRegex("(?>a+)b"))
      assert.strictEqual(atomic.reason, "syntax")
      const long = yield* Effect.flip(compileSafeRegex("a".repeat(SAFE_REGEX_MAX_PATTERN_CHARS + 1)))
      assert.strictEqual(long.reason, "too-long")
      assert.include(long.message, "shorter")
      const complex = yield* Effect.flip(compileSafeRegex("[a-z]{1,1000}".repeat(6)))
      assert.strictEqual(complex.reason, "too-complex")
      assert.include(complex.message, "smaller repeat counts")
    }))

  it.effect("bounds the matches kept, the line looked at and the characters scanned", () =>
    Effect.gen(function*() {
      const regex = yield* compileSafeRegex("hit")
      const capped = makeLineSearch(regex, { maxMatches: 2 })
      assert.isTrue(capped.scan("f", ["hit 1", "miss", "hit 2", "hit 3", "hit 4"].join("\n")))
      assert.deepStrictEqual(capped.matches().map((m) => m.line), [1, 3])
      assert.strictEqual(capped.more(), 2)
      assert.strictEqual(capped.render(), "f:1: hit 1\nf:3: hit 2\n[… 2 more matches: narrow the pattern or path]")

      // A match past the line bound is not seen; the shown text is cut.
      const longLine = "x".repeat(SAFE_REGEX_MAX_LINE_CHARS) + "hit"
      assert.isFalse(regex.test(longLine))
      const shown = makeLineSearch(regex)
      shown.scan("g", "hit" + "y".repeat(1_000))
      assert.strictEqual(shown.matches()[0]!.text, "hit" + "y".repeat(297) + "…")

      const budget = makeLineSearch(regex, { maxScannedChars: 100 })
      assert.isTrue(budget.scan("a", "hit\n".repeat(10)))
      assert.isFalse(budget.scan("b", "hit\n".repeat(100)))
      assert.isTrue(budget.exhausted())
      assert.isFalse(budget.scan("c", "hit"))
      assert.include(budget.render(), "[… search stopped after 100 characters: narrow the path]")
      assert.isTrue(budget.matches().every((m) => m.source !== "c"))
    }))
})
