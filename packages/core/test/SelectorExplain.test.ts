/**
 * `explainSelection`: the offline decision explained candidate by candidate. Its `selected` must be exactly what
 * `selectRelevantMemories` selects (over the whole labelled set), and each verdict must say what cut a candidate.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { analyzeBody } from "../src/internal/text/selectorIndex.js"
import type { MemoryHeader } from "../src/Memory.js"
import * as ScannerModule from "../src/Scanner.js"
import { defaultOfflineOptions, explainSelection, selectRelevantMemories } from "../src/Selector.js"
import { memoryHeader } from "./support/memoryHeader.js"
import { SELECTOR_SET, setLabels } from "./support/selectorSet.js"

const memory = (path: string, name: string, description: string, bodyHead = ""): MemoryHeader =>
  memoryHeader(path, name, description, bodyHead, "reference")

describe("explainSelection", () => {
  it.effect("selects exactly what selectRelevantMemories selects, on every labelled request", () =>
    Effect.gen(function*() {
      const scanner = yield* ScannerModule.Scanner
      let kept = 0
      let cut = 0
      for (const label of setLabels) {
        const scan = yield* scanner.scan(path.join(SELECTOR_SET, label.dir))
        const candidates = [...scan.memories, ...(scan.headerless ?? [])]
        const explanation = explainSelection({ query: label.query, candidates })
        const selected = selectRelevantMemories({ query: label.query, candidates })
        assert.deepStrictEqual(explanation.selected, selected, label.id)
        assert.deepStrictEqual(
          explanation.considered.filter((c) => c.verdict === "kept").map((c) => c.path),
          selected,
          label.id
        )
        assert.strictEqual(explanation.considered.length + explanation.unmatched, candidates.length, label.id)
        for (const c of explanation.considered) {
          // every matched term is found in some field of the memory, and the candidate has evidence
          assert.isAbove(c.score, 0, `${label.id} ${c.path}`)
          for (const m of c.matched) assert.isNotEmpty(m.fields, `${label.id} ${c.path} ${m.term}`)
          if (c.verdict === "below-evidence-floor") assert.isBelow(c.score, explanation.minEvidence)
          if (c.verdict === "below-relative-cut") {
            assert.isAtLeast(c.score, explanation.minEvidence)
            assert.isBelow(c.score, explanation.relativeCut)
          }
          if (c.verdict === "kept") kept++
          else cut++
        }
        if (selected.length === 0) assert.match(explanation.summary, /^nothing kept: /, label.id)
      }
      // the set exercises both outcomes
      assert.isAbove(kept, 100)
      assert.isAbove(cut, 100)
    }).pipe(Effect.provide(ScannerModule.layerNode.pipe(Layer.provide(NodeServices.layer)))))

  it("says which family member a near-duplicate repeats, and which relevant ones the slots left out", () => {
    const family = [45, 81, 90].map((v) =>
      memory(`mcpe-v${v}-protocol.md`, `MCPE protocol ${v}`, `Packet layout of the MCPE protocol, version ${v}`)
    )
    const explanation = explainSelection({ query: "mcpe protocol packet layout", candidates: family })
    assert.deepStrictEqual(explanation.selected, ["mcpe-v45-protocol.md"])
    const duplicates = explanation.considered.filter((c) => c.verdict === "near-duplicate")
    assert.deepStrictEqual(duplicates.map((c) => c.duplicateOf), ["mcpe-v45-protocol.md", "mcpe-v45-protocol.md"])
    assert.include(duplicates[0]!.reason, "near-duplicate of mcpe-v45-protocol.md")

    const many = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"].map((n) =>
      memory(`${n}_deploy.md`, `Deploy runbook ${n}`, `How to deploy the kubernetes cluster ${n}`)
    )
    const limited = explainSelection({ query: "deploy the kubernetes cluster", candidates: many, max: 2 })
    assert.strictEqual(limited.selected.length, 2)
    assert.deepStrictEqual(
      limited.considered.map((c) => c.verdict),
      ["kept", "kept", "over-limit", "over-limit", "over-limit", "over-limit"]
    )
    assert.include(limited.considered[2]!.reason, "the 2 slots")
  })

  it("names the fields a term matched in, and why a tool's usage doc is cut", () => {
    const candidates = [
      memory("reference_redis-cli.md", "redis-cli usage", "How to use redis-cli to inspect keys"),
      memory("feedback_cache.md", "Cache keys", "Cache keys expire after an hour", "Inspect keys with the dashboard.")
    ]
    const explanation = explainSelection({ query: "inspect the cache keys", candidates, recentTools: ["redis-cli"] })
    const doc = explanation.considered.find((c) => c.path === "reference_redis-cli.md")!
    assert.strictEqual(doc.verdict, "tool-doc")
    const cache = explanation.considered.find((c) => c.path === "feedback_cache.md")!
    assert.strictEqual(cache.verdict, "kept")
    const fieldsOf = (term: string) => cache.matched.find((m) => m.term === term)?.fields
    assert.deepStrictEqual(fieldsOf("cach"), ["name", "description", "path"])
    assert.deepStrictEqual(fieldsOf("inspect"), ["body"])
  })

  it("says why nothing was kept: no shared term, or too little evidence", () => {
    const candidates = [
      ...[45, 81].map((v) =>
        memory(
          `reference_mcpe-v${v}-protocol.md`,
          `MCPE protocol v${v}`,
          `Packet layout of MCPE protocol version ${v}, handshake and login`,
          "The handshake sends a login packet."
        )
      ),
      memory("feedback_db-tests.md", "Database tests use a real Postgres", "Integration tests hit a real database"),
      memory("project_release.md", "Release on Fridays", "Never ship releases on a Friday afternoon")
    ]
    const none = explainSelection({ query: "what is the weather in paris tomorrow", candidates })
    assert.deepStrictEqual(none.selected, [])
    assert.strictEqual(none.unmatched, 4)
    assert.match(none.summary, /none of the 4 candidates shares a term/)
    const weak = explainSelection({ query: "the login form button color in the mobile app", candidates })
    assert.deepStrictEqual(weak.selected, [])
    assert.strictEqual(weak.considered[0]!.verdict, "below-evidence-floor")
    assert.match(weak.summary, /is below the evidence floor 0\.40/)
  })

  it("asks a request phrased as a general question for more evidence that it is about the project", () => {
    const candidates = [
      memory(
        "project_innovation_zone_placement.md",
        "Innovation zone placement",
        "Where the extension draws each player's Innovation board zones on the BGA table",
        "The score pile and the achievements sit under the board; splays are read from the zone's class names."
      ),
      memory(
        "project_factor_commands.md",
        "ops rm vs ops cancel",
        "rm deletes a factor and its results; cancel stops a running check and keeps the factor",
        "Both ask for confirmation. rm is final, cancel can be retried."
      ),
      memory("reference_bga.md", "BGA table DOM", "How the BGA page lays out the game table and the player panels")
    ]
    const query = "Who designed the Innovation card game, and when did it come out?"
    const trap = explainSelection({ query, candidates })
    assert.deepStrictEqual(trap.selected, [])
    const innovation = trap.considered.find((c) => c.path === "project_innovation_zone_placement.md")!
    assert.strictEqual(innovation.verdict, "general-question")
    assert.isAtLeast(innovation.score, trap.minEvidence)
    assert.isBelow(innovation.score, defaultOfflineOptions.generalQuestionEvidence)
    assert.include(innovation.reason, "\"who designed\"")
    assert.strictEqual(trap.questionForm, "who designed")
    assert.strictEqual(trap.generalQuestionBar, defaultOfflineOptions.generalQuestionEvidence)
    assert.match(
      trap.summary,
      /^nothing kept: the best match project_innovation_zone_placement\.md scores \d\.\d\d, under 1\.40, .*"who designed"/
    )
    // the bar is what cuts it: with the floor alone its one shared word is evidence enough
    const without = explainSelection({ query, candidates }, { ...defaultOfflineOptions, generalQuestionEvidence: 0 })
    assert.deepStrictEqual(without.selected, ["project_innovation_zone_placement.md"])
    // the same frame about what the project has keeps its memory: the header names both commands
    const own = explainSelection({ query: "What's the difference between ops rm and ops cancel?", candidates })
    assert.deepStrictEqual(own.selected, ["project_factor_commands.md"])
    assert.isAtLeast(own.considered[0]!.score, defaultOfflineOptions.generalQuestionEvidence)
    // a request in no general-question frame demands nothing more
    const plain = explainSelection({ query: "Where does the extension draw the Innovation zones?", candidates })
    assert.isUndefined(plain.questionForm)
    assert.strictEqual(plain.generalQuestionBar, 0)
    assert.deepStrictEqual(plain.selected, ["project_innovation_zone_placement.md"])
  })

  it("cuts a memory sharing a word with a request mostly about what no memory mentions", () => {
    const candidates = [
      memory(
        "project_pulse.md",
        "Pulse trading bot",
        "Pulse scans the market for breakouts and places momentum trades",
        "Pulse runs every five minutes while the market is open; resting orders are cancelled at the close."
      ),
      memory("feedback_sizing.md", "Position sizing", "Never risk more than one percent of the account on a trade"),
      memory("reference_broker.md", "Broker API", "The broker's REST API, its keys and its rate limits")
    ]
    const trap = explainSelection({
      query: "My Garmin shows a resting pulse of 95 bpm — should I be worried?",
      candidates
    })
    assert.deepStrictEqual(trap.selected, [])
    const pulse = trap.considered[0]!
    assert.strictEqual(pulse.path, "project_pulse.md")
    assert.strictEqual(pulse.verdict, "unknown-words")
    assert.includeMembers([...trap.unknownWords], ["garmin", "bpm", "worri"])
    assert.strictEqual(
      trap.unknownWordsBar,
      Math.min(defaultOfflineOptions.unknownWordsCap, defaultOfflineOptions.unknownWordsShare * trap.unknownWeight)
    )
    assert.isBelow(pulse.score, trap.unknownWordsBar)
    assert.isAtLeast(pulse.score, trap.minEvidence)
    assert.include(pulse.reason, "garmin")
    assert.match(
      trap.summary,
      /^nothing kept: the best match project_pulse\.md scores \d\.\d\d, under 0\.2 × \d\.\d\d \(\d\.\d\d\), .*garmin.* never mentions$/
    )
    // the bar is what cuts it: without it the shared words are evidence enough
    const without = explainSelection(
      { query: "My Garmin shows a resting pulse of 95 bpm — should I be worried?", candidates },
      { ...defaultOfflineOptions, unknownWordsShare: 0 }
    )
    assert.deepStrictEqual(without.selected, ["project_pulse.md"])

    // a request about the memory in the directory's own words keeps it: no unknown word of weight
    const own = explainSelection({ query: "Why did Pulse place no momentum trades today?", candidates })
    assert.deepStrictEqual(own.selected, ["project_pulse.md"])
    assert.deepStrictEqual(own.unknownWords, [])

    // a long request full of words no memory has (a pasted log) demands at most the cap
    const log = "Pulse crashed placing momentum trades on breakouts: TypeError at xq7 zr9 vv3 kp2 mm8 qq5 " +
      "ww4 yy6 tt1 jj0 hh2 gg3 ff4 dd5 ss6 aa7"
    const long = explainSelection({ query: log, candidates })
    assert.isAbove(defaultOfflineOptions.unknownWordsShare * long.unknownWeight, defaultOfflineOptions.unknownWordsCap)
    assert.strictEqual(long.unknownWordsBar, defaultOfflineOptions.unknownWordsCap)
    assert.deepStrictEqual(long.selected, ["project_pulse.md"])
    // a reason names a few of them, not hundreds; the explanation keeps them all
    const noise = Array.from({ length: 40 }, (_, i) => `zq${i}xv`).join(" ")
    const flood = explainSelection({ query: `pulse ${noise}`, candidates })
    assert.strictEqual(flood.unknownWords.length, 40)
    assert.strictEqual(flood.considered[0]!.verdict, "unknown-words")
    assert.include(flood.considered[0]!.reason, "zq7xv and 32 more)")
    assert.notInclude(flood.considered[0]!.reason, "zq8xv")
  })

  it("asks nothing of the unknown words while the term cache has bodies still to analyse", () => {
    const candidates = [
      memory(
        "project_pulse.md",
        "Pulse trading bot",
        "Pulse scans the market for breakouts and places momentum trades"
      ),
      memory("reference_broker.md", "Broker API", "The broker's REST API, its keys and its rate limits"),
      memory("feedback_sizing.md", "Position sizing", "Never risk more than one percent of the account on a trade")
    ]
    const query = "my Garmin shows a resting pulse of 95 bpm, should I be worried"
    const body = (text: string) => analyzeBody(text)
    const all = new Map([
      ["project_pulse.md", body("Pulse runs every five minutes while the market is open.")],
      ["reference_broker.md", body("Keys live in the vault.")],
      ["feedback_sizing.md", body("One percent.")]
    ])
    const read = explainSelection({ query, candidates, bodies: all })
    assert.strictEqual(read.unanalysed, 0)
    assert.isAbove(read.unknownWordsBar, 0)
    assert.deepStrictEqual(read.selected, [])
    assert.strictEqual(read.considered[0]!.verdict, "unknown-words")
    // one body not analysed yet (scored by its header): a word may be in it, so the bar waits
    const partial = new Map([...all].filter(([path]) => path !== "feedback_sizing.md"))
    const reading = explainSelection({ query, candidates, bodies: partial })
    assert.strictEqual(reading.unanalysed, 1)
    assert.strictEqual(reading.unknownWordsBar, 0)
    assert.deepStrictEqual(reading.selected, ["project_pulse.md"])
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates, bodies: partial }), ["project_pulse.md"])
  })
})
