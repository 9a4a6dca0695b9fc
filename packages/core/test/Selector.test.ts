import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FastCheck from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { analyzeText, removeExcludedTopics } from "../src/internal/text/analysis.js"
import type { MemoryHeader } from "../src/Memory.js"
import * as ScannerModule from "../src/Scanner.js"
import {
  defaultOfflineOptions,
  isWarningMemory,
  layer as offlineLayer,
  layerTest,
  MAX_SELECTED,
  mentionsTool,
  scoreMemories,
  Selector,
  selectRelevantMemories,
  toolMentionNames
} from "../src/Selector.js"
import type { SelectionRequest } from "../src/Selector.js"
import {
  formatMetrics,
  halfOf,
  measure as measureSet,
  offTopicSelections,
  report,
  SELECTOR_SET,
  setLabels
} from "./support/selectorSet.js"

const FIXTURES = path.join(import.meta.dirname, "fixtures")

interface Label {
  readonly id: string
  readonly kind: "direct" | "paraphrase" | "none" | "negation" | "tools"
  readonly query: string
  readonly relevant: ReadonlyArray<string>
  readonly acceptable?: ReadonlyArray<string>
  readonly recentTools?: ReadonlyArray<string>
}

const labels: ReadonlyArray<Label> =
  JSON.parse(fs.readFileSync(path.join(FIXTURES, "selector-labels.json"), "utf8")).queries

/** The labelled memory directory, read by the real scanner (and so the real frontmatter parser). */
const loadFixtureMemories = Effect.gen(function*() {
  const scanner = yield* ScannerModule.Scanner
  const result = yield* scanner.scan(path.join(FIXTURES, "selector-memories"))
  assert.deepStrictEqual(result.problems, [])
  return result.memories
}).pipe(Effect.provide(ScannerModule.layerNode.pipe(Layer.provide(NodeServices.layer))))

interface Metrics {
  /** Selected memories that are relevant or acceptable / all selected. */
  readonly precision: number
  /** Relevant memories selected / all relevant. */
  readonly recall: number
  readonly f1: number
  /** Share of nothing-relevant queries that got an empty selection. */
  readonly emptyWhenNothingRelevant: number
  readonly selected: number
}

const measure = (select: (label: Label) => ReadonlyArray<string>, set: ReadonlyArray<Label> = labels): Metrics => {
  let selected = 0, correct = 0, relevant = 0, found = 0, nothingRelevant = 0, empty = 0
  for (const label of set) {
    const chosen = select(label)
    const ok = new Set([...label.relevant, ...(label.acceptable ?? [])])
    selected += chosen.length
    correct += chosen.filter((p) => ok.has(p)).length
    relevant += label.relevant.length
    found += chosen.filter((p) => label.relevant.includes(p)).length
    if (ok.size === 0) {
      nothingRelevant++
      if (chosen.length === 0) empty++
    }
  }
  const precision = selected === 0 ? 1 : correct / selected
  const recall = relevant === 0 ? 1 : found / relevant
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
  return {
    precision,
    recall,
    f1,
    emptyWhenNothingRelevant: nothingRelevant === 0 ? 1 : empty / nothingRelevant,
    selected
  }
}

const headerText = (m: MemoryHeader) => `${m.name} ${m.description} ${m.path.replace(/\.md$/, "")}`

/** Baseline 1: every memory sharing a content word with the query, most shared words first, top 5. */
const keywordOverlap = (memories: ReadonlyArray<MemoryHeader>) => (label: Label) => {
  const query = new Set(analyzeText(label.query).words)
  return memories
    .map((m) => ({ path: m.path, shared: new Set(analyzeText(headerText(m)).words.filter((t) => query.has(t))).size }))
    .filter((m) => m.shared > 0)
    .sort((a, b) => b.shared - a.shared)
    .slice(0, MAX_SELECTED)
    .map((m) => m.path)
}

/** Baseline 2: the same BM25F ranking without the relevance bar: always the top 5 with any match. */
const bm25TopFive = (memories: ReadonlyArray<MemoryHeader>) => (label: Label) =>
  selectRelevantMemories(
    { query: label.query, candidates: memories, recentTools: label.recentTools },
    { ...defaultOfflineOptions, minEvidence: 0, relativeToTop: 0 }
  )

const offline = (memories: ReadonlyArray<MemoryHeader>) => (label: Label) =>
  selectRelevantMemories({ query: label.query, candidates: memories, recentTools: label.recentTools })

