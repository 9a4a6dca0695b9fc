/**
 * The recall program (docs/architecture.md#how-a-recall-flows): for one user message, find the few memories that will
 * clearly help, read them, and hand them over with their age, inside per-file and per-session byte limits.
 *
 * `RecallSession` holds one agent session's state: what it already surfaced (never surfaced twice), the bytes
 * it surfaced so far (60 KiB budget), and the telemetry of every recall. `layer` builds a fresh session; its
 * scope is the session (background prefetches are interrupted when it closes).
 *
 * Steps of a recall: skip trivial prompts (one word, empty, "ignore memory") without scanning → scan headers
 * (every memory, minus already surfaced / already read; their whole bodies from `TermCache` when provided) → select → drop already surfaced again → read each
 * selected file, capped at 200 lines / 4 KiB of body with a note on how to read the rest → age and caveat →
 * commit: apply the session budget, remember what was surfaced, record telemetry.
 *
 * Team memory (docs/team-memory.md): with `team: true` the scan covers `team/` too (each result says its `scope`), and
 * team files are read only through `TeamGuard` (no symlinks, no FIFOs, nothing oversized); without it `team/` is
 * skipped entirely.
 *
 * `content` is the memory's BODY: the frontmatter is stripped, because its fields are already given as
 * `name`, `type` and `description`, and repeating them would spend the budget twice.
 *
 * Prefetch computes a recall in the background and commits it only when the caller takes it (`poll` or
 * `consume` after it finished, or `await`). A prefetch that is cancelled, or still running when consumed,
 * is discarded: nothing is marked surfaced and no budget is spent, so the same memories can surface on a
 * later turn — the model never saw them.
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { MemoryIoError } from "./Errors.js"
import { MemoryNotFoundError, PathTraversalError } from "./Errors.js"
import { FRONTMATTER_MAX_BYTES, parseMemoryFile } from "./Frontmatter.js"
import { isInside } from "./internal/containment/inside.js"
import { countWords } from "./internal/text/analysis.js"
import type { MemoryHeader } from "./Memory.js"
import { MemoryKind, MemoryScope, scopeOf, TEAM_DIR } from "./Memory.js"
import { writtenAtOf } from "./MemoryAge.js"
import { type LinkResolver, linkResolver, resolveLinks } from "./MemoryLinks.js"
import { MemoryStore } from "./MemoryStore.js"
import { Scanner } from "./Scanner.js"
import * as ScannerModule from "./Scanner.js"
import { effectiveMax, explainSelection, type SelectionExplanation, Selector } from "./Selector.js"
import * as SelectorModule from "./Selector.js"
import type { SelectorScript } from "./Selector.js"
import { Staleness } from "./Staleness.js"
import * as StalenessModule from "./Staleness.js"
import { TermCache } from "./TermCache.js"

/** Reference limits (docs/architecture.md#how-a-recall-flows). */
export const RECALL_MAX_LINES_PER_MEMORY = 200
export const RECALL_MAX_BYTES_PER_MEMORY = 4096
export const RECALL_SESSION_BUDGET_BYTES = 60 * 1024

export interface RecallOptions {
  /**
   * Candidates offered to the selector, newest first. Default: every memory (the reference offers its 200 newest,
   * so a relevant memory not touched for a while was never found); the model selector's manifest keeps to its own
   * budget (`ModelSelector.MANIFEST_MAX_LINES`).
   */
  readonly candidateLimit: number | undefined
  readonly maxLinesPerMemory: number
  readonly maxBytesPerMemory: number
  /** Total bytes of memory content one session may surface. */
  readonly sessionBudgetBytes: number
}

export const defaultRecallOptions: RecallOptions = {
  candidateLimit: undefined,
  maxLinesPerMemory: RECALL_MAX_LINES_PER_MEMORY,
  maxBytesPerMemory: RECALL_MAX_BYTES_PER_MEMORY,
  sessionBudgetBytes: RECALL_SESSION_BUDGET_BYTES
}

