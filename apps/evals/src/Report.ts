/**
 * A run for people: a terminal table (pass rate with its Wilson interval per variant, precision/recall or capture
 * rate where the suite counts them, tokens, cost and latency; the paired comparison with the baseline; the
 * scenarios where variants disagree) and a self-contained HTML report with an SVG chart of the pass rates and
 * their interval bars, the same tables, and every trial's scores and transcript.
 *
 * Where the numbers came from is the first thing both say.
 */
import type { RunResults, RunSummary, VariantSummary } from "./Results.js"
import { answeredTrials, fromRealModel, summarize } from "./Results.js"
import { formatInterval, formatRate, pText, trialsToDetect } from "./Stats.js"

// ---------------------------------------------------------------------------------------------------------------
// Shared wording
// ---------------------------------------------------------------------------------------------------------------

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

export const formatTokens = (n: number): string =>
  n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(2)}M`

export const formatCost = (usd: number | null): string =>
  usd === null ? "unpriced" : usd === 0 ? "$0" : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`

/** Every input token a variant sent: uncached, read from the cache and written to it. */
export const totalInput = (v: VariantSummary): number =>
  v.usage.inputTokens + v.usage.cacheReadInputTokens + v.usage.cacheCreationInputTokens

export const formatMs = (ms: number): string => ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`

/** How many trials got an answer from a model, and how many errored: what a model run's provenance rests on. */
export const answeredText = (run: RunResults): string => {
  const errored = run.results.filter((r) => r.error !== undefined).length
  return `${answeredTrials(run)} of ${plural(run.results.length, "trial")} got an answer${
    errored === 0 ? "" : `, ${errored} errored`
  }`
}

/** One line on where the answers came from. */
export const provenanceLine = (run: RunResults): string => {
  const p = run.provenance
  const who = p.mode === "offline" ?
    "no model: offline selector (deterministic)" :
    fromRealModel(run) ?
    `real model (${p.models.join(", ") || "?"}) at ${p.endpoint ?? "?"} · ${answeredText(run)}` :
    p.realModel ?
    `NO answer from a model (${answeredText(run)}): not evidence about any model` :
    `NOT a real model: ${p.note} · ${answeredText(run)}`
  return `${p.mode}${p.cassette === undefined ? "" : ` (cassette ${p.cassette})`} · ${who}`
}

export const comparisonSentence = (c: RunSummary["comparisons"][number]): string =>
  `${c.variant} vs ${c.baseline}: ${c.pairs} pairs, both pass ${c.bothPassed}, only ${c.variant} ${c.onlyFirstPassed}, ` +
  `only ${c.baseline} ${c.onlySecondPassed}, both fail ${c.bothFailed}; Δ ${c.difference >= 0 ? "+" : "−"}${
    formatRate(Math.abs(c.difference))
  }, ${pText(c.pValue)} (exact McNemar)${c.pValue >= 0.05 ? " — not significant" : ""}`

// ---------------------------------------------------------------------------------------------------------------
// Terminal
// ---------------------------------------------------------------------------------------------------------------

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

export const variantColumns = (summary: RunSummary) => {
  const any = (f: (v: VariantSummary) => unknown) => summary.variants.some((v) => f(v) !== undefined)
  return {
    retrieval: any((v) => v.retrieval),
    empty: any((v) => v.emptyWhenNothingRelevant),
    capture: any((v) => v.captureRate),
    falseSaves: summary.variants.some((v) => "falseSaves" in v.metrics),
    model: summary.variants.some((v) => v.calls > 0)
  }
}

/** Pure: the terminal report. */
export const renderTerminal = (run: RunResults, options: { readonly maxDisagreements?: number } = {}): string => {
  const summary = summarize(run)
  const columns = variantColumns(summary)
  const header = [
    `${run.suite} — ${run.description}`,
    `${plural(run.scenarios.length, "scenario")} × ${plural(run.trials, "trial")} · section ${run.section} · ${
      run.startedAt.replace("T", " ").replace(/\.\d+Z$/, "Z")
    }`,
    provenanceLine(run)
  ]
  const head = ["variant", "pass", "rate", "95% CI"]
  if (columns.retrieval) head.push("precision", "recall", "F1")
  if (columns.empty) head.push("empty-if-none")
  if (columns.capture) head.push("capture")
  if (columns.falseSaves) head.push("false saves")
  if (columns.model) head.push("tokens in/out", "cost", "latency")
  head.push("errored")
  const references = new Set(run.variants.filter((v) => v.reference === true).map((v) => v.name))
  const rows = summary.variants.map((v) => {
    const row = [
      v.name === run.baseline ? `${v.name} (baseline)` : references.has(v.name) ? `${v.name} (reference)` : v.name,
      `${v.passed}/${v.total}`,
      formatRate(v.passRate),
      formatInterval(v.interval)
    ]
    if (columns.retrieval) {
      row.push(
        v.retrieval?.precision.toFixed(2) ?? "—",
        v.retrieval?.recall.toFixed(2) ?? "—",
        v.retrieval?.f1.toFixed(2) ?? "—"
      )
    }
    if (columns.empty) row.push(v.emptyWhenNothingRelevant?.toFixed(2) ?? "—")
    if (columns.capture) row.push(v.captureRate === undefined ? "—" : formatRate(v.captureRate))
    if (columns.falseSaves) row.push(String(v.metrics["falseSaves"] ?? 0))
    if (columns.model) {
      row.push(
        v.calls === 0 ? "—" : `${formatTokens(totalInput(v))}/${formatTokens(v.usage.outputTokens)}`,
        v.calls === 0 ? "—" : formatCost(v.costUsd),
        `${formatMs(v.latencyMs.mean)} avg`
      )
    }
    row.push(String(v.errored))
    return row
  })
  const out = [...header, "", table([head, ...rows])]
  if (summary.comparisons.length > 0) {
    out.push("", "Paired with the baseline on the same scenarios × trials:")
    for (const c of summary.comparisons) out.push(`  ${comparisonSentence(c)}`)
  }
  const disagreements = summary.scenarios.filter((s) => {
    const rates = Object.values(s.byVariant).filter((x) => x.total > 0).map((x) => x.passed / x.total)
    return rates.length > 1 && Math.max(...rates) !== Math.min(...rates)
  })
  if (disagreements.length > 0 && summary.variants.length > 1) {
    const max = options.maxDisagreements ?? 15
    out.push("", `Scenarios where the variants disagree (${disagreements.length}):`)
    const names = summary.variants.map((v) => v.name)
    out.push(
      table([
        ["  scenario", ...names],
        ...disagreements.slice(0, max).map((s) => [
          `  ${s.scenario}`,
          ...names.map((n) => `${s.byVariant[n]!.passed}/${s.byVariant[n]!.total}`)
        ])
      ])
    )
    if (disagreements.length > max) out.push(`  … and ${disagreements.length - max} more (see the HTML report)`)
  }
  const unpriced = [
    ...new Set(run.results.filter((r) => r.costUsd === null).flatMap((r) => (r.model ?? "?").split(", ")))
  ]
  if (unpriced.length > 0) {
    out.push(
      "",
      `cost: no built-in price for ${unpriced.join(", ")}; give one with --price IN,OUT (USD per million tokens)`
    )
  }
  if (summary.errored > 0) {
    const first = run.results.find((r) => r.error !== undefined)!
    out.push("", `${plural(summary.errored, "trial")} errored (not counted); first: ${first.error}`)
  }
  return out.join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// SVG chart
// ---------------------------------------------------------------------------------------------------------------

export const escapeXml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(
    /'/g,
    "&#39;"
  )

/**
 * Pure: horizontal bars of the pass rate per variant with Wilson 95% whiskers, 0–100 % axis. Self-contained SVG
 * (valid XML: it is also written as its own `chart.svg`).
 */
export const renderChart = (run: RunResults, summary: RunSummary = summarize(run)): string => {
  const labelWidth = 230
  const plotWidth = 460
  const textWidth = 170
  const rowHeight = 38
  const top = 34
  const width = labelWidth + plotWidth + textWidth
  const height = top + summary.variants.length * rowHeight + 36
  const x = (rate: number) => labelWidth + rate * plotWidth
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `role="img" aria-label="${escapeXml(`Pass rate per variant of suite ${run.suite}, with 95% Wilson intervals`)}" ` +
    `font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="13">`,
    `<title>${escapeXml(`${run.suite}: pass rate per variant (bars) with 95% Wilson intervals (whiskers)`)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${labelWidth}" y="18" fill="#333" font-weight="600">Pass rate (95% Wilson interval)</text>`
  ]
  for (let tick = 0; tick <= 100; tick += 20) {
    const tx = x(tick / 100)
    parts.push(
      `<line x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${height - 28}" stroke="#e3e3e3" stroke-width="1"/>`,
      `<text x="${tx}" y="${height - 12}" text-anchor="middle" fill="#666">${tick}%</text>`
    )
  }
  summary.variants.forEach((v, i) => {
    const y = top + i * rowHeight
    const mid = y + rowHeight / 2
    const baseline = v.name === run.baseline
    const fill = baseline ? "#4a6fa5" : "#7fa36b"
    parts.push(
      `<text x="${labelWidth - 10}" y="${mid + 4}" text-anchor="end" fill="#222"${
        baseline ? " font-weight=\"600\"" : ""
      }>` +
        `${escapeXml(v.name.length > 30 ? v.name.slice(0, 29) + "…" : v.name)}</text>`,
      `<rect x="${x(0)}" y="${y + 8}" width="${(v.passRate * plotWidth).toFixed(1)}" height="${rowHeight - 16}" ` +
        `fill="${fill}" fill-opacity="0.85"><title>${
          escapeXml(`${v.name}: ${v.passed}/${v.total} passed`)
        }</title></rect>`,
      `<line x1="${x(v.interval.low).toFixed(1)}" y1="${mid}" x2="${x(v.interval.high).toFixed(1)}" y2="${mid}" ` +
        `stroke="#111" stroke-width="2"/>`,
      `<line x1="${x(v.interval.low).toFixed(1)}" y1="${mid - 7}" x2="${x(v.interval.low).toFixed(1)}" y2="${
        mid + 7
      }" stroke="#111" stroke-width="2"/>`,
      `<line x1="${x(v.interval.high).toFixed(1)}" y1="${mid - 7}" x2="${x(v.interval.high).toFixed(1)}" y2="${
        mid + 7
      }" stroke="#111" stroke-width="2"/>`,
      `<circle cx="${x(v.passRate).toFixed(1)}" cy="${mid}" r="3.5" fill="#111"/>`,
      `<text x="${labelWidth + plotWidth + 12}" y="${mid + 4}" fill="#222">` +
        `${escapeXml(`${formatRate(v.passRate)} ${formatInterval(v.interval)}  n=${v.total}`)}</text>`
    )
  })
  parts.push("</svg>")
  return parts.join("\n")
}