const header = (path: string, name: string, description: string, type: MemoryHeader["type"] = "reference") => ({
  path,
  absolutePath: `/mem/${path}`,
  name,
  description,
  type,
  mtime: 0,
  extra: {}
})

describe("the labelled selection set", () => {
  it("is big enough and covers the four types, paraphrases, negation traps, tools and nothing-relevant queries", () => {
    const files = fs.readdirSync(path.join(FIXTURES, "selector-memories"))
    assert.isAtLeast(files.length, 40)
    for (const type of ["user", "feedback", "project", "reference"]) {
      assert.isAtLeast(files.filter((f) => f.startsWith(`${type}_`)).length, 5, type)
    }
    assert.isAtLeast(labels.length, 40)
    for (const kind of ["direct", "paraphrase", "none", "negation", "tools"] as const) {
      assert.isAtLeast(labels.filter((l) => l.kind === kind).length, 3, kind)
    }
    for (const label of labels) {
      for (const p of [...label.relevant, ...(label.acceptable ?? [])]) assert.include(files, p, label.id)
    }
  })

  it.effect("offline BM25F with a relevance bar beats the keyword and top-5 baselines, measured here", () =>
    Effect.gen(function*() {
      const memories = yield* loadFixtureMemories
      assert.strictEqual(memories.length, fs.readdirSync(path.join(FIXTURES, "selector-memories")).length)
      const chosen = measure(offline(memories))
      const keyword = measure(keywordOverlap(memories))
      const topFive = measure(bm25TopFive(memories))
      const row = (name: string, m: Metrics) =>
        `${name.padEnd(16)} precision ${m.precision.toFixed(3)}  recall ${m.recall.toFixed(3)}  F1 ${
          m.f1.toFixed(3)
        }  empty-when-nothing-relevant ${m.emptyWhenNothingRelevant.toFixed(3)}  selected ${m.selected}`
      console.info(
        [row("offline (chosen)", chosen), row("keyword overlap", keyword), row("bm25 top-5", topFive)].join("\n")
      )

      for (const baseline of [keyword, topFive]) {
        assert.isAbove(chosen.f1, baseline.f1)
        assert.isAbove(chosen.precision, baseline.precision)
        assert.isAbove(chosen.emptyWhenNothingRelevant, baseline.emptyWhenNothingRelevant)
      }
      // Regression floors, well under what it measures (precision 0.87, recall 0.80, empty 0.92 when written).
      assert.isAtLeast(chosen.precision, 0.75)
      assert.isAtLeast(chosen.recall, 0.65)
      assert.isAtLeast(chosen.emptyWhenNothingRelevant, 0.8)
    }))

  it.effect("the tool rule and the exclusion cues each pay for themselves on their own queries", () =>
    Effect.gen(function*() {
      const memories = yield* loadFixtureMemories
      const tools = labels.filter((l) => l.kind === "tools")
      const withRule = measure(offline(memories), tools)
      const withoutRule = measure((l) => selectRelevantMemories({ query: l.query, candidates: memories }), tools)
      assert.isAbove(withRule.precision, withoutRule.precision)

      const negations = labels.filter((l) => l.kind === "negation")
      const withCues = measure(offline(memories), negations)
      assert.strictEqual(withCues.recall, 1)
      assert.isAtLeast(withCues.emptyWhenNothingRelevant, 2 / 3)
    }))
})

/** Every directory of the multilingual set, read by the real scanner: memories and headerless files. */
const loadSelectorSet = Effect.gen(function*() {
  const scanner = yield* ScannerModule.Scanner
  const dirs = new Map<string, ReadonlyArray<MemoryHeader>>()
  const problems: Array<string> = []
  for (const dir of fs.readdirSync(SELECTOR_SET).sort()) {
    if (!fs.statSync(path.join(SELECTOR_SET, dir)).isDirectory()) continue
    const result = yield* scanner.scan(path.join(SELECTOR_SET, dir))
    for (const problem of result.problems) problems.push(`${dir}/${problem.path}: ${problem.code}`)
    dirs.set(dir, [...result.memories, ...(result.headerless ?? [])])
  }
  return { dirs, problems }
}).pipe(Effect.provide(ScannerModule.layerNode.pipe(Layer.provide(NodeServices.layer))))

