/**
 * What one agent session already got from memory, across processes and doors (docs/hooks.md#once-per-session): an
 * agent CLI runs `memdir hook` as a new process per prompt, so the in-process `RecallSession` forgets between
 * prompts. This keeps, per `session_id`, the memories surfaced so far and the bytes they took, in
 * `<memdir>/.sessions/<id>.json` (hidden: the scanner, recall and the memory tools never see it). `memdir mcp`
 * shares the record when its environment names the session (docs/mcp.md#sessions), so a memory the hook injected is
 * not recalled again through MCP, and the other way round.
 *
 * Hostile input is expected (the session id comes from the hook's stdin): an id is a short token of letters, digits,
 * `-` and `_` or it is refused; files are read with a size bound and written atomically, both only inside the
 * memory directory (`MemoryFs` `within`, so a `.sessions` symlink is refused). State is bounded (at most
 * `MAX_SURFACED` paths per session, `MAX_SESSIONS` files) and old sessions are removed (`cleanup`). Two prompts of
 * one session at once (two hook processes) merge what they surfaced: `record` is a read-modify-write under the
 * session's own lock (`<id>.lock`, waited for at most `RECORD_LOCK_TIMEOUT`).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { oneLine } from "./BackgroundRuns.js"
import { InvalidMemoryInputError, type LockTimeoutError, MemoryIoError } from "./Errors.js"
import { withLock } from "./internal/fs/lock.js"
import { FILE_MODE, MemoryFs, type MemoryFsError } from "./MemoryFs.js"

export const SESSIONS_DIR = ".sessions"
/** Paths remembered per session at most (recall surfaces ≤ 5 per prompt, so this is hundreds of prompts). */
export const MAX_SURFACED = 1_000
/** Session files kept at most; the oldest beyond it are removed. */
export const MAX_SESSIONS = 200
/** Sessions untouched for this long are removed. */
export const SESSION_MAX_AGE_MS = 7 * 24 * 3_600_000
const STATE_MAX_BYTES = 256 * 1024
/** A hook answers within seconds: a session lock held longer than this fails the record (the hook says nothing). */
export const RECORD_LOCK_TIMEOUT: Duration.Input = "2 seconds"

export interface HookSessionStateOptions {
  /** How long `record` waits for the session's lock (default `RECORD_LOCK_TIMEOUT`). */
  readonly lockTimeout?: Duration.Input | undefined
}

/** A session id as an agent CLI gives it (UUIDs, Codex thread ids): letters, digits, `-`, `_`; 1–128 characters. */
export const SessionId = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/)).pipe(
  Schema.brand("HookSessionId")
)
export type SessionId = typeof SessionId.Type

export const decodeSessionId = (raw: string): Result.Result<SessionId, InvalidMemoryInputError> =>
  Result.mapError(
    Schema.decodeUnknownResult(SessionId)(raw),
    () =>
      new InvalidMemoryInputError({
        field: "session_id",
        value: raw.slice(0, 200),
        reason: "must be 1–128 letters, digits, '-' or '_'"
      })
  )

/** Injections remembered per session at most (the newest): what `memdir ui`'s activity view shows. */
export const MAX_INJECTIONS = 50
/** A prompt is kept as one line of at most this many characters, secrets redacted. */
export const PROMPT_MAX_CHARS = 200

/**
 * One time memory was given to the session: when, the memories (relative paths), and, when the door says so, the
 * event (`UserPromptSubmit`, `mcp memory_recall`…) and the start of the prompt or query it answered.
 */
export const Injection = Schema.Struct({
  at: Schema.Number,
  paths: Schema.Array(Schema.String.check(Schema.isMaxLength(1024))),
  event: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64))),
  prompt: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(PROMPT_MAX_CHARS)))
})
export type Injection = typeof Injection.Type

const StateFile = Schema.Struct({
  version: Schema.Literal(1),
  /** Relative to the memory directory, `/`-separated, oldest first. */
  surfaced: Schema.Array(Schema.String.check(Schema.isMaxLength(1024))),
  bytes: Schema.Number,
  updatedAt: Schema.Number,
  /** Oldest first (absent in files an older memdir wrote). */
  injections: Schema.optionalKey(Schema.Array(Injection))
})
const decodeState = Schema.decodeUnknownResult(Schema.fromJsonString(StateFile))

export interface SessionState {
  readonly surfaced: ReadonlyArray<string>
  /** Bytes of memory content surfaced so far (the recall session budget counts them). */
  readonly bytes: number
  /** Each time memory was given, oldest first (at most `MAX_INJECTIONS`). */
  readonly injections: ReadonlyArray<Injection>
}

