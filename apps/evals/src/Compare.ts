/**
 * Two runs of the same suite side by side (`pnpm evals compare RUN_A RUN_B`, and `run --baseline FILE`): per
 * variant the pass rate before and after with a paired test on the (scenario, trial) pairs both runs have, per
 * scenario what changed. A regression is a significant paired drop (McNemar exact, p < 0.05); on two
 * deterministic runs (offline, replay) every lost pair is also listed, since there chance plays no part.
 */
import { escapeXml as h, plural } from "./Report.js"
import { trialAnchor } from "./ReportHtml.js"
import { fromRealModel, type RunResults, summarize, trialKey } from "./Results.js"
import { formatInterval, formatRate, type Interval, type PairedComparison, pairedComparison, pText } from "./Stats.js"

export const COMPARE_SIGNIFICANCE = 0.05

export interface RateAt {
  readonly passed: number
  readonly total: number
  readonly rate: number
  readonly interval: Interval
}

export interface VariantChange {
  readonly variant: string
  /** Undefined when the variant is not in that run. */
  readonly before?: RateAt | undefined
  readonly after?: RateAt | undefined
  /** After against before on the pairs both runs scored: onlyFirstPassed = gained, onlySecondPassed = lost. */
  readonly paired?: PairedComparison | undefined
  /** Pairs that passed before and fail now (`scenario#trial`). */
  readonly lost: ReadonlyArray<string>
  readonly gained: ReadonlyArray<string>
  readonly verdict:
    | "significant drop"
    | "significant gain"
    | "no significant change"
    | "not comparable"
    | "not in both runs"
}

export interface ScenarioChange {
  readonly scenario: string
  readonly variant: string
  readonly before: { readonly passed: number; readonly total: number }
  readonly after: { readonly passed: number; readonly total: number }
}

export interface RunComparison {
  readonly suite: string
  readonly before: { readonly label: string; readonly startedAt: string; readonly mode: string }
  readonly after: { readonly label: string; readonly startedAt: string; readonly mode: string }
  readonly deterministic: boolean
  readonly variants: ReadonlyArray<VariantChange>
  /** Scenarios whose pass count changed for a variant run in both. */
  readonly scenarios: ReadonlyArray<ScenarioChange>
  /** Said about the pairing: scenarios in one run only, a changed trial count… */
  readonly notes: ReadonlyArray<string>
}

const rateAt = (run: RunResults, variant: string): RateAt | undefined => {
  const v = summarize(run).variants.find((x) => x.name === variant)
  return v === undefined ? undefined : { passed: v.passed, total: v.total, rate: v.passRate, interval: v.interval }
}

const outcomes = (run: RunResults, variant: string) =>
  run.results.filter((r) => r.variant === variant && r.error === undefined).map((r) => ({
    key: trialKey(r),
    passed: r.passed
  }))