describe("the multilingual selection set (natural requests, ten directories, five languages)", () => {
  it("is big and varied enough, and its labels name files that exist", () => {
    assert.isAtLeast(setLabels.length, 150)
    const dirs = new Set(setLabels.map((l) => l.dir))
    assert.isAtLeast(dirs.size, 8)
    for (const language of ["en", "de", "es", "ko"]) {
      assert.isAtLeast(setLabels.filter((l) => l.language === language).length, 25, language)
    }
    for (const kind of ["paraphrase", "negation", "trap", "none"]) {
      assert.isAtLeast(setLabels.filter((l) => l.kind === kind).length, 10, kind)
    }
    assert.strictEqual(new Set(setLabels.map((l) => l.id)).size, setLabels.length)
    for (const label of setLabels) {
      for (const file of [...label.relevant, ...label.acceptable]) {
        assert.isTrue(fs.existsSync(path.join(SELECTOR_SET, label.dir, file)), `${label.id}: ${file}`)
      }
    }
    // The split is a hash of the id: both halves get a fair share of every language.
    for (const half of ["tuning", "held-out"] as const) {
      assert.isAtLeast(setLabels.filter((l) => halfOf(l.id) === half).length, 60, half)
    }
  })

  it.effect("on the held-out half: recall >= 0.80, precision >= 0.75, <= 1 off-topic pick per directory", () =>
    Effect.gen(function*() {
      const { dirs, problems } = yield* loadSelectorSet
      // Files without frontmatter are still reported as problems, and still offered to the selector.
      assert.deepStrictEqual(problems, [
        "cli-tool-en/notes_config_format.md: missing-frontmatter",
        "desktop-ko/notes_logging.md: missing-frontmatter"
      ])
      const candidatesOf = (dir: string) => dirs.get(dir)!
      const select = (query: string, candidates: ReadonlyArray<MemoryHeader>) =>
        selectRelevantMemories({ query, candidates })
      const rows = report(candidatesOf, select)
      console.info([...rows].map(([name, m]) => formatMetrics(name, m)).join("\n"))

      const heldOut = rows.get("held-out")!
      assert.isAtLeast(heldOut.recall, 0.8)
      assert.isAtLeast(heldOut.precision, 0.75)
      const heldOutLabels = setLabels.filter((l) => halfOf(l.id) === "held-out")
      for (const [dir, picks] of offTopicSelections(candidatesOf, select, heldOutLabels)) {
        assert.isAtMost(picks, 1, dir)
      }
      // Korean, German and Spanish requests over same-language memories recall as well as English ones (± 0.1).
      const english = rows.get("held-out en")!.recall
      for (const language of ["de", "es", "ko"]) {
        assert.isAtLeast(rows.get(`held-out ${language}`)!.recall, english - 0.1, language)
      }
      // The bar is not met by selecting everything: nothing-relevant requests mostly get nothing.
      assert.isAtLeast(heldOut.emptyWhenNothingRelevant, 0.8)
      assert.isBelow(measureSet(heldOutLabels, () => []).recall, 0.01)
    }))

  it.effect("finds the database-testing rule for a natural request in a two-memory directory", () =>
    Effect.gen(function*() {
      const { dirs } = yield* loadSelectorSet
      const candidates = dirs.get("webapp-en")!
      assert.strictEqual(candidates.length, 2)
      const rule = candidates.find((m) =>
        m.description === "Integration tests must hit the real Postgres database, never mocks"
      )!
      const query = "how should I write the integration tests for the database layer?"
      assert.deepStrictEqual(selectRelevantMemories({ query, candidates }), [rule.path])
      assert.deepStrictEqual(
        (yield* Effect.provide(Effect.flatMap(Selector, (s) => s.select({ query, candidates })), offlineLayer))
          .selected,
        [rule.path]
      )
    }))

  it.effect("reads a memory without frontmatter by its file name and first lines", () =>
    Effect.gen(function*() {
      const { dirs } = yield* loadSelectorSet
      const candidates = dirs.get("cli-tool-en")!
      const notes = candidates.find((m) => m.path === "notes_config_format.md")!
      assert.strictEqual(notes.name, "notes_config_format")
      assert.strictEqual(notes.description, "Config file format")
      assert.isTrue(notes.headerless)
      assert.include(
        selectRelevantMemories({ query: "let's move the config to YAML, it's more common", candidates }),
        notes.path
      )
    }))
})