export interface RecallInput {
  readonly memoryDir: string
  /** The user's message. */
  readonly query: string
  /** Tools the agent used recently: their usage docs are skipped, their warnings kept. */
  readonly recentTools?: ReadonlyArray<string> | undefined
  /** Memory files the agent already read this session (absolute, or relative to `memoryDir`). */
  readonly alreadyRead?: ReadonlyArray<string> | undefined
  /** At most this many memories (default and ceiling: 5). */
  readonly max?: number | undefined
  /** Team memory is on (a resolved location's `teamEnabled`): recall covers `team/` too. Default false. */
  readonly teamEnabled?: boolean | undefined
  /** @deprecated the same as `teamEnabled` (kept for callers of the first version). */
  readonly team?: boolean | undefined
  /**
   * Also explain the offline selector's decision over the candidates (`RecallResult.explain`: each one's score,
   * matched terms and fields, and why it was kept or cut). The model selector's choice is not explained by it.
   */
  readonly explain?: boolean | undefined
}

export interface RecalledMemory {
  /** Relative to the memory directory (`team/…` for team memories). */
  readonly path: string
  readonly absolutePath: string
  /** `team` for a memory under `team/` (shared, written by other people), else `private`. */
  readonly scope: MemoryScope
  readonly name: string
  readonly type: MemoryKind
  readonly description: string
  readonly mtime: number
  /** When the memory was written (its `modified:`, last commit or mtime: `MemoryAge`), epoch ms: its age counts from it. */
  readonly writtenAt: number
  readonly ageDays: number
  /** `today`, `yesterday`, `N days ago`. */
  readonly age: string
  /** The staleness caveat to put beside the body; null for today/yesterday. */
  readonly caveat: string | null
  /** The body (frontmatter stripped), capped; when `truncated`, it ends with a note saying how to read the rest. */
  readonly content: string
  readonly truncated: boolean
  /**
   * Paths (relative to the memory directory) of the memories its `[[name]]` links name, among the candidates, so an
   * agent can follow them (docs/file-format.md#links). Absent: none.
   */
  readonly links?: ReadonlyArray<string> | undefined
}

/** The staleness caveat a door shows beside a memory (null for today and yesterday). */
export const Caveat = Schema.NullOr(Schema.String).annotate({
  description: "The staleness caveat (null for today/yesterday)"
})

/**
 * One recalled memory as every door shows it (`memdir recall --json`, MCP `memory_recall`, `Operations.recall`).
 * Here, not in Operations, so a recall (a hook on every prompt) loads no other operation's code.
 */
export const RecalledMemoryView = Schema.Struct({
  path: Schema.String,
  scope: MemoryScope,
  name: Schema.String,
  type: MemoryKind,
  description: Schema.String,
  ageDays: Schema.Number,
  age: Schema.String,
  caveat: Caveat,
  content: Schema.String.annotate({ description: "The body (frontmatter stripped), capped at 200 lines / 4 KB" }),
  truncated: Schema.Boolean,
  links: Schema.Array(Schema.String).annotate({
    description: "Memories its [[links]] name, to follow (docs/file-format.md#links)"
  })
})
export type RecalledMemoryView = typeof RecalledMemoryView.Type

/** A recalled memory in the one shape every door shows. */
export const recalledMemoryView = (m: RecalledMemory): RecalledMemoryView => ({
  path: m.path,
  scope: m.scope,
  name: m.name,
  type: m.type,
  description: m.description,
  ageDays: m.ageDays,
  age: m.age,
  caveat: m.caveat,
  content: m.content,
  truncated: m.truncated,
  links: m.links ?? []
})

/** Why a recall did not look at memory at all. */
export type RecallSkipReason = "empty-prompt" | "one-word-prompt" | "ignore-memory" | "budget-exhausted"

/** A selected memory that could not be read (deleted or broken since the scan). Reported, not fatal. */
export interface UnreadableMemory {
  readonly path: string
  readonly detail: string
}