/** Pure: what changed from `before` to `after` (two runs of the same suite). */
export const compareRuns = (
  before: RunResults,
  after: RunResults,
  labels: { readonly before: string; readonly after: string } = { before: "A", after: "B" }
): RunComparison => {
  const names = [...new Set([...before.variants.map((v) => v.name), ...after.variants.map((v) => v.name)])]
  const deterministic = [before, after].every((r) => r.provenance.mode === "offline" || r.provenance.mode === "replay")
  const variants = names.map((variant): VariantChange => {
    const b = rateAt(before, variant)
    const a = rateAt(after, variant)
    if (a === undefined || b === undefined) {
      return { variant, before: b, after: a, lost: [], gained: [], verdict: "not in both runs" }
    }
    if (a.total === 0 || b.total === 0) {
      return { variant, before: b, after: a, lost: [], gained: [], verdict: "not comparable" }
    }
    const nowOutcomes = outcomes(after, variant)
    const thenOutcomes = outcomes(before, variant)
    const paired = pairedComparison(nowOutcomes, thenOutcomes)
    const then = new Map(thenOutcomes.map((o) => [o.key, o.passed]))
    const lost = nowOutcomes.filter((o) => !o.passed && then.get(o.key) === true).map((o) => o.key)
    const gained = nowOutcomes.filter((o) => o.passed && then.get(o.key) === false).map((o) => o.key)
    const significant = paired.pairs > 0 && paired.pValue < COMPARE_SIGNIFICANCE
    const verdict = paired.pairs === 0 ?
      "not comparable" :
      significant && paired.difference < 0 ?
      "significant drop" :
      significant && paired.difference > 0 ?
      "significant gain" :
      "no significant change"
    return { variant, before: b, after: a, paired, lost, gained, verdict }
  })
  const sBefore = summarize(before)
  const sAfter = summarize(after)
  const both = names.filter((n) =>
    before.variants.some((v) => v.name === n) && after.variants.some((v) => v.name === n)
  )
  const scenarios = sAfter.scenarios.flatMap((row) => {
    const old = sBefore.scenarios.find((x) => x.scenario === row.scenario)
    if (old === undefined) return []
    return both.flatMap((variant): Array<ScenarioChange> => {
      const x = old.byVariant[variant], y = row.byVariant[variant]
      if (x === undefined || y === undefined || (x.passed === y.passed && x.total === y.total)) return []
      return [{ scenario: row.scenario, variant, before: x, after: y }]
    })
  })
  const notes: Array<string> = []
  if (before.suite !== after.suite) notes.push(`the runs are of different suites: ${before.suite} and ${after.suite}`)
  const idsBefore = new Set(before.scenarios.map((s) => s.id))
  const idsAfter = new Set(after.scenarios.map((s) => s.id))
  const onlyBefore = [...idsBefore].filter((id) => !idsAfter.has(id))
  const onlyAfter = [...idsAfter].filter((id) => !idsBefore.has(id))
  if (onlyBefore.length > 0) notes.push(`only in ${labels.before}: ${onlyBefore.join(", ")} (left out of the pairs)`)
  if (onlyAfter.length > 0) notes.push(`only in ${labels.after}: ${onlyAfter.join(", ")} (left out of the pairs)`)
  if (before.trials !== after.trials) {
    notes.push(`trials per scenario differ (${before.trials} → ${after.trials}): only the trials both ran are paired`)
  }
  if (!deterministic) notes.push("live answers vary between runs: only a significant paired change is evidence")
  const modeOf = (run: RunResults) =>
    fromRealModel(run) || run.provenance.mode === "offline" ?
      run.provenance.mode :
      `${run.provenance.mode}, NOT a real model`
  return {
    suite: after.suite,
    before: { label: labels.before, startedAt: before.startedAt, mode: modeOf(before) },
    after: { label: labels.after, startedAt: after.startedAt, mode: modeOf(after) },
    deterministic,
    variants,
    scenarios,
    notes
  }
}

/** Pure: the variants whose pass rate dropped significantly (what the CI gate fails on). */
export const significantDrops = (comparison: RunComparison): ReadonlyArray<VariantChange> =>
  comparison.variants.filter((v) => v.verdict === "significant drop")

const rateText = (r: RateAt | undefined): string =>
  r === undefined ? "—" : `${r.passed}/${r.total} ${formatRate(r.rate)} ${formatInterval(r.interval)}`

const deltaText = (v: VariantChange): string =>
  v.paired === undefined ?
    "—" :
    `${v.paired.difference >= 0 ? "+" : "−"}${formatRate(Math.abs(v.paired.difference))}`

export { pText }

const pairedText = (v: VariantChange): string =>
  v.paired === undefined ?
    "—" :
    `${v.paired.pairs} pairs, lost ${v.lost.length}, gained ${v.gained.length}, ${pText(v.paired.pValue)}`

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

/** Pure: the comparison for the terminal. */
export const renderComparisonTerminal = (c: RunComparison, options: { readonly maxScenarios?: number } = {}) => {
  const out = [
    `${c.suite}: ${c.before.label} (${c.before.mode}, ${c.before.startedAt}) → ${c.after.label} (${c.after.mode}, ${c.after.startedAt})`,
    "",
    table([
      ["variant", c.before.label, c.after.label, "Δ", "paired (exact McNemar)", "verdict"],
      ...c.variants.map((v) => [
        v.variant,
        rateText(v.before),
        rateText(v.after),
        deltaText(v),
        pairedText(v),
        v.verdict === "significant drop" ? "SIGNIFICANT DROP" : v.verdict
      ])
    ])
  ]
  if (c.scenarios.length > 0) {
    const max = options.maxScenarios ?? 20
    out.push("", `Scenarios that changed (${c.scenarios.length}):`)
    out.push(
      table([
        ["  scenario", "variant", c.before.label, c.after.label],
        ...c.scenarios.slice(0, max).map((s) => [
          `  ${s.scenario}`,
          s.variant,
          `${s.before.passed}/${s.before.total}`,
          `${s.after.passed}/${s.after.total}`
        ])
      ])
    )
    if (c.scenarios.length > max) out.push(`  … and ${c.scenarios.length - max} more (see the HTML comparison)`)
  } else {
    out.push("", "No scenario changed its pass count.")
  }
  for (const note of c.notes) out.push(`note: ${note}`)
  return out.join("\n")
}