describe("selectRelevantMemories (pure)", () => {
  const deploy = header("reference_deploy.md", "Deploy runbook", "How to deploy billing-api to production with fly")
  const tests = header(
    "feedback_tests.md",
    "Real DB in tests",
    "Integration tests must hit a real Postgres, never mocks",
    "feedback"
  )
  const kubectlDoc = header("reference_kubectl.md", "kubectl usage", "List worker pods with kubectl -n pdf get pods")
  const kubectlGotcha = header(
    "feedback_kubectl.md",
    "kubectl context gotcha",
    "Careful: kubectl defaults to the production context; always pass --context staging",
    "feedback"
  )
  const readRunbook = header(
    "reference_runbook.md",
    "Incident runbook",
    "Read the incident runbook before paging the database team"
  )
  const candidates = [deploy, tests, kubectlDoc, kubectlGotcha, readRunbook]

  it("selects the memory a direct query names and nothing for small talk or an empty query", () => {
    assert.deepStrictEqual(selectRelevantMemories({ query: "deploy billing-api to production", candidates }), [
      deploy.path
    ])
    assert.deepStrictEqual(selectRelevantMemories({ query: "thanks, that looks great!", candidates }), [])
    assert.deepStrictEqual(selectRelevantMemories({ query: "   ", candidates }), [])
    assert.deepStrictEqual(selectRelevantMemories({ query: "deploy it", candidates: [] }), [])
  })

  it("keeps a memory whose rule the query negates ('don't mock …'): the topic is the same", () => {
    assert.include(
      selectRelevantMemories({ query: "don't mock Postgres in the integration tests", candidates }),
      tests.path
    )
  })

  it("drops a topic the query excludes ('not about …', 'ignore …') but keeps the rest of the query", () => {
    assert.deepStrictEqual(
      selectRelevantMemories({ query: "not about the deploy — explain this regex", candidates }),
      []
    )
    assert.deepStrictEqual(
      selectRelevantMemories({ query: "ignore the deploy, the integration tests need a real Postgres", candidates }),
      [tests.path]
    )
    assert.strictEqual(removeExcludedTopics("ignore the ACME incident, just fix the typo").includes("ACME"), false)
    assert.include(removeExcludedTopics("ignore the ACME incident, just fix the typo"), "fix the typo")
  })

  it("drops usage docs for a tool in recent use, keeps (and lifts) the warning about it", () => {
    const query = "list the pdf worker pods with kubectl"
    const without = selectRelevantMemories({ query, candidates })
    assert.include(without, kubectlDoc.path)
    const withTool = selectRelevantMemories({ query, candidates, recentTools: ["kubectl"] })
    assert.notInclude(withTool, kubectlDoc.path)
    assert.include(withTool, kubectlGotcha.path)
    const scored = scoreMemories({ query, candidates, recentTools: ["kubectl"] })
    assert.isTrue(scored.find((s) => s.path === kubectlDoc.path)!.droppedAsToolDoc)
  })

  it("never treats the agent's generic tools (Read, Bash…) as a topic to drop", () => {
    const query = "read the incident runbook for the database"
    assert.include(
      selectRelevantMemories({ query, candidates, recentTools: ["Read", "Bash", "Edit"] }),
      readRunbook.path
    )
    assert.deepStrictEqual(toolMentionNames("Read"), [])
    assert.deepStrictEqual(toolMentionNames("mcp__github__create_pull_request"), ["github", "create_pull_request"])
    assert.deepStrictEqual(toolMentionNames("redis-cli"), ["redis-cli", "redis"])
    assert.isTrue(mentionsTool(header("r.md", "Redis keys", "inspect with redis-cli --scan"), "redis-cli"))
    assert.isFalse(mentionsTool(header("r.md", "Grep tips", "kubectlish is not kubectl-like"), "kube"))
    assert.isTrue(mentionsTool(header("reference_gh.md", "PRs", "how we open PRs"), "gh"))
    assert.isTrue(
      mentionsTool(header("r.md", "PRs", "use create_pull_request with a draft"), "mcp__github__create_pull_request")
    )
  })

  it("recognises warnings, gotchas and prohibitions", () => {
    assert.isTrue(isWarningMemory(kubectlGotcha))
    assert.isTrue(isWarningMemory(tests))
    assert.isTrue(isWarningMemory(header("a.md", "prisma", "Known issue: migrate dev resets the database")))
    assert.isFalse(isWarningMemory(kubectlDoc))
  })

  it("matches word families, abbreviations and phrases through the one text analysis", () => {
    const terms = (text: string) => analyzeText(text, "en").words
    assert.deepStrictEqual(terms("migration"), terms("migrate"))
    assert.deepStrictEqual(terms("migrations"), terms("migrated"))
    assert.deepStrictEqual(terms("optimize"), terms("optimization"))
    assert.deepStrictEqual(terms("running"), ["run"])
    assert.notDeepEqual(terms("user"), terms("use"))
    assert.deepStrictEqual(terms("Open a pull request"), terms("open PR"))
    assert.deepStrictEqual(terms("the DB"), terms("databases"))
    assert.deepStrictEqual(terms("localization"), terms("i18n"))
  })

  const arbitraryHeader = FastCheck.record({
    path: FastCheck.stringMatching(/^[a-z_]{1,12}\.md$/),
    name: FastCheck.string({ maxLength: 30 }),
    description: FastCheck.string({ maxLength: 120 })
  }).map((h) => header(h.path, h.name, h.description))
  const words = FastCheck.constantFrom("deploy", "tests", "mock", "postgres", "kubectl", "the", "pods", "fix", "é", "")

  it("returns only candidate paths, no duplicates, at most min(max, 5)", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(arbitraryHeader, { maxLength: 25 }),
        FastCheck.array(words, { maxLength: 8 }).map((w) => w.join(" ")),
        FastCheck.option(FastCheck.integer({ min: -3, max: 12 }), { nil: undefined }),
        FastCheck.array(FastCheck.constantFrom("kubectl", "Bash", "mcp__x__y"), { maxLength: 2 }),
        (memories, query, max, recentTools) => {
          const candidates = [...memories, deploy, tests, kubectlDoc]
          const selected = selectRelevantMemories({ query, candidates, max, recentTools })
          const known = new Set(candidates.map((m) => m.path))
          assert.isTrue(selected.every((p) => known.has(p)))
          assert.strictEqual(new Set(selected).size, selected.length)
          assert.isAtMost(selected.length, Math.min(MAX_SELECTED, Math.max(0, max ?? MAX_SELECTED)))
        }
      )
    )
  })
})

