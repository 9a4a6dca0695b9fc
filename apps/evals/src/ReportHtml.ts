/**
 * The HTML report of a run: one self-contained file (inline CSS, SVG and a small script, no network) a prompt
 * engineer drills into. Where the answers came from comes first; then the pass rates with their intervals, the
 * paired comparisons, each variant's prompt as a diff against the default, the pass/fail grid (every cell links
 * to its trials) and every trial under its scenario: the scenario's inputs and expectations, what the variant
 * did, and each scorer's verdict with its reason. Filters: failures only, discordant pairs between two chosen
 * variants, a scenario tag.
 */
import {
  answeredText,
  comparisonSentence,
  escapeXml as h,
  formatCost,
  formatMs,
  formatTokens,
  plural,
  renderChart,
  totalInput,
  variantColumns
} from "./Report.js"
import type { RunResults, ScenarioInputs, TrialResult, VariantPrompt } from "./Results.js"
import { fromRealModel, summarize } from "./Results.js"
import { formatInterval, formatPValue, formatRate } from "./Stats.js"
import { diffLines, hasChanges } from "./TextDiff.js"

/** The anchor of a trial (`#trial--offline--pool-size--1`): grid cells and other reports link to it. */
export const trialAnchor = (r: Pick<TrialResult, "variant" | "scenario" | "trial">): string =>
  `trial--${r.variant}--${r.scenario}--${r.trial}`

export const scenarioAnchor = (scenario: string): string => `scenario--${scenario}`

const cellColor = (passed: number, total: number): string => {
  if (total === 0) return "#eee"
  // red → amber → green
  return `hsl(${Math.round((passed / total) * 120)}, 60%, 85%)`
}

const statusOf = (r: TrialResult): "errored" | "pass" | "fail" =>
  r.error !== undefined ? "errored" : r.passed ? "pass" : "fail"

const codeList = (items: ReadonlyArray<string>): string =>
  items.length === 0 ? "<i>none</i>" : items.map((x) => `<code>${h(x)}</code>`).join(", ")

// ---------------------------------------------------------------------------------------------------------------
// Scenario inputs
// ---------------------------------------------------------------------------------------------------------------

const renderInputs = (inputs: ScenarioInputs | undefined): string => {
  if (inputs === undefined) return `<p class="note">This run predates stored scenario inputs.</p>`
  const rows: Array<string> = []
  const row = (label: string, value: string) => rows.push(`<tr><th>${h(label)}</th><td>${value}</td></tr>`)
  if (inputs.description !== undefined) row("scenario", h(inputs.description))
  if (inputs.query !== undefined) row(inputs.relevant !== undefined ? "query" : "task", `<q>${h(inputs.query)}</q>`)
  if (inputs.conversation !== undefined && inputs.conversation.length > 0) {
    row(
      "conversation",
      inputs.conversation.map((m) => `<div class="msg ${h(m.role)}"><b>${h(m.role)}</b>: ${h(m.content)}</div>`).join(
        ""
      )
    )
  }
  if (inputs.recentTools !== undefined) row("recent tools", codeList(inputs.recentTools))
  if (inputs.relevant !== undefined) {
    row(
      "expected",
      inputs.relevant.length === 0 && (inputs.acceptable ?? []).length === 0 ?
        "<b>nothing</b> (no memory is relevant)" :
        `relevant: ${codeList(inputs.relevant)}${
          (inputs.acceptable ?? []).length === 0 ? "" : `<br>acceptable: ${codeList(inputs.acceptable ?? [])}`
        }`
    )
  }
  if (inputs.expected !== undefined) {
    row("expected", `<ul>${inputs.expected.map((e) => `<li>${h(e)}</li>`).join("")}</ul>`)
  }
  if (inputs.memories !== undefined && inputs.memories.length > 0) {
    row(
      "memory fixture",
      `<ul>${
        inputs.memories.map((m) =>
          `<li><code>${h(m.path)}</code> (${m.ageDays} day${m.ageDays === 1 ? "" : "s"} old)${
            m.description === "" ? "" : `: ${h(m.description)}`
          }</li>`
        ).join("")
      }</ul>`
    )
  }
  if (inputs.recalled !== undefined) row("recalled", codeList(inputs.recalled))
  if (inputs.projectFiles !== undefined && inputs.projectFiles.length > 0) row("project", codeList(inputs.projectFiles))
  if (inputs.tags.length > 0) row("tags", inputs.tags.map((t) => `<span class="tag">${h(t)}</span>`).join(" "))
  if (inputs.note !== undefined) row("note", h(inputs.note))
  return `<table class="inputs">${rows.join("")}</table>`
}

