/**
 * The LLM selector (docs/architecture.md#how-a-recall-flows): a side query to a fast model that picks the memories that
 * will clearly help with this query, as another `Selector` layer.
 *
 * It sends a conservative system prompt (named variants, swapped by the evals), the manifest (one
 * `manifestLine` per candidate, as scanned) and the recently used tools, forces one `select_memories` tool
 * call (`{ selected_memories: string[] }`, decoded with `effect/Schema`), keeps only names that are in the
 * manifest and at most 5 (or `max`). An empty answer is a fine answer.
 *
 * It never fails a turn: any `ModelError` (no key, rate limit after retries, timeout, malformed output…)
 * falls back to the offline selector for that turn, and the selection says so in `degraded` (which recall
 * copies into its result and telemetry).
 *
 * Prompt caching: the prefix tools → system → manifest repeats from turn to turn of a session (the manifest
 * changes only when a memory is written or surfaced), so the system block and the manifest block carry cache
 * breakpoints and the query comes last.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { ModelError, UnknownPromptVariantError } from "./Errors.js"
import { manifestLine } from "./Memory.js"
import { Model } from "./Model.js"
import { renderSection } from "./prompts/PromptSection.js"
import { DEFAULT_SELECTOR_VARIANT, SELECT_TOOL_NAME, selectorSection } from "./prompts/SelectorPrompt.js"
import {
  effectiveMax,
  OFFLINE_SELECTOR,
  scoreMemories,
  type Selection,
  type SelectionRequest,
  Selector,
  selectRelevantMemories
} from "./Selector.js"
import * as OfflineSelector from "./Selector.js"

/** The selector name reported in `Selection.selector` and telemetry when the model chose. */
export const MODEL_SELECTOR = "model"

/** Reference: a side query capped at 256 output tokens. */
export const SELECTOR_MAX_TOKENS = 256

export { DEFAULT_SELECTOR_VARIANT, SELECT_TOOL_NAME, selectorSection } from "./prompts/SelectorPrompt.js"

/** What the model must answer (the tool's input). */
export const SelectedMemories = Schema.Struct({
  selected_memories: Schema.Array(Schema.String).annotate({
    description: "Paths of the memories that will clearly help, exactly as written in the manifest, most useful " +
      "first. At most 5. An empty list when none clearly helps."
  })
})
export type SelectedMemories = typeof SelectedMemories.Type

/**
 * The system prompt, as named variants (data in prompts/SelectorPrompt.ts: the evals swap them by name and score the
 * outcome).
 * - `conservative` (default): the reference's rules: only memories that will clearly help, at most 5, an empty
 *   list is fine, when unsure skip.
 * - `strict`: prefers zero to two, for measuring precision against recall of the default.
 * - `generous`: an eval baseline that includes anything plausibly relevant (expected to cost precision).
 */
export const selectorPromptVariants: Readonly<Record<string, string>> = selectorSection.variants

/** The system prompt of a variant; an unknown name is a typed error naming the known ones. */
export const selectorPrompt = (variant: string = DEFAULT_SELECTOR_VARIANT) =>
  renderSection(selectorSection, variant, {})

/** The manifest the model reads: one line per candidate, in the scan's order (newest first). */
export const buildManifest = (candidates: SelectionRequest["candidates"]): string =>
  candidates.map(manifestLine).join("\n")

/** The user message: manifest first (a stable, cacheable block), then the query and the recent tools. */
export const buildSelectorMessage = (request: SelectionRequest) => {
  const tools = (request.recentTools ?? []).map((t) => t.trim()).filter((t) => t !== "")
  const max = effectiveMax(request.max)
  return {
    role: "user" as const,
    content: [
      {
        type: "text" as const,
        text: `<manifest>\n${buildManifest(request.candidates)}\n</manifest>`,
        cache_control: { type: "ephemeral" as const }
      },
      {
        type: "text" as const,
        text:
          `<query>\n${request.query}\n</query>\n\n<recently_used_tools>\n${
            tools.length === 0 ? "(none)" : tools.join(", ")
          }\n</recently_used_tools>` + (max < 5 ? `\n\nSelect at most ${max}.` : "")
      }
    ]
  }
}