describe("the cached index", () => {
  it("follows a memory's new version (mtime, header text) and an added or removed file", () => {
    const at = (mtime: number, description: string, bodyHead = "") => ({
      ...header("feedback_cache.md", "Cache note", description, "feedback"),
      absolutePath: "/cache-test/feedback_cache.md",
      mtime,
      bodyHead
    })
    const other = { ...header("reference_other.md", "Other", "Grafana dashboards"), absolutePath: "/cache-test/o.md" }
    const query = "how do we deploy the billing service to production?"
    const before = [at(1000, "Releases ship on Tuesdays"), other]
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates: before }), [])
    // The file was rewritten: new mtime, new description. A new scan gives new objects.
    const after = [at(2000, "Deploy the billing service to production with fly deploy"), { ...other }]
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates: after }), ["feedback_cache.md"])
    // A header built in memory (mtime 0) is compared whole: a changed body head is a new version too.
    const inMemory = [at(0, "Release notes", "nothing here"), other]
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates: inMemory }), [])
    const edited = [at(0, "Release notes", "deploy the billing service to production with fly"), other]
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates: edited }), ["feedback_cache.md"])
    // A file removed from the set: its index entry no longer counts.
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates: [other] }), [])
  })
})

describe("Selector layers", () => {
  const candidates = [
    header("reference_deploy.md", "Deploy runbook", "How to deploy billing-api to production"),
    header("feedback_tests.md", "Real DB in tests", "Integration tests hit a real Postgres", "feedback")
  ]
  const request: SelectionRequest = { query: "deploy billing-api to production", candidates }

  it.effect("layer is the offline selector", () =>
    Effect.gen(function*() {
      const selector = yield* Selector
      const selection = yield* selector.select(request)
      assert.deepStrictEqual(selection, { selected: ["reference_deploy.md"], selector: "offline" })
      assert.deepStrictEqual((yield* selector.select({ ...request, max: 0 })).selected, [])
    }).pipe(Effect.provide(offlineLayer)))

  it.effect("layerTest returns the script, minus names that are not candidates, capped at max", () =>
    Effect.gen(function*() {
      const selector = yield* Selector
      const selection = yield* selector.select(request)
      assert.deepStrictEqual(selection, {
        selected: ["feedback_tests.md", "reference_deploy.md"],
        selector: "scripted"
      })
      assert.deepStrictEqual((yield* selector.select({ ...request, max: 1 })).selected, ["feedback_tests.md"])
      assert.deepStrictEqual((yield* selector.select({ ...request, query: "unscripted" })).selected, [])
    }).pipe(Effect.provide(layerTest({
      [request.query]: ["feedback_tests.md", "invented.md", "reference_deploy.md", "feedback_tests.md"]
    }))))
})