// ---------------------------------------------------------------------------------------------------------------
// What a trial did
// ---------------------------------------------------------------------------------------------------------------

/** A selection against its labels: each chosen memory marked relevant, acceptable or irrelevant; the missed ones. */
const renderSelection = (selected: ReadonlyArray<string>, inputs: ScenarioInputs | undefined): string => {
  if (inputs?.relevant === undefined) {
    return `<p><b>Chose</b>: ${selected.length === 0 ? "<i>nothing</i>" : codeList(selected)}</p>`
  }
  const relevant = inputs.relevant
  const acceptable = inputs.acceptable ?? []
  const chosen = selected.map((p) => {
    const verdict = relevant.includes(p) ? "relevant" : acceptable.includes(p) ? "acceptable" : "irrelevant"
    return `<li class="${verdict}"><code>${h(p)}</code> — ${verdict}</li>`
  })
  const missed = relevant.filter((p) => !selected.includes(p))
  return `<p><b>Chose</b>${selected.length === 0 ? ": <i>nothing</i>" : ""}</p>${
    chosen.length === 0 ? "" : `<ul class="selection">${chosen.join("")}</ul>`
  }${missed.length === 0 ? "" : `<p class="fail"><b>Missed</b>: ${codeList(missed)}</p>`}`
}

/**
 * A selector trial's explanation (SelectorHarness.trialExplanation, or Bm25Baseline.explainBm25 naming its
 * `selector`): why each candidate was kept or cut.
 */
const renderExplanation = (explain: {
  readonly selector?: string
  readonly summary?: string
  readonly queryTerms?: ReadonlyArray<string>
  readonly candidates?: ReadonlyArray<
    { path: string; score: number; verdict: string; reason: string; matched: ReadonlyArray<string> }
  >
  readonly more?: number
  readonly unmatched?: number
}): string => {
  const rows = (explain.candidates ?? []).map((c) =>
    `<tr class="${c.verdict === "kept" ? "pass" : ""}"><td><code>${h(c.path)}</code></td><td>${
      h(c.score.toFixed(2))
    }</td><td>${h(c.reason)}</td><td>${h(c.matched.join(", "))}</td></tr>`
  )
  const rest = [
    ...(explain.more !== undefined && explain.more > 0 ? [`${explain.more} more with evidence`] : []),
    ...(explain.unmatched !== undefined && explain.unmatched > 0 ? [`${explain.unmatched} without a shared term`] : [])
  ]
  return `<details><summary>Why (${h(explain.selector ?? "offline selector")}): ${
    h(explain.summary ?? "")
  }</summary><p>request terms: ${h((explain.queryTerms ?? []).join(", "))}</p>${
    rows.length === 0 ?
      "" :
      `<table><tr><th>memory</th><th>score</th><th>why</th><th>matched terms (fields)</th></tr>${rows.join("")}</table>`
  }${rest.length === 0 ? "" : `<p>${h(rest.join("; "))}</p>`}</details>`
}