/** A name as a model may write it: backquoted, quoted, or with a leading `./`. */
const normalizeName = (name: string): string => name.trim().replace(/^[`"']+|[`"']+$/g, "").replace(/^\.\//, "").trim()

/** Pure: the model's names that are candidates (others dropped), deduplicated, in its order, at most `max`. */
export const resolveSelection = (
  names: ReadonlyArray<string>,
  candidates: SelectionRequest["candidates"],
  max: number | undefined
): { readonly selected: ReadonlyArray<string>; readonly dropped: ReadonlyArray<string> } => {
  const known = new Set(candidates.map((m) => m.path))
  const selected: Array<string> = []
  const dropped: Array<string> = []
  for (const name of names) {
    const path = normalizeName(name)
    if (!known.has(path)) dropped.push(name)
    else if (!selected.includes(path)) selected.push(path)
  }
  return { selected: selected.slice(0, effectiveMax(max)), dropped }
}

export interface ModelSelectorOptions {
  /** System prompt variant (default `conservative`). */
  readonly variant?: string | undefined
}

/** The most manifest lines the model reads (the reference's 200): a larger directory is cut to its budget. */
export const MANIFEST_MAX_LINES = 200

/**
 * The candidates the manifest lists: all of them when they fit its budget; otherwise the `MANIFEST_MAX_LINES` with
 * the most offline evidence for the query (then the newest), in the scan's order (newest first).
 */
export const manifestCandidates = (request: SelectionRequest): SelectionRequest["candidates"] => {
  if (request.candidates.length <= MANIFEST_MAX_LINES) return request.candidates
  const kept = new Set(scoreMemories(request).slice(0, MANIFEST_MAX_LINES).map((s) => s.path))
  return request.candidates.filter((m) => kept.has(m.path))
}

/**
 * One selection by the model, without the fallback (the evals measure the model alone with it). Fails with the
 * model's `ModelError`.
 */
export const selectWithModel = (
  model: Context.Service.Shape<typeof Model>,
  request: SelectionRequest,
  system: string
): Effect.Effect<Selection, ModelError> =>
  Effect.gen(function*() {
    const listed = { ...request, candidates: manifestCandidates(request) }
    const { response, value } = yield* model.structured({
      role: "selector",
      system: [{ text: system, cache: true }],
      messages: [buildSelectorMessage(listed)],
      maxTokens: SELECTOR_MAX_TOKENS
    }, {
      name: SELECT_TOOL_NAME,
      description: "Report which memories from the manifest will clearly help with the query.",
      schema: SelectedMemories
    })
    const { dropped, selected } = resolveSelection(value.selected_memories, listed.candidates, request.max)
    yield* Effect.annotateCurrentSpan({
      "selector.model": response.model,
      "selector.proposed": value.selected_memories.length,
      "selector.dropped_unknown": dropped.length,
      "selector.input_tokens": response.usage.inputTokens,
      "selector.cache_read_input_tokens": response.usage.cacheReadInputTokens
    })
    return { selected, selector: MODEL_SELECTOR }
  })

/** The offline answer for a turn the model could not serve, saying why. */
const degradeToOffline = (request: SelectionRequest, error: ModelError): Selection => ({
  selected: selectRelevantMemories(request),
  selector: OFFLINE_SELECTOR,
  degraded: `${error.kind}: ${error.message}`
})

export const makeWith = (
  options: ModelSelectorOptions = {}
): Effect.Effect<Context.Service.Shape<typeof Selector>, UnknownPromptVariantError, Model> =>
  Effect.gen(function*() {
    const model = yield* Model
    const system = yield* Effect.fromResult(selectorPrompt(options.variant))
    return Selector.of({
      select: Effect.fn("Selector.select")(function*(request: SelectionRequest) {
        yield* Effect.annotateCurrentSpan({ selector: MODEL_SELECTOR, candidates: request.candidates.length })
        // nothing to choose from, or nothing wanted: no need to spend a call
        if (request.candidates.length === 0 || effectiveMax(request.max) === 0) {
          return { selected: [], selector: MODEL_SELECTOR }
        }
        return yield* selectWithModel(model, request, system).pipe(
          Effect.catchTag("ModelError", (error) =>
            Effect.as(
              Effect.annotateCurrentSpan({ "selector.degraded": error.kind }),
              degradeToOffline(request, error)
            ))
        )
      })
    })
  })

export const make = makeWith()

/** The LLM selector over the `Model` in context, default prompt variant. */
export const layer: Layer.Layer<Selector, never, Model> = Layer.effect(
  Selector,
  // the default variant exists (tested), so this cannot fail
  Effect.orDie(make)
)

export const layerWith = (options: ModelSelectorOptions): Layer.Layer<Selector, UnknownPromptVariantError, Model> =>
  Layer.effect(Selector, makeWith(options))

/**
 * Which selector to run: the model, the offline one, or the model when a key is configured (`auto`). The
 * `…-if-allowed` choices are for programs the user did not run by hand (a hook, the MCP server): `auto` or
 * `model`, but only while `AutomaticModelCallsAllowed` says so for the call, else offline.
 */
export type SelectorChoice = "model" | "offline" | "auto" | "auto-if-allowed" | "model-if-allowed"

/** The choices a person picks from (`--selector`); the `…-if-allowed` ones are for hooks and the MCP server. */
export const selectorChoices: ReadonlyArray<SelectorChoice> = ["model", "offline", "auto"]

/**
 * Whether the program running now may call a model on its own (docs/configuration.md, `automaticModelCalls`):
 * a hook or the MCP server sets it around each recall from the project's switch (`MemoryLocation`). The
 * `…-if-allowed` selectors read it per call; unset, it is `false`, so a program that forgets it stays offline.
 */
export const AutomaticModelCallsAllowed = Context.Reference<boolean>(
  "@memdir/core/ModelSelector/AutomaticModelCallsAllowed",
  { defaultValue: () => false }
)

/** `inner` while `AutomaticModelCallsAllowed` is on for the call, else the offline selector. */
const gated = (inner: "auto" | "model"): Layer.Layer<Selector, never, Model> =>
  Layer.effect(
    Selector,
    Effect.gen(function*() {
      const withModel = yield* Effect.provide(Selector, layerFor(inner))
      const offline = yield* Effect.provide(Selector, OfflineSelector.layer)
      return Selector.of({
        select: (request) =>
          Effect.flatMap(
            AutomaticModelCallsAllowed,
            (allowed) => allowed ? withModel.select(request) : offline.select(request)
          )
      })
    })
  )

/**
 * The selector for a choice. `auto` (the CLI's default) is the model when the `Model` in context is available
 * (a key is configured), else offline; `model` without a key degrades every turn to offline and says so.
 */
export const layerFor = (choice: SelectorChoice): Layer.Layer<Selector, never, Model> =>
  choice === "offline" ?
    OfflineSelector.layer :
    choice === "auto-if-allowed" ?
    gated("auto") :
    choice === "model-if-allowed" ?
    gated("model") :
    Layer.unwrap(
      Effect.map(Model, (model) => choice === "auto" && !model.available ? OfflineSelector.layer : layer)
    )
