/**
 * Record and replay: every model exchange of a run, kept in a cassette file keyed by a stable hash of the request,
 * so a suite can be re-run (and gated in CI) with no key and no network, and fails clearly on a request it has no
 * answer for.
 *
 * Both are `Model` layers: `layerRecord` wraps the live model and keeps what it answered; `layerReplay` answers
 * from the file. The hash covers what decides an answer: the model id, the system prompt, the messages, the
 * tools, the tool choice, max tokens and temperature, as canonical JSON (sorted keys). Paths of the trial's
 * scratch directory are replaced by `<sandbox>` before hashing and in what is stored, and put back on replay, so a
 * cassette recorded on one machine replays on another.
 *
 * Identical requests are expected (the same scenario's first turn in trial 1 and trial 2): entries are also keyed
 * by the trial (`suite/variant/scenario#n`) and by occurrence within the trial, so every trial replays its own
 * answers in order.
 *
 * Provenance is part of the file: the endpoint, whether it is the real API or a local server, the model ids
 * the responses named, the date. A cassette recorded against the local Messages API server says so, and the
 * report says the numbers did not come from a model.
 */
import { ModelError } from "@memdir/core/Errors"
import { Model, type ModelRequest, type ModelResponse, type ModelRole, structuredWith } from "@memdir/core/Model"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { CassetteError, CassetteMissError } from "./Errors.js"

export const CASSETTE_FORMAT = "memdir-eval-cassette/1"

/** The placeholder for the trial's scratch root in hashes and stored exchanges. */
export const SANDBOX_PLACEHOLDER = "<sandbox>"

/** Which trial the current fiber is running, and its scratch root (set by the runner around each trial). */
export interface TrialContext {
  readonly trial: string
  readonly sandboxRoot?: string | undefined
}

export const currentTrial: Context.Reference<TrialContext> = Context.Reference<TrialContext>(
  "@memdir/evals/currentTrial",
  { defaultValue: () => ({ trial: "" }) }
)

/** Run `effect` as trial `context` (model calls inside are keyed by it). */
export const inTrial = (context: TrialContext) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, currentTrial, context)

// ---------------------------------------------------------------------------------------------------------------
// The file
// ---------------------------------------------------------------------------------------------------------------

/** Where the answers came from. `local-server` and `other-endpoint` never count as a real model. */
export const CassetteSource = Schema.Literals(["anthropic-api", "local-server", "other-endpoint"])
export type CassetteSource = typeof CassetteSource.Type

export const CassetteMeta = Schema.Struct({
  source: CassetteSource,
  endpoint: Schema.String,
  /** True only for `anthropic-api`. */
  realModel: Schema.Boolean,
  /** The model id requested per role (what replay asks for, and hashes with). */
  requestedModels: Schema.Record(Schema.String, Schema.String),
  /** Model ids as the responses named them (a local server may echo the requested id: see `source`). */
  respondedModels: Schema.Array(Schema.String),
  recordedAt: Schema.String,
  suite: Schema.String,
  variants: Schema.Array(Schema.String),
  trials: Schema.Number,
  /** Who answered, in words ("scripted responder on the local Messages API server: not a model"). */
  note: Schema.String,
  /** Pass or fail of every trial when it was recorded: a replay that disagrees has changed the measurement. */
  outcomes: Schema.optional(Schema.Record(Schema.String, Schema.Boolean))
})
export type CassetteMeta = typeof CassetteMeta.Type

export const StoredResponse = Schema.Struct({
  model: Schema.String,
  content: Schema.Array(Schema.Unknown),
  stopReason: Schema.NullOr(Schema.String),
  usage: Schema.Struct({
    inputTokens: Schema.Number,
    outputTokens: Schema.Number,
    cacheReadInputTokens: Schema.Number,
    cacheCreationInputTokens: Schema.Number
  }),
  latencyMs: Schema.Number
})

export const CassetteEntry = Schema.Struct({
  trial: Schema.String,
  hash: Schema.String,
  /** 0 for the first request with this hash in this trial, 1 for the second… */
  occurrence: Schema.Number,
  role: Schema.String,
  /** The hashed request (sandbox paths replaced, shared parts as blob refs): what a miss is compared against. */
  request: Schema.Unknown,
  response: StoredResponse
})
export type CassetteEntry = typeof CassetteEntry.Type