const renderOutput = (output: unknown, inputs: ScenarioInputs | undefined): string => {
  if (typeof output !== "object" || output === null) return ""
  const o = output as Record<string, unknown>
  const parts: Array<string> = []
  if (Array.isArray(o["selected"])) parts.push(renderSelection(o["selected"] as Array<string>, inputs))
  if (typeof o["explain"] === "object" && o["explain"] !== null) parts.push(renderExplanation(o["explain"] as any))
  if (Array.isArray(o["toolCalls"])) {
    const calls = (o["toolCalls"] as Array<any>).map((c) =>
      `<li>turn ${h(String(c.turn))}: <code>${h(String(c.name))}</code> <code>${h(JSON.stringify(c.input))}</code>${
        c.isError ? " <b>(error)</b>" : ""
      }</li>`
    )
    parts.push(`<p><b>Tool calls</b></p>${calls.length === 0 ? "<p>none</p>" : `<ol>${calls.join("")}</ol>`}`)
  }
  if (typeof o["finalText"] === "string") {
    parts.push(`<p><b>Final answer</b></p><pre>${h(o["finalText"] as string)}</pre>`)
  }
  if (Array.isArray(o["memoryChanges"])) {
    const changes = (o["memoryChanges"] as Array<any>).map((c) =>
      `<li><code>${h(String(c.file))}</code> ${h(String(c.op))}${
        typeof c.after === "string" ? `<pre>${h(c.after)}</pre>` : ""
      }</li>`
    )
    parts.push(`<p><b>Memory changes</b></p><ul>${changes.join("") || "<li>none</li>"}</ul>`)
  }
  const known = new Set(["selected", "explain", "toolCalls", "finalText", "memoryChanges", "messages"])
  const rest = Object.fromEntries(Object.entries(o).filter(([k]) => !known.has(k)))
  if (Object.keys(rest).length > 0) {
    parts.push(`<details><summary>Other output</summary><pre>${h(JSON.stringify(rest, null, 2))}</pre></details>`)
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

const renderTrial = (r: TrialResult, inputs: ScenarioInputs | undefined): string => {
  const status = statusOf(r)
  const scores = r.scores.map((s) =>
    `<li class="${s.passed ? "pass" : "fail"}">${s.passed ? "✓" : "✗"} <b>${h(s.id)}</b>${
      s.modelGraded ? " <span class=\"graded\">MODEL-GRADED</span>" : ""
    }${s.required ? "" : " (informational)"}: ${h(s.detail)}</li>`
  ).join("")
  const usage = r.usage === undefined ?
    "" :
    ` · ${formatTokens(r.usage.inputTokens + r.usage.cacheReadInputTokens + r.usage.cacheCreationInputTokens)} in / ${
      formatTokens(r.usage.outputTokens)
    } out · ${formatCost(r.costUsd ?? null)}`
  return `<details class="trial ${status}" id="${h(trialAnchor(r))}" data-variant="${h(r.variant)}" data-key="${
    h(`${r.scenario}#${r.trial}`)
  }" data-status="${status}"><summary><b>${status}</b> · ${h(r.variant)} · trial ${r.trial}${usage} · ${
    formatMs(r.latencyMs)
  }</summary><div class="trial-body">${
    r.error === undefined ? "" : `<p class="fail">${h(r.error)}</p>`
  }<p><b>Scorers</b></p><ul class="scores">${scores || "<li>none</li>"}</ul>${
    renderOutput(r.output, inputs)
  }</div></details>`
}

// ---------------------------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------------------------

const renderPrompt = (name: string, prompt: VariantPrompt | undefined): string => {
  if (prompt === undefined) return `<p class="note">${h(name)}: this run predates stored prompt texts.</p>`
  const diff = diffLines(prompt.defaultText, prompt.text)
  const body = hasChanges(diff) ?
    `<pre class="diff">${
      diff.map((line) =>
        `<span class="${line.op}">${line.op === "added" ? "+ " : line.op === "removed" ? "− " : "  "}${
          h(line.text)
        }</span>`
      ).join("")
    }</pre>` :
    `<p class="note">Identical to the default (${h(prompt.defaultName)}).</p>`
  return `<details class="prompt" id="${h(`prompt--${name}`)}"${hasChanges(diff) ? " open" : ""}><summary><b>${
    h(name)
  }</b>: ${h(prompt.of)}, ${
    hasChanges(diff) ?
      `${diff.filter((l) => l.op === "added").length} line(s) added, ${
        diff.filter((l) => l.op === "removed").length
      } removed against the default (${h(prompt.defaultName)})` :
      "the default"
  }</summary>${body}<details><summary>Full text</summary><pre>${h(prompt.text)}</pre></details></details>`
}

// ---------------------------------------------------------------------------------------------------------------
// The page
// ---------------------------------------------------------------------------------------------------------------

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1150px; color: #1d1d1f; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; } h3 { font-size: 1rem; margin: 0; }
.meta { color: #555; }
.banner { padding: .6rem .9rem; border-radius: 6px; margin: 1rem 0; font-weight: 600; }
.banner.real { background: #e3f4e1; border: 1px solid #8bc784; }
.banner.fake { background: #fff1d6; border: 1px solid #e0a93b; }
.banner.offline { background: #e6eefb; border: 1px solid #8aa6d8; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border-bottom: 1px solid #ddd; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
table.grid td a { display: block; color: inherit; text-decoration: none; } table.grid td a:hover { text-decoration: underline; }
table.inputs th { width: 9rem; background: none; color: #555; font-weight: 600; }
.desc { color: #666; font-size: 12px; max-width: 320px; }
.sig { font-weight: 700; }
section.scenario { border: 1px solid #ddd; border-radius: 6px; padding: .6rem .8rem; margin: .8rem 0; }
section.scenario:target, details.trial:target { outline: 3px solid #4a6fa5; }
details.trial { margin: .25rem 0; border-left: 4px solid #ccc; padding-left: .5rem; }
details.trial.fail { border-color: #b3261e; } details.trial.pass { border-color: #2e7d32; } details.trial.errored { border-color: #8a6d00; }
details.trial.fail > summary b { color: #b3261e; } details.trial.pass > summary b { color: #2e7d32; }
details.trial.errored > summary b { color: #8a6d00; }
li.pass, li.relevant { color: #2e7d32; } li.fail, p.fail, li.irrelevant { color: #b3261e; } li.acceptable { color: #8a6d00; }
.graded { background: #6a3d9a; color: #fff; font-size: 11px; padding: 0 4px; border-radius: 3px; }
.tag { background: #eef; border: 1px solid #ccd; border-radius: 3px; padding: 0 4px; font-size: 12px; }
pre { background: #f7f7f7; padding: .5rem; overflow-x: auto; white-space: pre-wrap; }
pre.diff span { display: block; min-height: 1.2em; } pre.diff .added { background: #e3f4e1; } pre.diff .removed { background: #fbe3e1; text-decoration: line-through; }
.msg { margin: .1rem 0; }
.note { color: #555; font-size: 13px; }
.filters { position: sticky; top: 0; background: #fff; padding: .5rem 0; border-bottom: 1px solid #ddd; z-index: 1; }
.filters label { margin-right: 1rem; }
.hidden { display: none; }
#focus-bar { display: none; background: #e6eefb; border: 1px solid #8aa6d8; border-radius: 6px; padding: .4rem .8rem; margin: .5rem 0; }
body.focus #focus-bar { display: block; } body.focus .report-part, body.focus section.scenario:not(.focused) { display: none; }
body.focus section.scenario.focused { display: block; }
`

/** Filters and deep links; the page reads fully without it (every trial is in the document). */
const SCRIPT = `
(function () {
  var q = function (s) { return Array.prototype.slice.call(document.querySelectorAll(s)); };
  var el = function (id) { return document.getElementById(id); };
  function outcomes(variant) {
    var m = {};
    q('details.trial[data-variant="' + CSS.escape(variant) + '"]').forEach(function (t) { m[t.dataset.key] = t.dataset.status; });
    return m;
  }
  function apply() {
    var failures = el("f-failures").checked, discordant = el("f-discordant").checked;
    var a = el("f-a").value, b = el("f-b").value, tag = el("f-tag").value;
    var oa = outcomes(a), ob = outcomes(b), shown = 0;
    q("section.scenario").forEach(function (s) {
      var tags = (s.dataset.tags || "").split(" ");
      var any = false;
      s.querySelectorAll("details.trial").forEach(function (t) {
        var ok = true;
        if (failures && t.dataset.status === "pass") ok = false;
        if (discordant) {
          var v = t.dataset.variant, k = t.dataset.key;
          var differs = oa[k] !== undefined && ob[k] !== undefined && (oa[k] === "pass") !== (ob[k] === "pass");
          if (!differs || (v !== a && v !== b)) ok = false;
        }
        t.classList.toggle("hidden", !ok);
        if (ok) { any = true; shown++; }
      });
      s.classList.toggle("hidden", !any || (tag !== "" && tags.indexOf(tag) < 0));
    });
    el("f-count").textContent = shown + " trial(s) shown";
  }
  // A link to a trial or a scenario (a grid cell, another report) opens it in focus: that scenario alone, at the
  // top, with its inputs and every variant's trial; "show the whole report" leaves it.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var t = id && el(id);
    var scenario = t && (t.matches("section.scenario") ? t : t.closest("section.scenario"));
    q("section.scenario.focused").forEach(function (s) { s.classList.remove("focused"); });
    document.body.classList.toggle("focus", !!scenario);
    if (!scenario) { if (t) t.scrollIntoView({ block: "start" }); return; }
    scenario.classList.add("focused");
    if (t.tagName === "DETAILS") t.open = true;
    el("focus-what").textContent = t === scenario ? "scenario " + scenario.id.replace(/^scenario--/, "") :
      t.dataset.variant + " · " + t.dataset.key;
    window.scrollTo(0, 0);
  }
  ["f-failures", "f-discordant", "f-a", "f-b", "f-tag"].forEach(function (f) { el(f).addEventListener("change", apply); });
  window.addEventListener("hashchange", openTarget);
  apply();
  openTarget();
})();
`

/** Pure: the whole HTML report, self-contained. */
export const renderHtml = (run: RunResults): string => {
  const summary = summarize(run)
  const columns = variantColumns(summary)
  const p = run.provenance
  // Green only for answers received: a run whose every trial errored is no evidence, whatever the endpoint.
  const real = fromRealModel(run)
  const bannerClass = real ? "real" : p.mode === "offline" ? "offline" : "fake"
  const answered = `${h(answeredText(run))}${summary.errored === 0 ? "" : " (shown as errors below)"}`
  const banner = p.mode === "offline" ?
    "No model involved: the offline selector, deterministic." :
    real ?
    `Answers from a real model: ${h(p.models.join(", "))} at ${h(p.endpoint ?? "?")}; ${answered}.` :
    p.realModel ?
    `No answers from a model: ${answered}. These numbers are not evidence about any model.` :
    `These numbers did NOT come from a real model: ${h(p.note)}; ${answered}.`
  const references = new Set(run.variants.filter((v) => v.reference === true).map((v) => v.name))
  const variantRows = summary.variants.map((v) =>
    `<tr><td><a href="#prompt--${h(v.name)}">${h(v.name)}</a>${
      v.name === run.baseline ? " <i>(baseline)</i>" : references.has(v.name) ? " <i>(reference, not memdir)</i>" : ""
    }${
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
  const inputsOf = new Map(run.scenarios.map((s) => [s.id, s.inputs]))
  const tagsOf = (id: string): ReadonlyArray<string> => {
    const s = run.scenarios.find((x) => x.id === id)
    return [...new Set([...(s?.inputs?.tags ?? []), ...(s?.kind === undefined ? [] : [s.kind])])]
  }
  const allTags = [...new Set(run.scenarios.flatMap((s) => tagsOf(s.id)))].sort()
  const trialsOf = (variant: string, scenario: string) =>
    run.results.filter((r) => r.variant === variant && r.scenario === scenario)
  const gridRows = summary.scenarios.map((s) =>
    `<tr><td><a href="#${h(scenarioAnchor(s.scenario))}">${h(s.scenario)}</a></td><td>${
      tagsOf(s.scenario).map((t) => `<span class="tag">${h(t)}</span>`).join(" ")
    }</td>${
      names.map((n) => {
        const x = s.byVariant[n]!
        const trials = trialsOf(n, s.scenario)
        // a cell opens its first failing trial (the one worth reading), else its first trial
        const target = trials.find((r) => !r.passed) ?? trials[0]
        const label = `${x.passed}/${x.total}`
        return `<td style="background:${cellColor(x.passed, x.total)}">${
          target === undefined ?
            label :
            `<a href="#${h(trialAnchor(target))}" title="${h(`${n} · ${s.scenario}`)}">${label}</a>`
        }</td>`
      }).join("")
    }</tr>`
  ).join("\n")
  const scenarioSections = run.scenarios.map((s) => {
    const trials = names.flatMap((n) => trialsOf(n, s.id)).map((r) => renderTrial(r, s.inputs)).join("\n")
    return `<section class="scenario" id="${h(scenarioAnchor(s.id))}" data-tags="${h(tagsOf(s.id).join(" "))}"><h3>${
      h(s.id)
    }</h3>${renderInputs(inputsOf.get(s.id))}${trials}</section>`
  }).join("\n")
  const option = (value: string, selected: boolean) =>
    `<option value="${h(value)}"${selected ? " selected" : ""}>${h(value)}</option>`
  const other = names.find((n) => n !== run.baseline) ?? run.baseline
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${h(`memdir eval: ${run.suite} (${run.startedAt})`)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1 id="top">${h(run.suite)}</h1>
<div class="meta">${h(run.description)}<br>${plural(run.scenarios.length, "scenario")} × ${
    plural(run.trials, "trial")
  } · section <code>${h(run.section)}</code> · ${h(run.startedAt)} → ${h(run.finishedAt)} · mode <b>${h(p.mode)}</b>${
    p.cassette === undefined ? "" : ` · cassette <code>${h(p.cassette)}</code>`
  }</div>
<div class="banner ${bannerClass}">${banner}</div>
<div id="focus-bar">Opened from the grid: <b id="focus-what"></b> · <a href="#top">show the whole report</a></div>
<div class="report-part">
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
</table>
<p class="note">${summary.comparisons.map((c) => h(comparisonSentence(c))).join("<br>")}</p>`
  }
<h2>Prompts</h2>
<p class="note">Each variant's text as a diff against the default it departs from (added lines green, removed struck through).</p>
${summary.variants.map((v) => renderPrompt(v.name, run.variants.find((x) => x.name === v.name)?.prompt)).join("\n")}
<h2>Scenarios</h2>
<p class="note">Each cell is passed/scored trials; click it to open that variant's trial (its first failing one).</p>
<table class="grid">
<tr><th>scenario</th><th>tags</th>${names.map((n) => `<th>${h(n)}</th>`).join("")}</tr>
${gridRows}
</table>
<h2>Trials</h2>
<div class="filters">
<label><input type="checkbox" id="f-failures"> failures only</label>
<label><input type="checkbox" id="f-discordant"> only where <select id="f-a">${
    names.map((n) => option(n, n === run.baseline)).join("")
  }</select> and <select id="f-b">${names.map((n) => option(n, n === other)).join("")}</select> disagree</label>
<label>tag <select id="f-tag"><option value="">any</option>${
    allTags.map((t) => option(t, false)).join("")
  }</select></label>
<span id="f-count" class="note"></span>
</div>
</div>
${scenarioSections}
<script>${SCRIPT}</script>
</body>
</html>
`
}