/** One event per recall, also when nothing was selected (0/150 is a precision signal, 0/3 a coverage one). */
export interface RecallTelemetry {
  /** Clock time when the recall started, epoch ms. */
  readonly at: number
  readonly durationMs: number
  readonly source: "recall" | "prefetch"
  /** `delivered`: handed to the caller; `skipped`: see `skipped`; `discarded`: a prefetch nobody took. */
  readonly outcome: "delivered" | "skipped" | "discarded"
  readonly memoryDir: string
  /** Length of the query, not its text (telemetry must not leak prompts). */
  readonly queryChars: number
  readonly candidates: number
  readonly selected: number
  readonly selectedPaths: ReadonlyArray<string>
  readonly selector: string
  readonly degraded?: string | undefined
  readonly skipped?: RecallSkipReason | undefined
  /** Bytes of content this recall surfaced, and the session total after it. */
  readonly bytes: number
  readonly sessionBytes: number
  readonly droppedForBudget: number
  readonly unreadable: number
}

export interface RecallResult {
  readonly selected: ReadonlyArray<RecalledMemory>
  /** Memories offered to the selector (after dropping what was already surfaced or read). */
  readonly candidates: number
  readonly selector: string
  readonly degraded?: string | undefined
  readonly skipped?: RecallSkipReason | undefined
  /** Selected but not delivered because the session budget ran out (relative paths). */
  readonly droppedForBudget: ReadonlyArray<string>
  readonly unreadable: ReadonlyArray<UnreadableMemory>
  readonly telemetry: RecallTelemetry
  /** With `explain`, the offline selector's decision candidate by candidate (absent when the recall was skipped). */
  readonly explain?: SelectionExplanation | undefined
}

/** A recall running in the background. The user never waits for it. */
export interface PrefetchHandle {
  /** Non-blocking, commits nothing: whether the background recall has finished. */
  readonly isDone: Effect.Effect<boolean>
  /** Non-blocking: None while running (or once discarded); Some when done. The first look commits it. */
  readonly poll: Effect.Effect<Option.Option<RecallResult>>
  /** Non-blocking: Some when done; otherwise None, and the prefetch is cancelled and its result discarded. */
  readonly consume: Effect.Effect<Option.Option<RecallResult>>
  /** Waits for the result (for one-shot callers such as a CLI); None if it was discarded. */
  readonly await: Effect.Effect<Option.Option<RecallResult>>
  /** Stops the prefetch; nothing is committed. No effect once the result was taken. */
  readonly cancel: Effect.Effect<void>
}

export class RecallSession extends Context.Service<RecallSession, {
  readonly recall: (input: RecallInput) => Effect.Effect<RecallResult>
  readonly prefetch: (input: RecallInput) => Effect.Effect<PrefetchHandle>
  /** Absolute paths this session has surfaced so far. */
  readonly surfaced: Effect.Effect<ReadonlyArray<string>>
  readonly budget: Effect.Effect<
    { readonly usedBytes: number; readonly limitBytes: number; readonly exhausted: boolean }
  >
  /** Every recall's telemetry so far, oldest first. */
  readonly telemetry: Effect.Effect<ReadonlyArray<RecallTelemetry>>
  /**
   * Subscribes now (within the scope) to every later telemetry event; a runtime forwards the stream to its
   * own sink. Events before the subscription are in `telemetry`.
   */
  readonly subscribeTelemetry: Effect.Effect<Stream.Stream<RecallTelemetry>, never, Scope.Scope>
}>()("@memdir/core/RecallSession") {}

// ---------------------------------------------------------------------------------------------------------------
// Pure helpers
// ---------------------------------------------------------------------------------------------------------------

/**
 * A single word ("hi", "continue", "thanks!", "继续") carries no topic to recall for. Words, not whitespace runs:
 * a request in a script without spaces ("帮我看看为什么测试又失败了") is many words (`countWords`).
 */
export const isOneWordPrompt = (query: string): boolean => countWords(query) <= 1

