import { InvalidMemoryInputError } from "@memdir/core/Errors"
import type { SelectorChoice } from "@memdir/core/ModelSelector"
import { recalledMemoryView, RecallSession } from "@memdir/core/Recall"
import type { SelectionExplanation } from "@memdir/core/Selector"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { common, jsonOption, locate, requireEnabled, switchFlag } from "../Common.js"
import { printJson } from "../Output.js"
import { memdirHandler } from "../Services.js"
import { terminalLine, terminalText } from "../Terminal.js"
import { explanationLines } from "./recallExplain.js"

/** `--json`'s `explain`: every candidate with evidence, best first; `explainSummary`: the bars and the verdict. */
const explainJson = ({ considered, ...summary }: SelectionExplanation) => ({
  explain: considered,
  explainSummary: summary
})

const explainText = (
  result: {
    readonly explain?: SelectionExplanation | undefined
    readonly skipped?: string | undefined
    readonly selector: string
  }
) =>
  result.explain !== undefined
    ? explanationLines(result.explain, { selector: result.selector })
    : [
      `explain: nothing to explain: ${
        result.skipped === undefined ? "no candidates" : `the request was skipped (${result.skipped})`
      }`
    ]

export const recallCommand = Command.make(
  "recall",
  {
    ...common,
    json: jsonOption,
    max: Flag.Int("max").pipe(
      Flag.withDescription("At most this many memories (1–5)"),
      Flag.withDefault(5)
    ),
    selector: Flag.Literals("selector", ["model", "offline"]).pipe(
      Flag.withDescription(
        "Who picks the memories: the model (needs ANTHROPIC_API_KEY; falls back to offline on any model error) or " +
          "the offline selector. Default: model when a key is configured, else offline"
      ),
      Flag.optional
    ),
    explain: switchFlag("explain").pipe(
      Flag.withDescription(
        "Also show the offline selector's decision: each candidate's score, the terms it matched and where, and " +
          "why it was kept or cut"
      )
    ),
    recentTools: Flag.String("recent-tools").pipe(
      Flag.withMetavar("TOOLS"),
      Flag.withDescription("Comma-separated tools the agent is using (their usage docs are skipped)"),
      Flag.optional
    ),
    query: Argument.String("QUERY").pipe(
      Argument.withDescription("What the user asked, in their words (several words need no quotes)"),
      Argument.variadic({ min: 1 })
    )
  },
  memdirHandler((args) =>
    Effect.gen(function*() {
      // the located memory carries its team switch (settings read once): no team module needed
      const location = yield* locate(args.cwd)
      yield* requireEnabled(location)
      const session = yield* RecallSession
      const query = args.query.join(" ")
      if (query.trim() === "") {
        return yield* new InvalidMemoryInputError({ field: "QUERY", value: query, reason: "give what the user asked" })
      }
      if (args.max < 1) {
        return yield* new InvalidMemoryInputError({ field: "--max", value: String(args.max), reason: "must be ≥ 1" })
      }
      const result = yield* session.recall({
        memoryDir: location.memoryDir,
        query,
        max: args.max,
        // Team memory on: team/ is recalled too (each result says its scope); off: team/ is skipped.
        teamEnabled: location.teamEnabled === true,
        explain: args.explain,
        ...(Option.isSome(args.recentTools) ?
          { recentTools: args.recentTools.value.split(",").map((s) => s.trim()).filter((s) => s !== "") } :
          {})
      })
      // The one shape of a recalled memory, as MCP's memory_recall gives it (Recall.RecalledMemoryView, Operations.RecalledMemory).
      const selected = result.selected.map(recalledMemoryView)
      if (args.json) {
        return yield* printJson({
          selected,
          candidates: result.candidates,
          selector: result.selector,
          ...(result.degraded === undefined ? {} : { degraded: result.degraded }),
          ...(result.skipped === undefined ? {} : { skipped: result.skipped }),
          ...(result.explain === undefined ? {} : explainJson(result.explain))
        })
      }
      if (result.degraded !== undefined) {
        yield* Console.error(`note: the model selector failed, the offline selector answered: ${result.degraded}`)
      }
      const explained = args.explain ? explainText(result) : []
      if (selected.length === 0) {
        yield* Console.log(`no relevant memory (${result.candidates} candidates, selector: ${result.selector})`)
        for (const line of explained) yield* Console.log(line)
        return
      }
      for (const m of selected) {
        yield* Console.log(
          terminalLine(`## ${m.path} [${m.type}${m.scope === "team" ? ", team" : ""}] — saved ${m.age}`)
        )
        if (m.caveat !== null) yield* Console.log(`> ${m.caveat}`)
        yield* Console.log(terminalText(m.content.replace(/\n$/, "")))
        yield* Console.log("")
      }
      yield* Console.log(`(${selected.length}/${result.candidates} selected by the ${result.selector} selector)`)
      for (const line of explained) yield* Console.log(line)
    }), (args) => ({ selector: Option.getOrElse(args.selector, (): SelectorChoice => "auto") }))
).pipe(
  Command.withDescription(
    "Find the memories relevant to a query (the model selector when ANTHROPIC_API_KEY is set, else offline)"
  )
)
