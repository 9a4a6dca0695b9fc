import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { thousands } from "../src/Output.js"

describe("thousands", () => {
  it("writes what toLocaleString(\"en-US\") writes, for every safe integer", () => {
    FastCheck.assert(FastCheck.property(FastCheck.maxSafeInteger(), FastCheck.integer(), (big, small) => {
      assert.strictEqual(thousands(big), big.toLocaleString("en-US"))
      assert.strictEqual(thousands(small), small.toLocaleString("en-US"))
    }))
    for (const n of [0, 7, 999, 1_000, -1_000, 10_000, 999_999, 1_000_000, -123_456_789, Number.MAX_SAFE_INTEGER]) {
      assert.strictEqual(thousands(n), n.toLocaleString("en-US"))
    }
  })

  it("leaves what is not a safe integer to toLocaleString", () => {
    for (const n of [1.5, 12345.678, 1e21, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.strictEqual(thousands(n), n.toLocaleString("en-US"))
    }
  })
})