/** What a door says about a record: the event and the prompt (kept as one redacted line). */
export interface InjectionDetail {
  readonly event?: string | undefined
  readonly prompt?: string | undefined
}

/** One session's record as `sessions` lists it. */
export interface SessionRecord extends SessionState {
  readonly sessionId: SessionId
  readonly updatedAt: number
}

const empty: SessionState = { surfaced: [], bytes: 0, injections: [] }

export class HookSessionState extends Context.Service<HookSessionState, {
  /** The session's state; a missing or unreadable file is a fresh session (the state is a cache, not data). */
  readonly load: (memoryDir: string, sessionId: SessionId) => Effect.Effect<SessionState, MemoryIoError>
  /**
   * Adds what a prompt surfaced (relative paths) and its bytes, atomically, under the session's lock, with an
   * injection entry (now, the paths, and what `detail` says of the event and the prompt).
   */
  readonly record: (
    memoryDir: string,
    sessionId: SessionId,
    surfaced: ReadonlyArray<string>,
    bytes: number,
    detail?: InjectionDetail
  ) => Effect.Effect<SessionState, MemoryIoError | LockTimeoutError>
  /**
   * The newest `max` sessions' records (by when they were last updated), newest first; a record that cannot be read
   * is counted in `unreadable`, never a failure. No `.sessions/`: none.
   */
  readonly sessions: (
    memoryDir: string,
    max: number
  ) => Effect.Effect<
    { readonly sessions: ReadonlyArray<SessionRecord>; readonly unreadable: number },
    MemoryIoError
  >
  /** Removes sessions older than `SESSION_MAX_AGE_MS` and all but the newest `MAX_SESSIONS`. Returns how many. */
  readonly cleanup: (memoryDir: string) => Effect.Effect<number, MemoryIoError>
}>()("@memdir/core/HookSessionState") {}

const toIo = (op: string) => (error: MemoryFsError) =>
  new MemoryIoError({ op, path: error.path, detail: error.message })