/** Pure: how many trials would detect a difference of `difference` at 80% power, for the terminal. */
export const renderPlan = (run: RunResults, difference: number, assumedRate?: number | undefined): string => {
  const summary = summarize(run)
  const base = summary.variants.find((v) => v.name === run.baseline) ?? summary.variants[0]
  const rate = assumedRate ?? base?.passRate ?? 0.5
  const plan = trialsToDetect(rate, difference)
  const scenarios = Math.max(1, run.scenarios.length)
  const source = assumedRate === undefined
    ? `${base?.name ?? "?"}'s observed ${formatRate(rate)}`
    : `an assumed ${formatRate(rate)}`
  if (!Number.isFinite(plan.trialsPerVariant)) return `planning: a difference of 0 cannot be detected`
  const perScenario = Math.ceil(plan.trialsPerVariant / scenarios)
  const scored = summary.variants.map((v) => v.total)
  const have = scored.length === 0 ? 0 : Math.min(...scored)
  return `planning: to detect ${formatRate(rate)} → ${formatRate(plan.otherRate)} (a ${formatRate(plan.difference)} ` +
    `difference from ${source}) at 80% power, two-sided α = 0.05, each variant needs ≈ ${plan.trialsPerVariant} scored ` +
    `trials: --trials ${perScenario} over ${plural(scenarios, "scenario")} (this run has ${have} per variant${
      have >= plan.trialsPerVariant ? ", enough" : ""
    }). Paired on the same scenarios, fewer usually suffice.`
}
