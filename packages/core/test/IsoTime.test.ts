/**
 * `isoTime` is what `toISOString` writes, at a fraction of its cost: listings (`ls --json`, `memory_list`, the
 * manifest) print one per memory.
 */
import { assert, describe, it } from "@effect/vitest"
import { isoTime } from "../src/internal/isoTime.js"

describe("isoTime", () => {
  it("times are written as toISOString writes them: every millisecond of a day, fractions, and beyond the fast range", () => {
    const day = Date.UTC(2026, 11, 1)
    const times = [
      0,
      1,
      999.999,
      1_700_000_000_123.456,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 0.5,
      Date.UTC(10_000, 0, 1),
      -1,
      -86_400_000.5,
      8.64e15
    ]
    for (let ms = 0; ms < 86_400_000; ms += 997) times.push(day + ms)
    for (const ms of times) assert.strictEqual(isoTime(ms), new Date(ms).toISOString(), String(ms))
    assert.throws(() => isoTime(Number.NaN), RangeError)
  })

  it("still right after more distinct days than it remembers", () => {
    const day = 86_400_000
    for (let i = 0; i < 10_000; i++) {
      const ms = i * 7 * day + (i % 86_400) * 1000 + (i % 1000)
      assert.strictEqual(isoTime(ms), new Date(ms).toISOString(), String(ms))
    }
  })
})
