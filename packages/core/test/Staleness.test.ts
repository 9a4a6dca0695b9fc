import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import { ageInDays, describeAge, layer, layerTest, MS_PER_DAY, staleCaveat, Staleness } from "../src/Staleness.js"

const NOW = Date.UTC(2026, 3, 15, 12, 0, 0)
const EXACT_47 = "This memory is 47 days old. Memories are point-in-time observations, not live state — " +
  "claims about code behavior or file:line citations may be outdated. Verify against current code before asserting " +
  "as fact."

describe("describeAge (pure)", () => {
  it("says today with no caveat for anything under 24 hours, including a file from the future", () => {
    assert.deepStrictEqual(describeAge(NOW, NOW), { ageDays: 0, age: "today", caveat: null })
    assert.deepStrictEqual(describeAge(NOW, NOW - MS_PER_DAY + 1), { ageDays: 0, age: "today", caveat: null })
    // clock skew or a touched file: never a negative age
    assert.deepStrictEqual(describeAge(NOW, NOW + 5 * MS_PER_DAY), { ageDays: 0, age: "today", caveat: null })
  })

  it("switches to yesterday at exactly 24 hours and to 'N days ago' with the caveat at 48 hours", () => {
    assert.deepStrictEqual(describeAge(NOW, NOW - MS_PER_DAY), { ageDays: 1, age: "yesterday", caveat: null })
    assert.deepStrictEqual(describeAge(NOW, NOW - 2 * MS_PER_DAY + 1), { ageDays: 1, age: "yesterday", caveat: null })
    const two = describeAge(NOW, NOW - 2 * MS_PER_DAY)
    assert.strictEqual(two.age, "2 days ago")
    assert.strictEqual(two.caveat, staleCaveat(2))
  })

  it("words the caveat exactly as specified", () => {
    assert.strictEqual(describeAge(NOW, NOW - 47 * MS_PER_DAY - 3_600_000).caveat, EXACT_47)
  })

  it("floors whole days and is never negative", () => {
    FastCheck.assert(FastCheck.property(FastCheck.integer({ min: -1e12, max: 1e12 }), (delta) => {
      const age = describeAge(NOW, NOW - delta)
      assert.strictEqual(age.ageDays, Math.max(0, Math.floor(delta / MS_PER_DAY)))
      assert.isAtLeast(age.ageDays, 0)
      assert.strictEqual(age.caveat === null, age.ageDays <= 1)
      assert.strictEqual(ageInDays(NOW, NOW - delta), age.ageDays)
    }))
  })
})

describe("Staleness.layer reads Clock", () => {
  it.effect("ages a memory as TestClock moves, on each call", () =>
    Effect.gen(function*() {
      const staleness = yield* Staleness
      yield* TestClock.setTime(NOW)
      const mtime = NOW - 3 * 3_600_000
      assert.strictEqual((yield* staleness.age(mtime)).age, "today")
      yield* TestClock.adjust("1 day")
      assert.strictEqual((yield* staleness.age(mtime)).age, "yesterday")
      yield* TestClock.adjust("46 days")
      const old = yield* staleness.age(mtime)
      assert.strictEqual(old.age, "47 days ago")
      assert.strictEqual(old.caveat, EXACT_47)
    }).pipe(Effect.provide(layer)))

  it.effect("layerTest pins now regardless of the clock", () =>
    Effect.gen(function*() {
      const staleness = yield* Staleness
      yield* TestClock.setTime(0)
      assert.strictEqual((yield* staleness.age(NOW - 10 * MS_PER_DAY)).age, "10 days ago")
    }).pipe(Effect.provide(layerTest(NOW))))
})