/**
 * Pure: the comparison as one self-contained HTML page. `reports` are the links (relative to the page) of the
 * two runs' report.html, when they have one: each changed scenario links to its trials there.
 */
export const renderComparisonHtml = (
  c: RunComparison,
  reports: { readonly before?: string | undefined; readonly after?: string | undefined } = {}
): string => {
  const link = (report: string | undefined, variant: string, scenario: string, text: string) =>
    report === undefined ?
      h(text) :
      `<a href="${h(`${report}#${trialAnchor({ variant, scenario, trial: 1 })}`)}">${h(text)}</a>`
  const variantRows = c.variants.map((v) =>
    `<tr class="${v.verdict === "significant drop" ? "drop" : v.verdict === "significant gain" ? "gain" : ""}"><td>${
      h(v.variant)
    }</td><td>${h(rateText(v.before))}</td><td>${h(rateText(v.after))}</td><td>${h(deltaText(v))}</td><td>${
      h(pairedText(v))
    }</td><td><b>${h(v.verdict)}</b></td></tr>`
  ).join("\n")
  const scenarioRows = c.scenarios.map((s) =>
    `<tr class="${
      s.after.passed / Math.max(1, s.after.total) < s.before.passed / Math.max(1, s.before.total) ? "drop" : "gain"
    }"><td>${h(s.scenario)}</td><td>${h(s.variant)}</td><td>${
      link(reports.before, s.variant, s.scenario, `${s.before.passed}/${s.before.total}`)
    }</td><td>${link(reports.after, s.variant, s.scenario, `${s.after.passed}/${s.after.total}`)}</td></tr>`
  ).join("\n")
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${h(`memdir eval comparison: ${c.suite}`)}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px; color: #1d1d1f; padding: 0 1rem; }
table { border-collapse: collapse; margin: .5rem 0; } th, td { border-bottom: 1px solid #ddd; padding: .3rem .6rem; text-align: left; }
th { background: #f6f6f6; } tr.drop td { background: #fbe3e1; } tr.gain td { background: #e3f4e1; }
.note { color: #555; font-size: 13px; }
</style>
</head>
<body>
<h1>${h(c.suite)}: ${h(c.before.label)} → ${h(c.after.label)}</h1>
<p class="note">${h(c.before.label)}: ${h(c.before.mode)}, ${h(c.before.startedAt)} · ${h(c.after.label)}: ${
    h(c.after.mode)
  }, ${h(c.after.startedAt)}. Paired on the (scenario, trial) pairs both runs scored; p is McNemar's exact test; a
verdict is significant at p &lt; ${COMPARE_SIGNIFICANCE}.</p>
<h2>Variants</h2>
<table>
<tr><th>variant</th><th>${h(c.before.label)}</th><th>${
    h(c.after.label)
  }</th><th>Δ</th><th>paired</th><th>verdict</th></tr>
${variantRows}
</table>
<h2>Scenarios that changed (${c.scenarios.length})</h2>
${
    c.scenarios.length === 0 ?
      "<p>No scenario changed its pass count.</p>" :
      `<table>\n<tr><th>scenario</th><th>variant</th><th>${h(c.before.label)}</th><th>${
        h(c.after.label)
      }</th></tr>\n${scenarioRows}\n</table>`
  }
${c.notes.length === 0 ? "" : `<ul class="note">${c.notes.map((n) => `<li>${h(n)}</li>`).join("")}</ul>`}
<p class="note">${plural(c.variants.length, "variant")} compared.</p>
</body>
</html>
`
}