const IGNORE_MEMORY =
  /\b(?:ignore|disregard|don'?t use|do not use|without(?: using)?|skip)\s+(?:the |your |my |all |any )?(?:saved |stored )?memor(?:y|ies)\b/i

/** "ignore memory" and its variants (docs/file-format.md): act as if memory were empty, so recall nothing. */
export const asksToIgnoreMemory = (query: string): boolean => IGNORE_MEMORY.test(query)

export const skipReasonFor = (query: string): RecallSkipReason | undefined => {
  if (query.trim().length === 0) return "empty-prompt"
  if (isOneWordPrompt(query)) return "one-word-prompt"
  if (asksToIgnoreMemory(query)) return "ignore-memory"
  return undefined
}

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()

export interface CappedBody {
  readonly content: string
  readonly truncated: boolean
  /** Bytes of `content` (UTF-8), note included. */
  readonly bytes: number
}

/**
 * Pure: caps a memory body at `maxLines` lines and `maxBytes` UTF-8 bytes (never splitting a character,
 * cutting at a line end when there is one), and appends a note naming the file and the first line not
 * shown. `firstLine` is the file line number where the body starts (after the frontmatter); `moreAfter`
 * says the body continues beyond `body` (only its head was read).
 */
export const capBody = (
  body: string,
  options: {
    readonly absolutePath: string
    readonly firstLine: number
    readonly maxLines: number
    readonly maxBytes: number
    readonly moreAfter?: boolean | undefined
  }
): CappedBody => {
  const lines = body.split("\n")
  let shown = lines.length > options.maxLines ? lines.slice(0, options.maxLines).join("\n") + "\n" : body
  let cutMidLine = false
  const encoded = utf8.encode(shown)
  if (encoded.length > options.maxBytes) {
    let cut = options.maxBytes
    while (cut > 0 && (encoded[cut]! & 0xc0) === 0x80) cut--
    const lastNewline = encoded.lastIndexOf(10, cut - 1)
    if (lastNewline >= 0) {
      cut = lastNewline + 1
    } else {
      cutMidLine = true
    }
    shown = utf8Decoder.decode(encoded.subarray(0, cut))
  }
  const truncated = shown.length < body.length || options.moreAfter === true
  if (!truncated) return { content: body, truncated: false, bytes: utf8.encode(body).length }
  const completeLines = shown.split("\n").length - 1
  const nextLine = options.firstLine + completeLines
  const note = `[memdir: truncated to ${options.maxLines} lines / ${
    Math.round(options.maxBytes / 1024)
  } KB per recalled memory. Read the rest with your file tool: ${options.absolutePath}, lines ${nextLine}+${
    cutMidLine ? ` (line ${nextLine} is cut off above)` : ""
  }.]`
  // a line cut off ends in an ellipsis, so the model does not take its start for all of it
  const visible = cutMidLine ? `${shown}…` : shown
  const content = (visible.endsWith("\n") || visible.length === 0 ? visible : visible + "\n") + "\n" + note
  return { content, truncated: true, bytes: utf8.encode(content).length }
}

/** How a runtime can show one recalled memory to the model: header, age, caveat, body. */
export const renderRecalledMemory = (
  memory: Pick<
    RecalledMemory,
    "path" | "scope" | "type" | "age" | "name" | "description" | "caveat" | "content" | "links"
  >
): string => {
  const scope = memory.scope === "team" ? ", team memory: a teammate's observation" : ""
  const head =
    `Memory ${memory.path} (${memory.type}${scope}, saved ${memory.age}): ${memory.name} — ${memory.description}`
  const caveat = memory.caveat === null ? "" : `\n${memory.caveat}`
  const links = memory.links === undefined || memory.links.length === 0 ?
    "" :
    `\n\nLinked memories (read them if they matter): ${memory.links.join(", ")}`
  return `${head}${caveat}\n\n${memory.content}${links}`
}

// ---------------------------------------------------------------------------------------------------------------
// The session
// ---------------------------------------------------------------------------------------------------------------

interface SessionState {
  /** Absolute paths. */
  readonly surfaced: ReadonlySet<string>
  readonly usedBytes: number
  readonly exhausted: boolean
}

type DeliverableMemory = RecalledMemory & { readonly bytes: number }

/** A recall computed but not yet handed over: nothing in the session changed yet. */
interface PendingRecall {
  readonly input: RecallInput
  readonly source: "recall" | "prefetch"
  readonly startedAt: number
  readonly memoryDir: string
  readonly memories: ReadonlyArray<DeliverableMemory>
  readonly candidates: number
  readonly selector: string
  readonly degraded?: string | undefined
  readonly skipped?: RecallSkipReason | undefined
  readonly unreadable: ReadonlyArray<UnreadableMemory>
  readonly explain?: SelectionExplanation | undefined
}

export const makeWith = (
  options: Partial<RecallOptions> = {}
): Effect.Effect<
  RecallSession["Service"],
  never,
  Scanner | Selector | Staleness | MemoryStore | Path.Path | Scope.Scope
> =>
  Effect.gen(function*() {
    const config: RecallOptions = { ...defaultRecallOptions, ...options }
    const scanner = yield* Scanner
    const selector = yield* Selector
    const staleness = yield* Staleness
    const store = yield* MemoryStore
    const path = yield* Path.Path
    // Whole bodies for the offline selector when a term cache is provided (Memdir.layer does); else the heads.
    const termCache = yield* Effect.serviceOption(TermCache)
    const fibers = yield* FiberSet.make<PendingRecall>()
    const state = yield* Ref.make<SessionState>({ surfaced: new Set(), usedBytes: 0, exhausted: false })
    const history = yield* Ref.make(Chunk.empty<RecallTelemetry>())
    const events = yield* Effect.acquireRelease(PubSub.unbounded<RecallTelemetry>(), PubSub.shutdown)

    /** The file's head, enough for the largest frontmatter plus the capped body; `partial` if there is more. */
    const headBytes = FRONTMATTER_MAX_BYTES + config.maxBytesPerMemory + 4096
    /** Through the one door: containment, team files through the guard, no FIFO or link opened. */
    const readHead = (memoryDir: string, teamEnabled: boolean, memory: MemoryHeader) =>
      Effect.map(store.readHead({ memoryDir, teamEnabled }, memory.path, headBytes), (head) => ({
        // A partial read may end in half a character: drop it (it is past the cap anyway), not the whole last line,
        // which may be the body's only one (a first line longer than the head: its start is shown, cut).
        text: head.truncated ? head.text.replace(/\uFFFD+$/, "") : head.text,
        partial: head.truncated
      }))

    const readMemory = (
      memoryDir: string,
      teamEnabled: boolean,
      memory: MemoryHeader,
      resolve: LinkResolver
    ): Effect.Effect<Result.Result<DeliverableMemory, UnreadableMemory>> =>
      Effect.gen(function*() {
        const scope = scopeOf(memory.path)
        const head = yield* readHead(memoryDir, teamEnabled, memory)
        const parsed = parseMemoryFile(head.text, memory.path)
        const source = head.text.replace(/^\uFEFF/, "")
        // A file offered without a readable header (the scan's `headerless`) is delivered whole.
        if (Result.isFailure(parsed) && memory.headerless !== true) {
          return Result.fail({ path: memory.path, detail: parsed.failure.message })
        }
        const body = Result.isSuccess(parsed) ? parsed.success.body : source
        const firstLine = source.slice(0, source.length - body.length).split("\n").length
        const capped = capBody(body.replace(/\r\n/g, "\n"), {
          absolutePath: memory.absolutePath,
          firstLine,
          maxLines: config.maxLinesPerMemory,
          maxBytes: config.maxBytesPerMemory,
          moreAfter: head.partial
        })
        const age = yield* staleness.age(writtenAtOf(memory))
        const links = resolveLinks(body, resolve, memory.path).linked
        return Result.succeed<DeliverableMemory>({
          path: memory.path,
          absolutePath: memory.absolutePath,
          scope,
          name: memory.name,
          type: memory.type,
          description: memory.description,
          mtime: memory.mtime,
          writtenAt: writtenAtOf(memory),
          ageDays: age.ageDays,
          age: age.age,
          caveat: age.caveat,
          content: capped.content,
          truncated: capped.truncated,
          bytes: capped.bytes,
          ...(links.length === 0 ? {} : { links })
        })
      }).pipe(
        Effect.mapError((error) => new MemoryIoError({ op: "read", path: memory.absolutePath, detail: error.message })),
        // A memory deleted or made unreadable since the scan is reported in the result, never a failed turn.
        Effect.catchTag(
          "MemoryIoError",
          (error) => Effect.succeed(Result.fail({ path: memory.path, detail: error.message }))
        )
      )

    /** Relative form of a path inside `memoryDir`, or undefined if it lies outside. */
    const relativeTo = (memoryDir: string, p: string): string | undefined => {
      const absolute = path.resolve(memoryDir, p)
      return isInside(memoryDir, absolute, { sep: path.sep }) ?
        path.relative(memoryDir, absolute).split(path.sep).join("/") :
        undefined
    }

    /** The selected candidates, each once, not surfaced yet, at most `max`: nothing is built when none was selected. */
    const chosenMemories = (
      memoryDir: string,
      candidates: ReadonlyArray<MemoryHeader>,
      selected: ReadonlyArray<string>,
      max: number | undefined
    ) =>
      Effect.map(Ref.get(state), ({ surfaced }): ReadonlyArray<MemoryHeader> => {
        if (selected.length === 0) return []
        const byPath = new Map(candidates.map((m) => [m.path, m]))
        return [...new Set(selected)]
          .map((p) => byPath.get(p))
          .filter((m): m is MemoryHeader => m !== undefined && !surfaced.has(path.resolve(memoryDir, m.path)))
          .slice(0, effectiveMax(max))
      })

    const compute = (input: RecallInput, source: "recall" | "prefetch") =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const memoryDir = path.resolve(input.memoryDir)
        const teamEnabled = input.teamEnabled === true || input.team === true
        const base = { input, source, startedAt, memoryDir, memories: [], candidates: 0, unreadable: [] }
        const skipped = skipReasonFor(input.query) ??
          ((yield* Ref.get(state)).exhausted ? "budget-exhausted" : undefined)
        if (skipped !== undefined) {
          return { ...base, selector: "none", skipped } satisfies PendingRecall
        }

        const exclude = new Set<string>()
        for (const p of (yield* Ref.get(state)).surfaced) {
          const relative = relativeTo(memoryDir, p)
          if (relative !== undefined) {
            exclude.add(relative)
          }
        }
        for (const p of input.alreadyRead ?? []) {
          const relative = relativeTo(memoryDir, p)
          if (relative !== undefined) {
            exclude.add(relative)
          }
        }
        const scan = yield* scanner.scan(memoryDir, {
          limit: config.candidateLimit,
          exclude,
          skipDirs: teamEnabled ? [] : [TEAM_DIR]
        })
        // Defensive: a scanner that ignores `exclude` must not make us surface a memory twice.
        // Files without a readable header are candidates too, by their file name and first lines.
        const candidates = [...scan.memories, ...(scan.headerless ?? [])].filter((m) => !exclude.has(m.path))
        const bodies = candidates.length === 0 || Option.isNone(termCache) ?
          undefined :
          yield* termCache.value.bodies(memoryDir, candidates)
        const selection = candidates.length === 0
          ? { selected: [], selector: "none" }
          : yield* selector.select({
            query: input.query,
            candidates,
            recentTools: input.recentTools,
            max: effectiveMax(input.max),
            bodies
          })
        const explain = input.explain === true ?
          explainSelection({
            query: input.query,
            candidates,
            recentTools: input.recentTools,
            max: effectiveMax(input.max),
            bodies
          }) :
          undefined
        const chosen = yield* chosenMemories(memoryDir, candidates, selection.selected, input.max)
        // Links are resolved among all candidates, so that table is built only when a memory is read.
        const resolve = chosen.length === 0 ? undefined : linkResolver(candidates)
        const read = resolve === undefined ? [] : yield* Effect.forEach(
          chosen,
          (m) => readMemory(memoryDir, teamEnabled, m, resolve),
          { concurrency: 5 }
        )
        return {
          ...base,
          candidates: candidates.length,
          selector: selection.selector,
          degraded: "degraded" in selection ? selection.degraded : undefined,
          memories: read.filter(Result.isSuccess).map((r) => r.success),
          unreadable: read.filter(Result.isFailure).map((r) => r.failure),
          explain
        } satisfies PendingRecall
      })

    const record = (event: RecallTelemetry) =>
      Effect.gen(function*() {
        yield* Ref.update(history, Chunk.append(event))
        yield* PubSub.publish(events, event)
        yield* Effect.annotateCurrentSpan({
          "recall.candidates": event.candidates,
          "recall.selected": event.selected,
          "recall.selector": event.selector,
          "recall.outcome": event.outcome
        })
        yield* Effect.logDebug("memdir recall").pipe(
          Effect.annotateLogs({
            candidates: event.candidates,
            selected: event.selected,
            selector: event.selector,
            outcome: event.outcome,
            ...(event.skipped === undefined ? {} : { skipped: event.skipped })
          })
        )
      })

    /** Hands a computed recall over: applies the budget, remembers what was surfaced, records telemetry. */
    const commit = (pending: PendingRecall) =>
      Effect.gen(function*() {
        const committed = yield* Ref.modify(state, (current) => {
          const surfaced = new Set(current.surfaced)
          let usedBytes = current.usedBytes
          let exhausted = current.exhausted
          const delivered: Array<RecalledMemory> = []
          const droppedForBudget: Array<string> = []
          let bytes = 0
          for (const { bytes: size, ...memory } of pending.memories) {
            const key = path.resolve(pending.memoryDir, memory.path)
            if (surfaced.has(key)) continue // surfaced by another recall while this one was running
            if (exhausted || usedBytes + size > config.sessionBudgetBytes) {
              exhausted = true
              droppedForBudget.push(memory.path)
              continue
            }
            surfaced.add(key)
            usedBytes += size
            bytes += size
            delivered.push(memory)
          }
          return [{ delivered, droppedForBudget, bytes, usedBytes }, { surfaced, usedBytes, exhausted }] as const
        })
        const now = yield* Clock.currentTimeMillis
        const telemetry: RecallTelemetry = {
          at: pending.startedAt,
          durationMs: now - pending.startedAt,
          source: pending.source,
          outcome: pending.skipped === undefined ? "delivered" : "skipped",
          memoryDir: pending.memoryDir,
          queryChars: pending.input.query.length,
          candidates: pending.candidates,
          selected: committed.delivered.length,
          selectedPaths: committed.delivered.map((m) => m.path),
          selector: pending.selector,
          degraded: pending.degraded,
          skipped: pending.skipped,
          bytes: committed.bytes,
          sessionBytes: committed.usedBytes,
          droppedForBudget: committed.droppedForBudget.length,
          unreadable: pending.unreadable.length
        }
        yield* record(telemetry)
        return {
          selected: committed.delivered,
          candidates: pending.candidates,
          selector: pending.selector,
          degraded: pending.degraded,
          skipped: pending.skipped,
          droppedForBudget: committed.droppedForBudget,
          unreadable: pending.unreadable,
          telemetry,
          ...(pending.explain === undefined ? {} : { explain: pending.explain })
        } satisfies RecallResult
      })

    const discard = (input: RecallInput) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const { usedBytes } = yield* Ref.get(state)
        yield* record({
          at: now,
          durationMs: 0,
          source: "prefetch",
          outcome: "discarded",
          memoryDir: path.resolve(input.memoryDir),
          queryChars: input.query.length,
          candidates: 0,
          selected: 0,
          selectedPaths: [],
          selector: "none",
          bytes: 0,
          sessionBytes: usedBytes,
          droppedForBudget: 0,
          unreadable: 0
        })
      })

    const recall = Effect.fn("RecallSession.recall")(function*(input: RecallInput) {
      return yield* commit(yield* compute(input, "recall"))
    })

    const prefetch = Effect.fn("RecallSession.prefetch")(function*(input: RecallInput) {
      const fiber = yield* FiberSet.run(fibers, compute(input, "prefetch"))
      // Commit exactly once, whoever looks first; later looks get the same result.
      const take = yield* Effect.cached(Effect.flatMap(Fiber.join(fiber), commit))
      const discarded = yield* Ref.make(false)
      const taken = yield* Ref.make(false)
      const deliver = Effect.andThen(Ref.set(taken, true), Effect.map(take, Option.some))
      const drop = Effect.gen(function*() {
        if (yield* Ref.getAndSet(discarded, true)) return
        // Interrupt without waiting for the fiber's finalizers (`Fiber.interrupt` would wait for them).
        yield* Effect.sync(() => fiber.interruptUnsafe())
        yield* discard(input)
      })
      const lookWhenDone = (whenRunning: Effect.Effect<void>) =>
        Effect.gen(function*() {
          if (yield* Ref.get(discarded)) return Option.none<RecallResult>()
          const exit = fiber.pollUnsafe()
          if (exit === undefined) {
            yield* whenRunning
            return Option.none<RecallResult>()
          }
          if (Exit.hasInterrupts(exit)) return Option.none<RecallResult>()
          return yield* deliver
        })
      const handle: PrefetchHandle = {
        isDone: Effect.sync(() => fiber.pollUnsafe() !== undefined),
        poll: lookWhenDone(Effect.void),
        consume: lookWhenDone(drop),
        await: Effect.gen(function*() {
          if (yield* Ref.get(discarded)) return Option.none<RecallResult>()
          const exit = yield* Fiber.await(fiber)
          if (Exit.hasInterrupts(exit)) return Option.none<RecallResult>()
          return yield* deliver
        }),
        cancel: Effect.gen(function*() {
          if (yield* Ref.get(taken)) return
          yield* drop
        })
      }
      return handle
    })

    return RecallSession.of({
      recall,
      prefetch,
      surfaced: Effect.map(Ref.get(state), (s) => [...s.surfaced]),
      budget: Effect.map(Ref.get(state), (s) => ({
        usedBytes: s.usedBytes,
        limitBytes: config.sessionBudgetBytes,
        exhausted: s.exhausted
      })),
      telemetry: Effect.map(Ref.get(history), Chunk.toReadonlyArray),
      subscribeTelemetry: Effect.map(PubSub.subscribe(events), Stream.fromSubscription)
    })
  })

