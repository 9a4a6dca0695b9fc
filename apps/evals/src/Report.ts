/**
 * A run for people: a terminal table (pass rate with its Wilson interval per variant, precision/recall or capture
 * rate where the suite counts them, tokens, cost and latency; the paired comparison with the baseline; the
 * scenarios where variants disagree) and a self-contained HTML report with an SVG chart of the pass rates and
 * their interval bars, the same tables, and every trial's scores and transcript.
 *
 * Where the numbers came from is the first thing both say.
 */
import type { RunResults, RunSummary, TrialResult, VariantSummary } from "./Results.js"
import { summarize } from "./Results.js"
import { formatInterval, formatPValue, formatRate } from "./Stats.js"

// ---------------------------------------------------------------------------------------------------------------
// Shared wording
// ---------------------------------------------------------------------------------------------------------------

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

export const formatTokens = (n: number): string =>
  n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(2)}M`

export const formatCost = (usd: number | null): string =>
  usd === null ? "?" : usd === 0 ? "$0" : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`

/** Every input token a variant sent: uncached, read from the cache and written to it. */
const totalInput = (v: VariantSummary): number =>
  v.usage.inputTokens + v.usage.cacheReadInputTokens + v.usage.cacheCreationInputTokens

export const formatMs = (ms: number): string => ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`

/** One line on where the answers came from. */
export const provenanceLine = (run: RunResults): string => {
  const p = run.provenance
  const who = p.realModel ?
    `real model (${p.models.join(", ") || "?"}) at ${p.endpoint ?? "?"}` :
    p.mode === "offline" ?
    "no model: offline selector (deterministic)" :
    `NOT a real model: ${p.note}`
  return `${p.mode}${p.cassette === undefined ? "" : ` (cassette ${p.cassette})`} · ${who}`
}

const comparisonSentence = (c: RunSummary["comparisons"][number]): string =>
  `${c.variant} vs ${c.baseline}: ${c.pairs} pairs, both pass ${c.bothPassed}, only ${c.variant} ${c.onlyFirstPassed}, ` +
  `only ${c.baseline} ${c.onlySecondPassed}, both fail ${c.bothFailed}; Δ ${c.difference >= 0 ? "+" : "−"}${
    formatRate(Math.abs(c.difference))
  }, p = ${formatPValue(c.pValue)} (exact McNemar)${c.pValue >= 0.05 ? " — not significant" : ""}`

// ---------------------------------------------------------------------------------------------------------------
// Terminal
// ---------------------------------------------------------------------------------------------------------------

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)))
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

const variantColumns = (summary: RunSummary) => {
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
  const rows = summary.variants.map((v) => {
    const row = [
      v.name === run.baseline ? `${v.name} (baseline)` : v.name,
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

// ---------------------------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------------------------

const h = escapeXml

const cellColor = (passed: number, total: number): string => {
  if (total === 0) return "#eee"
  const rate = passed / total
  // red → amber → green
  const hue = Math.round(rate * 120)
  return `hsl(${hue}, 60%, 85%)`
}

const renderTranscript = (output: unknown): string => {
  if (typeof output !== "object" || output === null) return ""
  const o = output as Record<string, unknown>
  const parts: Array<string> = []
  if (Array.isArray(o["selected"])) {
    parts.push(`<p>Selected: <code>${h((o["selected"] as Array<string>).join(", ") || "(nothing)")}</code></p>`)
  }
  if (typeof o["finalText"] === "string") {
    parts.push(`<p><b>Final answer</b></p><pre>${h(o["finalText"] as string)}</pre>`)
  }
  if (Array.isArray(o["toolCalls"])) {
    const calls = (o["toolCalls"] as Array<any>).map((c) =>
      `<li>turn ${h(String(c.turn))}: <code>${h(String(c.name))}</code> <code>${h(JSON.stringify(c.input))}</code>${
        c.isError ? " <b>(error)</b>" : ""
      }</li>`
    )
    parts.push(`<p><b>Tool calls</b></p><ol>${calls.join("") || "<li>none</li>"}</ol>`)
  }
  if (Array.isArray(o["memoryChanges"])) {
    const changes = (o["memoryChanges"] as Array<any>).map((c) =>
      `<li><code>${h(String(c.file))}</code> ${h(String(c.op))}${
        typeof c.after === "string" ? `<pre>${h(c.after)}</pre>` : ""
      }</li>`
    )
    parts.push(`<p><b>Memory changes</b></p><ul>${changes.join("") || "<li>none</li>"}</ul>`)
  }
  if (Array.isArray(o["messages"])) {
    parts.push(
      `<details><summary>Full transcript (${(o["messages"] as Array<unknown>).length} messages)</summary><pre>${
        h(JSON.stringify(o["messages"], null, 2))
      }</pre></details>`
    )
  }
  return parts.join("\n")
}

const renderTrial = (r: TrialResult): string => {
  const status = r.error !== undefined ? "errored" : r.passed ? "pass" : "fail"
  const scores = r.scores.map((s) =>
    `<li class="${s.passed ? "pass" : "fail"}">${s.passed ? "✓" : "✗"} <b>${h(s.id)}</b>${
      s.modelGraded ? " <span class=\"graded\">MODEL-GRADED</span>" : ""
    }${s.required ? "" : " (informational)"}: ${h(s.detail)}</li>`
  ).join("")
  return `<details class="trial ${status}"><summary>${h(r.variant)} · ${h(r.scenario)} #${r.trial} — <b>${status}</b>${
    r.usage === undefined
      ? ""
      : ` · ${
        formatTokens(r.usage.inputTokens + r.usage.cacheReadInputTokens + r.usage.cacheCreationInputTokens)
      } in / ${formatTokens(r.usage.outputTokens)} out`
  } · ${formatMs(r.latencyMs)}</summary>${
    r.error === undefined ? "" : `<p class="fail">${h(r.error)}</p>`
  }<ul>${scores}</ul>${renderTranscript(r.output)}</details>`
}

/** Pure: the whole HTML report, self-contained (inline CSS and SVG, no script, no network). */
export const renderHtml = (run: RunResults): string => {
  const summary = summarize(run)
  const columns = variantColumns(summary)
  const p = run.provenance
  const bannerClass = p.realModel ? "real" : p.mode === "offline" ? "offline" : "fake"
  const banner = p.realModel ?
    `Answers from a real model: ${h(p.models.join(", "))} at ${h(p.endpoint ?? "?")}.` :
    p.mode === "offline" ?
    "No model involved: the offline selector, deterministic." :
    `These numbers did NOT come from a real model: ${h(p.note)}.`
  const variantRows = summary.variants.map((v) =>
    `<tr><td>${h(v.name)}${v.name === run.baseline ? " <i>(baseline)</i>" : ""}${
      v.description === undefined ? "" : `<div class="desc">${h(v.description)}</div>`
    }</td><td>${v.passed}/${v.total}</td><td>${formatRate(v.passRate)}</td><td>${formatInterval(v.interval)}</td>${
      columns.retrieval ?
        `<td>${v.retrieval?.precision.toFixed(2) ?? "—"}</td><td>${v.retrieval?.recall.toFixed(2) ?? "—"}</td><td>${
          v.retrieval?.f1.toFixed(2) ?? "—"
        }</td>` :
        ""
    }${columns.empty ? `<td>${v.emptyWhenNothingRelevant?.toFixed(2) ?? "—"}</td>` : ""}${
      columns.capture ? `<td>${v.captureRate === undefined ? "—" : formatRate(v.captureRate)}</td>` : ""
    }${columns.falseSaves ? `<td>${v.metrics["falseSaves"] ?? 0}</td>` : ""}${
      columns.model ?
        `<td>${
          v.calls === 0 ? "—" : `${formatTokens(totalInput(v))} / ${formatTokens(v.usage.outputTokens)}`
        }</td><td>${v.calls === 0 ? "—" : formatCost(v.costUsd)}</td><td>${formatMs(v.latencyMs.mean)}</td>` :
        ""
    }<td>${v.errored}</td></tr>`
  ).join("\n")
  const comparisonRows = summary.comparisons.map((c) =>
    `<tr><td>${
      h(c.variant)
    }</td><td>${c.pairs}</td><td>${c.bothPassed}</td><td>${c.onlyFirstPassed}</td><td>${c.onlySecondPassed}</td><td>${c.bothFailed}</td><td>${
      c.difference >= 0 ? "+" : "−"
    }${formatRate(Math.abs(c.difference))}</td><td class="${c.pValue < 0.05 ? "sig" : ""}">${formatPValue(c.pValue)}${
      c.pValue < 0.05 ? "" : " (not significant)"
    }</td></tr>`
  ).join("\n")
  const names = summary.variants.map((v) => v.name)
  const scenarioRows = summary.scenarios.map((s) =>
    `<tr><td>${h(s.scenario)}</td>${
      names.map((n) => {
        const x = s.byVariant[n]!
        return `<td style="background:${cellColor(x.passed, x.total)}">${x.passed}/${x.total}</td>`
      }).join("")
    }</tr>`
  ).join("\n")
  const trials = run.results.map(renderTrial).join("\n")
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${h(`memdir eval: ${run.suite} (${run.startedAt})`)}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px; color: #1d1d1f; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.meta { color: #555; }
.banner { padding: .6rem .9rem; border-radius: 6px; margin: 1rem 0; font-weight: 600; }
.banner.real { background: #e3f4e1; border: 1px solid #8bc784; }
.banner.fake { background: #fff1d6; border: 1px solid #e0a93b; }
.banner.offline { background: #e6eefb; border: 1px solid #8aa6d8; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border-bottom: 1px solid #ddd; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
.desc { color: #666; font-size: 12px; max-width: 320px; }
.sig { font-weight: 700; }
details.trial { margin: .2rem 0; } details.trial.fail > summary b { color: #b3261e; } details.trial.pass > summary b { color: #2e7d32; }
details.trial.errored > summary b { color: #8a6d00; }
li.pass { color: #2e7d32; } li.fail, p.fail { color: #b3261e; }
.graded { background: #6a3d9a; color: #fff; font-size: 11px; padding: 0 4px; border-radius: 3px; }
pre { background: #f7f7f7; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
.note { color: #555; font-size: 13px; }
</style>
</head>
<body>
<h1>${h(run.suite)}</h1>
<div class="meta">${h(run.description)}<br>${plural(run.scenarios.length, "scenario")} × ${
    plural(run.trials, "trial")
  } · section <code>${h(run.section)}</code> · ${h(run.startedAt)} → ${h(run.finishedAt)} · mode <b>${h(p.mode)}</b>${
    p.cassette === undefined ? "" : ` · cassette <code>${h(p.cassette)}</code>`
  }</div>
<div class="banner ${bannerClass}">${banner}</div>
${renderChart(run, summary)}
<p class="note">Bars: pass rate. Whiskers: Wilson 95% interval, honest for small samples (3/3 is [44%, 100%], not 100%).</p>
<h2>Variants</h2>
<table>
<tr><th>variant</th><th>pass</th><th>rate</th><th>95% CI</th>${
    columns.retrieval ? "<th>precision</th><th>recall</th><th>F1</th>" : ""
  }${columns.empty ? "<th>empty when nothing relevant</th>" : ""}${columns.capture ? "<th>capture rate</th>" : ""}${
    columns.falseSaves ? "<th>false saves</th>" : ""
  }${columns.model ? "<th>tokens in / out</th><th>cost</th><th>mean latency</th>" : ""}<th>errored</th></tr>
${variantRows}
</table>
${
    summary.comparisons.length === 0 ? "" : `<h2>Paired comparison with ${h(run.baseline)}</h2>
<p class="note">Same scenarios × trials. Only discordant pairs carry evidence; p is McNemar's exact two-sided test.</p>
<table>
<tr><th>variant</th><th>pairs</th><th>both pass</th><th>only this variant</th><th>only ${
      h(run.baseline)
    }</th><th>both fail</th><th>Δ pass rate</th><th>p</th></tr>
${comparisonRows}
</table>`
  }
<h2>Scenarios</h2>
<table>
<tr><th>scenario</th>${names.map((n) => `<th>${h(n)}</th>`).join("")}</tr>
${scenarioRows}
</table>
<h2>Trials</h2>
${trials}
</body>
</html>
`
}