export const makeWith = (options: HookSessionStateOptions = {}) =>
  Effect.gen(function*() {
    const lockTimeout = options.lockTimeout ?? RECORD_LOCK_TIMEOUT
    const fs = yield* MemoryFs

    /** The real memory directory and its `.sessions/` inside it (created 0700 only when writing). */
    const where = (memoryDir: string) =>
      Effect.map(fs.realPathOfDeepestExisting(memoryDir), (real) => {
        const root = real.length > 1 ? real.replace(/[\\/]+$/, "") : real
        return { root, dir: `${root}/${SESSIONS_DIR}` }
      })

    const fileOf = (dir: string, sessionId: SessionId) => `${dir}/${sessionId}.json`

    const load = Effect.fn("HookSessionState.load")(function*(memoryDir: string, sessionId: SessionId) {
      const { dir, root } = yield* where(memoryDir).pipe(Effect.mapError(toIo("locate")))
      return yield* fs.readFile(fileOf(dir, sessionId), { maxBytes: STATE_MAX_BYTES, within: root }).pipe(
        Effect.map((file) => Result.getOrElse(decodeState(file.text), () => empty)),
        Effect.map((state): SessionState => ({
          surfaced: state.surfaced,
          bytes: state.bytes,
          injections: state.injections ?? []
        })),
        Effect.catchTag(
          "MemoryFsError",
          (error) =>
            error.reason === "NotFound" ? Effect.succeed(empty) : Effect.fail(toIo("read session state")(error))
        )
      )
    })

    const record = Effect.fn("HookSessionState.record")(
      function*(
        memoryDir: string,
        sessionId: SessionId,
        surfaced: ReadonlyArray<string>,
        bytes: number,
        detail: InjectionDetail = {}
      ) {
        const { dir, root } = yield* where(memoryDir).pipe(Effect.mapError(toIo("locate")))
        yield* fs.makeDirectory(dir, { within: root }).pipe(Effect.mapError(toIo("write session state")))
        const update = Effect.gen(function*() {
          const before = yield* load(memoryDir, sessionId)
          const merged = [...new Set([...before.surfaced, ...surfaced])].slice(-MAX_SURFACED)
          const now = yield* Clock.currentTimeMillis
          const injection: Injection = {
            at: now,
            paths: surfaced.filter((p) => p.length <= 1024).slice(0, 20),
            ...(detail.event === undefined ? {} : { event: detail.event.slice(0, 64) }),
            ...(detail.prompt === undefined ? {} : { prompt: oneLine(detail.prompt, PROMPT_MAX_CHARS) })
          }
          const state: SessionState = {
            surfaced: merged,
            bytes: before.bytes + Math.max(0, bytes),
            injections: surfaced.length === 0 ?
              before.injections :
              [...before.injections, injection].slice(-MAX_INJECTIONS)
          }
          const text = JSON.stringify({ version: 1, ...state, updatedAt: now }) + "\n"
          yield* fs.writeFileAtomic(fileOf(dir, sessionId), text, { mode: FILE_MODE, within: root }).pipe(
            Effect.mapError(toIo("write session state"))
          )
          return state
        })
        return yield* withLock(`${dir}/${sessionId}.lock`, update, { timeout: lockTimeout }).pipe(
          Effect.provideService(MemoryFs, fs)
        )
      }
    )

    const cleanup = Effect.fn("HookSessionState.cleanup")(function*(memoryDir: string) {
      const { dir } = yield* where(memoryDir).pipe(Effect.mapError(toIo("locate")))
      const entries = yield* fs.readDirectory(dir).pipe(
        Effect.catchTag(
          "MemoryFsError",
          (error) => error.reason === "NotFound" ? Effect.succeed([]) : Effect.fail(toIo("list sessions")(error))
        )
      )
      const now = yield* Clock.currentTimeMillis
      const paths = entries.flatMap((entry) =>
        entry.kind === "File" && entry.name.endsWith(".json") ? [`${dir}/${entry.name}`] : []
      )
      // one synchronous batch: a session start pays for up to MAX_SESSIONS of these
      const mtimes = yield* fs.mtimeMany(paths)
      const files = paths.flatMap((path, i) => {
        const mtime = mtimes[i]
        return typeof mtime === "number" ? [{ path, mtime }] : []
      })
      files.sort((a, b) => b.mtime - a.mtime)
      const stale = files.filter((f, i) => i >= MAX_SESSIONS || now - f.mtime > SESSION_MAX_AGE_MS)
      // Another hook process may remove the same file at the same moment: NotFound is fine.
      yield* Effect.forEach(stale, (f) => Effect.ignore(fs.remove(f.path)), { discard: true })
      return stale.length
    })

    const sessions = Effect.fn("HookSessionState.sessions")(function*(memoryDir: string, max: number) {
      const { dir, root } = yield* where(memoryDir).pipe(Effect.mapError(toIo("locate")))
      const entries = yield* fs.readDirectory(dir).pipe(
        Effect.catchTag(
          "MemoryFsError",
          (error) => error.reason === "NotFound" ? Effect.succeed([]) : Effect.fail(toIo("list sessions")(error))
        )
      )
      const named = entries.flatMap((entry) => {
        if (entry.kind !== "File" || !entry.name.endsWith(".json")) return []
        const id = Schema.decodeUnknownOption(SessionId)(entry.name.slice(0, -".json".length))
        return id._tag === "Some" ? [{ id: id.value, path: `${dir}/${entry.name}` }] : []
      })
      const times = yield* fs.mtimeMany(named.map((n) => n.path))
      const newest = named.map((n, i) => ({ ...n, mtime: times[i] }))
        .filter((n): n is typeof n & { mtime: number } => typeof n.mtime === "number")
        .sort((a, b) => b.mtime - a.mtime)
        .slice(0, Math.max(0, max))
      const records: Array<SessionRecord> = []
      let unreadable = 0
      for (const file of newest) {
        const read = yield* Effect.result(fs.readFile(file.path, { maxBytes: STATE_MAX_BYTES, within: root }))
        const state = Result.isSuccess(read) ? decodeState(read.success.text) : undefined
        if (state === undefined || Result.isFailure(state)) {
          // gone since the listing (cleanup, another hook): not a record that cannot be read
          if (Result.isFailure(read) && read.failure.reason === "NotFound") continue
          unreadable++
          continue
        }
        records.push({
          sessionId: file.id,
          surfaced: state.success.surfaced,
          bytes: state.success.bytes,
          injections: state.success.injections ?? [],
          updatedAt: state.success.updatedAt
        })
      }
      return { sessions: records, unreadable }
    })

    return HookSessionState.of({ load, record, cleanup, sessions })
  })

/** The state with the default lock timeout. */
export const make = makeWith()

/** The live state with its options (e.g. a longer lock timeout for a program that may wait). */
export const layerWith = (
  options: HookSessionStateOptions
): Layer.Layer<HookSessionState, never, MemoryFs> => Layer.effect(HookSessionState, makeWith(options))

/** The live state over `MemoryFs` (its session locks too). */
export const layer: Layer.Layer<HookSessionState, never, MemoryFs> = Layer
  .effect(HookSessionState, make)