export const make = makeWith()

/** A fresh session: build it once per agent session. */
export const layer: Layer.Layer<
  RecallSession,
  never,
  Scanner | Selector | Staleness | MemoryStore | Path.Path
> = Layer.effect(RecallSession, make)

export const layerWith = (options: Partial<RecallOptions>) => Layer.effect(RecallSession, makeWith(options))

/** One in-memory memory file: full content (frontmatter + body) and mtime in epoch ms. */
export interface RecallTestFile {
  readonly content: string
  readonly mtime: number
}

/**
 * A deterministic session over in-memory files (no disk): the in-memory scanner, the offline selector (or a
 * scripted one), Staleness on `Clock` (drive it with `TestClock`), and a file system that serves the same
 * files by path. Whatever `memoryDir` a recall names, it sees these files.
 */
export const layerTest = (
  files: Readonly<Record<string, RecallTestFile>>,
  options: { readonly script?: SelectorScript | undefined; readonly recall?: Partial<RecallOptions> } = {}
): Layer.Layer<RecallSession, never, Path.Path> => {
  const bytesOf = (p: string): Uint8Array | undefined => {
    const normalized = p.replace(/\\/g, "/")
    const key = Object.keys(files).find((k) => normalized === k || normalized.endsWith("/" + k))
    return key === undefined ? undefined : utf8.encode(files[key]!.content)
  }
  // A store that serves the same files by key (only `readHead` is used by recall; the rest is not offered).
  const notOffered = (what: string) => Effect.die(new Error(`Recall.layerTest: MemoryStore.${what} is not offered`))
  const store = Layer.succeed(
    MemoryStore,
    MemoryStore.of({
      readHead: (root, key, maxBytes) => {
        const bytes = bytesOf(key)
        if (bytes === undefined) return Effect.fail(new MemoryNotFoundError({ path: key }))
        if (key.startsWith(`${TEAM_DIR}/`) && root.teamEnabled !== true) {
          return Effect.fail(new PathTraversalError({ key, reason: "unverifiable", detail: "team memory is off" }))
        }
        return Effect.succeed({
          key,
          scope: scopeOf(key),
          path: key,
          text: utf8Decoder.decode(bytes.subarray(0, maxBytes)),
          mtimeMs: 0,
          truncated: bytes.length > maxBytes
        })
      },
      read: () => notOffered("read"),
      write: () => notOffered("write"),
      remove: () => notOffered("remove"),
      rename: () => notOffered("rename"),
      list: () => notOffered("list"),
      listKeys: () => notOffered("listKeys"),
      locate: () => notOffered("locate")
    })
  )
  return layerWith(options.recall ?? {}).pipe(
    Layer.provide(Layer.mergeAll(
      ScannerModule.layerTest(files),
      options.script === undefined ? SelectorModule.layer : SelectorModule.layerTest(options.script),
      StalenessModule.layer,
      store
    ))
  )
}
