/**
 * What a report needs beside the trials to explain them: each scenario's inputs and what was expected of it, and
 * each variant's prompt text next to the default it departs from. Kept in `results.json`, so a report (or a
 * comparison) made later from the file alone can show why a trial failed.
 */
import * as Result from "effect/Result"
import { BM25_DEFAULT_THRESHOLD, bm25SettingsText } from "./Bm25Baseline.js"
import type { ScenarioInputs, VariantPrompt } from "./Results.js"
import { bm25ThresholdFor, offlineOptionsFor, selectorPrompts } from "./SelectorHarness.js"
import type { LoadedSuite, Scorer } from "./Suite.js"
import { scorerIds, scorersFor } from "./Suite.js"
import { harnessCatalog, resolveVariant, type SectionSource } from "./Variants.js"

/** What a scorer asks for, in one line: its label, or its type and settings. */
const describeScorer = (scorer: Scorer, id: string): string => {
  const { id: _id, label, required, type, ...settings } = scorer as Scorer & { readonly label?: string }
  const what = label ?? `${type} ${JSON.stringify(settings)}`
  return `${id}${required ? "" : " (informational)"}: ${what}`
}

/** Pure: the inputs and expectations of every scenario of a suite, by scenario id. */
export const scenarioInputs = (suite: LoadedSuite): Readonly<Record<string, ScenarioInputs>> => {
  if (suite.kind === "selector") {
    return Object.fromEntries(suite.scenarios.map((s) => [
      s.id,
      {
        tags: s.kind === undefined ? [] : [s.kind],
        query: s.query,
        relevant: s.relevant,
        acceptable: s.acceptable,
        ...(s.recentTools.length === 0 ? {} : { recentTools: s.recentTools }),
        ...(s.note === undefined ? {} : { note: s.note })
      } satisfies ScenarioInputs
    ]))
  }
  return Object.fromEntries(suite.scenarios.map((s) => {
    const scorers = scorersFor(suite, s)
    const ids = scorerIds(scorers)
    const inputs: ScenarioInputs = {
      ...(s.description === undefined ? {} : { description: s.description }),
      tags: s.tags ?? [],
      ...(s.task === undefined ? {} : { query: s.task }),
      ...(s.conversation.length === 0 ? {} : { conversation: s.conversation }),
      expected: scorers.map((scorer, i) => describeScorer(scorer, ids[i]!)),
      memories: (s.memories?.files ?? []).map((f) => ({
        path: f.path,
        ageDays: f.ageDays,
        description: f.description ?? (f.content ?? "").split("\n").find((l) => l.startsWith("description:")) ?? ""
      })),
      ...(Array.isArray(s.recall)
        ? { recalled: s.recall }
        : s.recall === "selector"
        ? { recalled: ["(selector)"] }
        : {}),
      projectFiles: Object.keys(s.project?.files ?? {}).sort()
    }
    return [s.id, inputs]
  }))
}

const resolved = (source: SectionSource, variant: Parameters<typeof resolveVariant>[1]): string =>
  Result.getOrElse(resolveVariant(source, variant), (problems) => `(unresolved: ${problems[0]?.message ?? "?"})`)

const optionsText = (options: object): string =>
  Object.entries(options).map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join("\n")

/** Pure: every variant's text and the default it departs from, by variant name. */
export const variantPrompts = (suite: LoadedSuite): Readonly<Record<string, VariantPrompt>> => {
  if (suite.kind === "selector") {
    const source = selectorPrompts
    const defaultPrompt = resolved(source, { builtin: source.section.default })
    const defaultOptions = optionsText(offlineOptionsFor({ name: "default", selector: "offline" }))
    return Object.fromEntries(suite.variants.map((v) => {
      if (v.selector === "bm25") {
        return [v.name, {
          of: "BM25 baseline settings",
          text: bm25SettingsText(bm25ThresholdFor(v)),
          defaultName: "the baseline at the threshold pnpm evals:generalize --written chooses",
          defaultText: bm25SettingsText(BM25_DEFAULT_THRESHOLD)
        }]
      }
      if (v.selector === "offline") {
        return [v.name, {
          of: "offline selector options",
          text: optionsText(offlineOptionsFor(v)),
          defaultName: "the shipped offline options",
          defaultText: defaultOptions
        }]
      }
      const prompt = v.prompt ?? source.section.default
      return [v.name, {
        of: "selector prompt",
        text: resolved(source, typeof prompt === "string" ? { builtin: prompt } : prompt),
        defaultName: source.section.default,
        defaultText: defaultPrompt
      }]
    }))
  }
  const source = harnessCatalog[suite.section]
  if (source === undefined) return {}
  const defaultText = resolved(source, { builtin: source.section.default })
  return Object.fromEntries(suite.variants.map((v) => [v.name, {
    of: `section ${suite.section}`,
    text: resolved(source, v),
    defaultName: source.section.default,
    defaultText
  }]))
}
