import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { formatPValue, mcnemarExactPValue, pairedComparison, retrievalScores, wilsonInterval } from "../src/Stats.js"

const close = (actual: number, expected: number, digits = 4) =>
  assert.approximately(actual, expected, 10 ** -digits, `${actual} ≉ ${expected}`)

/** Exact binomial test by brute force over every outcome at least as extreme (reference implementation). */
const bruteForceTwoSided = (b: number, c: number): number => {
  const n = b + c
  if (n === 0) return 1
  const choose = (k: number) => {
    let r = 1
    for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i
    return r
  }
  let p = 0
  for (let i = 0; i <= n; i++) if (Math.min(i, n - i) <= Math.min(b, c)) p += choose(i) / 2 ** n
  return Math.min(1, p)
}

describe("wilsonInterval", () => {
  it("matches published values", () => {
    // Newcombe (1998), and R's prop.test(correct = FALSE)$conf.int / binom::binom.wilson
    const cases: ReadonlyArray<[number, number, number, number]> = [
      [0, 3, 0, 0.5615],
      [3, 3, 0.4385, 1],
      [5, 10, 0.2366, 0.7634],
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 10, 0, 0.2775],
      [1, 29, 0.0061, 0.1718]
    ]
    for (const [k, n, low, high] of cases) {
      const interval = wilsonInterval(k, n)
      close(interval.low, low)
      close(interval.high, high)
    }
  })

  it("is [0, 1] with no trials", () => {
    assert.deepStrictEqual(wilsonInterval(0, 0), { low: 0, high: 1 })
  })

  it("contains the observed rate, stays in [0, 1], and mirrors k ↔ n − k", () => {
    FastCheck.assert(FastCheck.property(
      FastCheck.integer({ min: 1, max: 2000 }).chain((n) =>
        FastCheck.tuple(FastCheck.integer({ min: 0, max: n }), FastCheck.constant(n))
      ),
      ([k, n]) => {
        const interval = wilsonInterval(k, n)
        const mirrored = wilsonInterval(n - k, n)
        assert.isAtLeast(interval.low, 0)
        assert.isAtMost(interval.high, 1)
        assert.isAtMost(interval.low, k / n + 1e-12)
        assert.isAtLeast(interval.high, k / n - 1e-12)
        close(interval.low, 1 - mirrored.high, 9)
        close(interval.high, 1 - mirrored.low, 9)
      }
    ))
  })

  it("narrows as the same rate is seen over more trials", () => {
    FastCheck.assert(FastCheck.property(
      FastCheck.integer({ min: 1, max: 50 }),
      FastCheck.integer({ min: 0, max: 50 }),
      FastCheck.integer({ min: 2, max: 20 }),
      (n0, k0, factor) => {
        const k = Math.min(k0, n0)
        const small = wilsonInterval(k, n0)
        const big = wilsonInterval(k * factor, n0 * factor)
        assert.isBelow(big.high - big.low, small.high - small.low)
      }
    ))
  })
})

describe("mcnemarExactPValue", () => {
  it("shows 3/3 vs 0/3 for what it is: p = 0.25", () => {
    close(mcnemarExactPValue(3, 0), 0.25, 12)
    close(mcnemarExactPValue(0, 3), 0.25, 12)
  })

  it("matches known exact values", () => {
    close(mcnemarExactPValue(0, 0), 1)
    close(mcnemarExactPValue(1, 1), 1)
    close(mcnemarExactPValue(10, 0), 2 / 1024, 12)
    // binom.test(2, 12)$p.value in R
    close(mcnemarExactPValue(2, 10), 0.03857, 5)
    // binom.test(5, 20)$p.value
    close(mcnemarExactPValue(5, 15), 0.04139, 5)
  })

  it("does not underflow on large samples", () => {
    const p = mcnemarExactPValue(600, 600)
    close(p, 1, 9)
    const q = mcnemarExactPValue(400, 800)
    assert.isAbove(q, 0)
    assert.isBelow(q, 1e-20)
  })

  it("equals the brute-force exact test, is symmetric and lies in (0, 1]", () => {
    FastCheck.assert(FastCheck.property(
      FastCheck.integer({ min: 0, max: 40 }),
      FastCheck.integer({ min: 0, max: 40 }),
      (b, c) => {
        const p = mcnemarExactPValue(b, c)
        close(p, bruteForceTwoSided(b, c), 9)
        assert.strictEqual(p, mcnemarExactPValue(c, b))
        assert.isAbove(p, 0)
        assert.isAtMost(p, 1)
        if (b === c) assert.strictEqual(p, 1)
      }
    ))
  })
})

describe("pairedComparison", () => {
  it("pairs by key, counts the discordant pairs and ignores unpaired trials", () => {
    const first = [
      { key: "a#1", passed: true },
      { key: "a#2", passed: true },
      { key: "b#1", passed: true },
      { key: "c#1", passed: false },
      { key: "only-first#1", passed: true }
    ]
    const second = [
      { key: "a#1", passed: false },
      { key: "a#2", passed: true },
      { key: "b#1", passed: false },
      { key: "c#1", passed: true },
      { key: "only-second#1", passed: false }
    ]
    const comparison = pairedComparison(first, second)
    assert.deepStrictEqual(comparison, {
      pairs: 4,
      bothPassed: 1,
      onlyFirstPassed: 2,
      onlySecondPassed: 1,
      bothFailed: 0,
      difference: 0.25,
      pValue: 1
    })
  })

  it("3/3 vs 0/3 on the same scenarios: difference 1, p = 0.25", () => {
    const keys = ["s1#1", "s2#1", "s3#1"]
    const comparison = pairedComparison(
      keys.map((key) => ({ key, passed: true })),
      keys.map((key) => ({ key, passed: false }))
    )
    assert.strictEqual(comparison.difference, 1)
    close(comparison.pValue, 0.25, 12)
    assert.strictEqual(formatPValue(comparison.pValue), "0.25")
  })
})

describe("retrievalScores", () => {
  it("micro-averages and treats 'nothing to get wrong' as perfect", () => {
    assert.deepStrictEqual(retrievalScores({ produced: 0, correct: 0, expected: 0, found: 0 }), {
      precision: 1,
      recall: 1,
      f1: 1
    })
    const s = retrievalScores({ produced: 10, correct: 8, expected: 5, found: 4 })
    close(s.precision, 0.8)
    close(s.recall, 0.8)
    close(s.f1, 0.8)
  })
})