export const CassetteFile = Schema.Struct({
  format: Schema.Literal(CASSETTE_FORMAT),
  meta: CassetteMeta,
  /** Large request parts shared by many entries (system prompts, tool lists), by content hash. */
  blobs: Schema.Record(Schema.String, Schema.Unknown).pipe(Schema.withDecodingDefaultType(Effect.succeed({}))),
  entries: Schema.Array(CassetteEntry)
})
export type CassetteFile = typeof CassetteFile.Type

// ---------------------------------------------------------------------------------------------------------------
// Hashing
// ---------------------------------------------------------------------------------------------------------------

/** JSON with object keys sorted at every level and `undefined` fields dropped: equal requests, equal text. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v
    const sorted: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) {
      const field = (v as Record<string, unknown>)[k]
      if (field !== undefined) sorted[k] = field
    }
    return sorted
  })

const replaceAll = (text: string, from: string, to: string): string => from === "" ? text : text.split(from).join(to)

/** The parts of a request that decide the answer, with the sandbox root replaced. */
export const hashedRequest = (request: ModelRequest, model: string, sandboxRoot?: string | undefined): unknown => {
  const json = canonicalJson({
    model,
    role: request.role,
    system: request.system,
    messages: request.messages,
    tools: request.tools,
    toolChoice: request.toolChoice,
    maxTokens: request.maxTokens,
    temperature: request.temperature
  })
  return JSON.parse(sandboxRoot === undefined ? json : replaceAll(json, sandboxRoot, SANDBOX_PLACEHOLDER))
}

export const requestHash = (hashed: unknown): string => createHash("sha256").update(canonicalJson(hashed)).digest("hex")

/** Request fields stored once per distinct value: every turn of every trial of a variant repeats them. */
const SHARED_FIELDS = ["system", "tools"] as const

/** Longer strings inside messages (a selector's manifest, a dream's orient message) are stored once too. */
const SHARED_STRING_CHARS = 1024

const blobKey = (value: unknown): string => createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 16)

/**
 * A hashed request with its system prompt, its tools and every long string replaced by `{ "$blob": key }`, and
 * the blobs. Only the storage changes: hashes are computed on the full request.
 */
export const compactRequest = (
  hashed: unknown
): { readonly request: unknown; readonly blobs: Record<string, unknown> } => {
  const blobs: Record<string, unknown> = {}
  const ref = (value: unknown) => {
    const key = blobKey(value)
    blobs[key] = value
    return { $blob: key }
  }
  const longStrings = (value: unknown): unknown =>
    typeof value === "string" ?
      (value.length >= SHARED_STRING_CHARS ? ref(value) : value) :
      Array.isArray(value) ?
      value.map(longStrings) :
      typeof value === "object" && value !== null ?
      Object.fromEntries(Object.entries(value).map(([k, v]) => [k, longStrings(v)])) :
      value
  if (typeof hashed !== "object" || hashed === null) return { request: hashed, blobs }
  const request: Record<string, unknown> = { ...(hashed as Record<string, unknown>) }
  for (const field of SHARED_FIELDS) {
    if (request[field] !== undefined) request[field] = ref(request[field])
  }
  request["messages"] = longStrings(request["messages"])
  return { request, blobs }
}

/** One line saying what a request was, for a miss: role, model, last user text. */
export const summarizeRequest = (hashed: any): string => {
  const messages: ReadonlyArray<any> = Array.isArray(hashed?.messages) ? hashed.messages : []
  const last = messages[messages.length - 1]
  const text = typeof last?.content === "string" ?
    last.content :
    Array.isArray(last?.content) ?
    last.content.map((b: any) => b?.text ?? (b?.type === "tool_result" ? "[tool result]" : `[${b?.type}]`)).join(" ") :
    ""
  const short = text.replace(/\s+/g, " ").trim()
  return `${hashed?.role} model ${hashed?.model}, ${messages.length} message(s), last: ${
    JSON.stringify(short.length > 80 ? short.slice(0, 77) + "…" : short)
  }`
}

/** The first place two JSON values differ (`messages[2].content[0].text`), for a miss that has a near entry. */
export const firstDifference = (a: unknown, b: unknown, at = ""): string | undefined => {
  if (a === b) return undefined
  if (
    typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)
  ) {
    return at === "" ? "(the whole request)" : at
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`)
      if (d !== undefined) return d
    }
    return undefined
  }
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()
  for (const k of keys) {
    const d = firstDifference((a as any)[k], (b as any)[k], at === "" ? k : `${at}.${k}`)
    if (d !== undefined) return d
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Endpoint provenance
// ---------------------------------------------------------------------------------------------------------------

export const DEFAULT_ENDPOINT = "https://api.anthropic.com"

/** Loopback is a local server; Anthropic's own host is the real API; anything else is unverified. */
export const sourceOfEndpoint = (endpoint: string): CassetteSource => {
  let host = ""
  try {
    host = new URL(endpoint).hostname.replace(/^\[|\]$/g, "")
  } catch {
    return "other-endpoint"
  }
  if (host === "localhost" || host === "::1" || /^127\./.test(host)) return "local-server"
  return host === "api.anthropic.com" ? "anthropic-api" : "other-endpoint"
}

// ---------------------------------------------------------------------------------------------------------------
// The recorder / player service
// ---------------------------------------------------------------------------------------------------------------

export interface CassetteMiss {
  readonly trial: string
  readonly hash: string
  readonly summary: string
  /** Where the request first differs from the recorded one at the same place in the trial, if any. */
  readonly differsAt?: string | undefined
}

/** A request the live model did not answer while recording (its error after retries). */
export interface RecordFailure {
  readonly trial: string
  readonly error: ModelError
}

export class Cassette extends Context.Service<Cassette, {
  readonly mode: "record" | "replay"
  /** Exchanges recorded so far (record) or loaded (replay). */
  readonly entries: Effect.Effect<ReadonlyArray<CassetteEntry>>
  /** Requests replay had no answer for (always empty when recording). */
  readonly misses: Effect.Effect<ReadonlyArray<CassetteMiss>>
  /**
   * Requests the live model failed while recording (always empty when replaying), even those the caller got
   * over (a grader's failure is a failed score): a recording with any is incomplete and replaces no cassette.
   */
  readonly failures: Effect.Effect<ReadonlyArray<RecordFailure>>
  /** Replay: the loaded file's provenance. */
  readonly meta?: CassetteMeta | undefined
  /** Replay: the file it answers from. */
  readonly path?: string | undefined
}>()("@memdir/evals/Cassette") {}

const toStored = (response: ModelResponse, sandboxRoot: string | undefined): typeof StoredResponse.Type => {
  const stored = {
    model: response.model,
    content: response.content as ReadonlyArray<unknown>,
    stopReason: response.stopReason,
    usage: response.usage,
    latencyMs: response.latencyMs
  }
  return sandboxRoot === undefined ?
    stored :
    JSON.parse(replaceAll(JSON.stringify(stored), sandboxRoot, SANDBOX_PLACEHOLDER))
}

const fromStored = (stored: typeof StoredResponse.Type, sandboxRoot: string | undefined): ModelResponse => {
  const restored = sandboxRoot === undefined ?
    stored :
    JSON.parse(replaceAll(JSON.stringify(stored), SANDBOX_PLACEHOLDER, sandboxRoot))
  return { ...restored, attempts: 1 } as ModelResponse
}

const entryKey = (trial: string, hash: string, occurrence: number) => `${trial}\u0000${hash}\u0000${occurrence}`

/** Counts occurrences of (trial, hash) as requests arrive. */
const occurrenceCounter = Effect.map(
  Ref.make(new Map<string, number>()),
  (counts) => (trial: string, hash: string) =>
    Ref.modify(counts, (map) => {
      const key = `${trial}\u0000${hash}`
      const n = map.get(key) ?? 0
      const next = new Map(map)
      next.set(key, n + 1)
      return [n, next] as const
    })
)

/** Wraps the `Model` in context: every exchange is answered live and kept. */
export const layerRecord: Layer.Layer<Model | Cassette, never, Model> = Layer.effectContext(
  Effect.gen(function*() {
    const live = yield* Model
    const entries = yield* Ref.make<ReadonlyArray<CassetteEntry>>([])
    const failures = yield* Ref.make<ReadonlyArray<RecordFailure>>([])
    const nextOccurrence = yield* occurrenceCounter
    const complete = Effect.fn("Cassette.record")(function*(request: ModelRequest) {
      const { sandboxRoot, trial } = yield* currentTrial
      const model = live.modelFor(request.role)
      const hashed = hashedRequest(request, model, sandboxRoot)
      const hash = requestHash(hashed)
      const occurrence = yield* nextOccurrence(trial, hash)
      const response = yield* live.complete(request).pipe(
        Effect.tapError((error) => Ref.update(failures, (all) => [...all, { trial, error }]))
      )
      yield* Ref.update(entries, (all) => [...all, {
        trial,
        hash,
        occurrence,
        role: request.role,
        request: hashed,
        response: toStored(response, sandboxRoot)
      }])
      return response
    })
    const model = Model.of({
      available: live.available,
      modelFor: live.modelFor,
      complete,
      structured: structuredWith(complete, live.modelFor)
    })
    return Context.make(Model, model).pipe(
      Context.add(Cassette, {
        mode: "record",
        entries: Ref.get(entries),
        misses: Effect.succeed([]),
        failures: Ref.get(failures)
      })
    )
  })
)

/**
 * Answers from a cassette. A request it has no answer for fails the call (`ModelError` "not-configured": in
 * replay there is no model for it) and is kept in `misses`, which the runner turns into a `CassetteMissError`:
 * code that falls back on a model error (the selector) cannot hide a miss.
 */
export const layerReplay = (file: CassetteFile, path: string): Layer.Layer<Model | Cassette> =>
  Layer.effectContext(Effect.gen(function*() {
    const byKey = new Map(file.entries.map((e) => [entryKey(e.trial, e.hash, e.occurrence), e]))
    const misses = yield* Ref.make<ReadonlyArray<CassetteMiss>>([])
    const nextOccurrence = yield* occurrenceCounter
    const requestIndex = yield* Ref.make(new Map<string, number>())
    const modelFor = (role: ModelRole): string => file.meta.requestedModels[role] ?? "unrecorded-model"
    const complete = Effect.fn("Cassette.replay")(function*(request: ModelRequest) {
      const { sandboxRoot, trial } = yield* currentTrial
      const hashed = hashedRequest(request, modelFor(request.role), sandboxRoot)
      const hash = requestHash(hashed)
      const occurrence = yield* nextOccurrence(trial, hash)
      // The n-th request of this trial, to compare a miss with what was recorded at the same point.
      const index = yield* Ref.modify(requestIndex, (map) => {
        const n = map.get(trial) ?? 0
        return [n, new Map(map).set(trial, n + 1)] as const
      })
      const entry = byKey.get(entryKey(trial, hash, occurrence))
      if (entry === undefined) {
        const near = file.entries.filter((e) => e.trial === trial)[index]
        const differsAt = near === undefined ?
          undefined :
          firstDifference(near.request, compactRequest(hashed).request)?.replace(/\.\$blob$/, "")
        const miss: CassetteMiss = {
          trial,
          hash,
          summary: summarizeRequest(hashed),
          ...(differsAt === undefined ? {} : { differsAt })
        }
        yield* Ref.update(misses, (all) => [...all, miss])
        return yield* new ModelError({
          kind: "not-configured",
          role: request.role,
          model: modelFor(request.role),
          detail: `replay: ${path} has no answer for this request of ${trial || "this run"} (${hash.slice(0, 12)})` +
            (miss.differsAt === undefined ? "" : `; it differs from the recorded one at ${miss.differsAt}`)
        })
      }
      return fromStored(entry.response, sandboxRoot)
    })
    const model = Model.of({ available: true, modelFor, complete, structured: structuredWith(complete, modelFor) })
    return Context.make(Model, model).pipe(
      Context.add(Cassette, {
        mode: "replay",
        entries: Effect.succeed(file.entries),
        misses: Ref.get(misses),
        failures: Effect.succeed([]),
        meta: file.meta,
        path
      })
    )
  }))

/** The first miss as the typed error the run ends with. */
export const missError = (path: string, miss: CassetteMiss): CassetteMissError =>
  new CassetteMissError({
    cassette: path,
    trial: miss.trial,
    hash: miss.hash,
    summary: miss.summary + (miss.differsAt === undefined ? "" : `; differs from the recording at ${miss.differsAt}`)
  })

// ---------------------------------------------------------------------------------------------------------------
// Reading and writing
// ---------------------------------------------------------------------------------------------------------------

export const readCassette = Effect.fn("Cassette.read")(function*(path: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(path).pipe(
    Effect.mapError((error) => new CassetteError({ path, detail: `cannot read it: ${error.message}` }))
  )
  const json = yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => new CassetteError({ path, detail: `not JSON: ${(error as Error).message}` })
  })
  return yield* Schema.decodeUnknownEffect(CassetteFile)(json).pipe(
    Effect.mapError((error) =>
      new CassetteError({
        path,
        detail: `not a ${CASSETTE_FORMAT} file: ${error.message}`
      })
    )
  )
})

/**
 * Pure: whether two cassettes hold the same requests (trial, request hash, occurrence), whatever the order, the
 * date, the port of the local server or the latencies: re-recording such a cassette would change only noise.
 */
export const sameRequests = (a: Pick<CassetteFile, "entries">, b: Pick<CassetteFile, "entries">): boolean => {
  const keys = (file: Pick<CassetteFile, "entries">) =>
    file.entries.map((e) => `${e.trial}\u0000${e.hash}\u0000${e.occurrence}`).sort()
  const [x, y] = [keys(a), keys(b)]
  return x.length === y.length && x.every((key, i) => key === y[i])
}

/**
 * Writes `text` to a temp file beside `path`, then renames it over `path`: a reader (or a run interrupted while
 * writing) sees the old file or the new one, never a torn one. Not interruptible: once begun, it completes.
 */
export const replaceFile = Effect.fn("Cassette.replaceFile")(function*(path: string, text: string) {
  const fs = yield* FileSystem.FileSystem
  const temp = `${path}.${process.pid}.tmp`
  const cannot = (what: string) => (error: { readonly message: string }) =>
    new CassetteError({ path, detail: `cannot ${what}: ${error.message}` })
  yield* fs.writeFileString(temp, text).pipe(
    Effect.mapError(cannot(`write ${temp}`)),
    Effect.andThen(fs.rename(temp, path).pipe(Effect.mapError(cannot(`rename ${temp} over it`)))),
    // A failed write or rename leaves no temp file behind (when even that fails, the error above still says which).
    Effect.tapError(() => Effect.exit(fs.remove(temp, { force: true }))),
    Effect.uninterruptible
  )
})

/** Entries sorted by trial, then request order within the trial: stable diffs when a cassette is re-recorded. */
export const writeCassette = Effect.fn("Cassette.write")(function*(
  path: string,
  meta: CassetteMeta,
  entries: ReadonlyArray<CassetteEntry>
) {
  const order = new Map(entries.map((e, i) => [e, i]))
  const sorted = [...entries].sort((a, b) =>
    a.trial < b.trial ? -1 : a.trial > b.trial ? 1 : order.get(a)! - order.get(b)!
  )
  const blobs: Record<string, unknown> = {}
  const compacted = sorted.map((entry) => {
    const compact = compactRequest(entry.request)
    Object.assign(blobs, compact.blobs)
    return { ...entry, request: compact.request }
  })
  const file: CassetteFile = { format: CASSETTE_FORMAT, meta, blobs, entries: compacted }
  // One entry per line: small diffs when a cassette is re-recorded, no indentation to pay for.
  const text = `{"format":${JSON.stringify(file.format)},\n"meta":${JSON.stringify(file.meta)},\n"blobs":${
    JSON.stringify(file.blobs, null, 1)
  },\n"entries":[\n${file.entries.map((e) => JSON.stringify(e)).join(",\n")}\n]}\n`
  yield* replaceFile(path, text)
})
