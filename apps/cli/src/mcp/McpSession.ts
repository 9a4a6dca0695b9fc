/**
 * Which agent session `memdir mcp` serves, and the record of what that session already got from memory, shared with
 * the hooks (docs/mcp.md#sessions): the hook injects a memory on a prompt, then `memory_recall` leaves it out, and
 * the other way round.
 *
 * The session is named by the environment the client starts the server with: `MEMDIR_SESSION_ID` (set it in the
 * client's `"env"`), else `CLAUDE_CODE_SESSION_ID`, which Claude Code sets for every stdio server it starts to the
 * id its hooks get as `session_id`; else by the call itself, as Codex names its session in each call's `_meta`
 * (`sessionOfCall`). Without any, the process is its own session (its `RecallSession` only), as a client that
 * restarts the server per conversation expects.
 *
 * The record is `HookSessionState`'s file (`<memory dir>/.sessions/<id>.json`), merged under its lock, so a hook and
 * the server writing at once both count. It is a cache: one that cannot be read or written costs a duplicate, never
 * the recall (a line on stderr says so).
 */
import { InvalidMemoryInputError, type LockTimeoutError, type MemoryIoError } from "@memdir/core/Errors"
import {
  decodeSessionId,
  HookSessionState,
  type InjectionDetail,
  type SessionId,
  type SessionState
} from "@memdir/core/HookSessionState"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"

/** The session id a user (or any client's `"env"`) gives the server. */
export const SESSION_ENV = "MEMDIR_SESSION_ID"
/** The session id Claude Code gives every stdio MCP server it starts: its hooks' `session_id`. */
export const CLAUDE_CODE_SESSION_ENV = "CLAUDE_CODE_SESSION_ID"

const nonEmpty = (name: string) =>
  Config.String(name).pipe(Config.option, Config.map(Option.filter((value) => value !== "")))

/**
 * The session of the environment. A malformed `MEMDIR_SESSION_ID` is an error naming the variable (the user set it);
 * a malformed `CLAUDE_CODE_SESSION_ID` (the agent's, not the user's) leaves the process its own session, said once
 * on stderr.
 */
export const sessionOfEnvironment = Effect.gen(function*() {
  const own = yield* nonEmpty(SESSION_ENV)
  if (Option.isSome(own)) {
    const id = decodeSessionId(own.value)
    if (Result.isFailure(id)) {
      return yield* new InvalidMemoryInputError({
        field: SESSION_ENV,
        value: own.value.slice(0, 200),
        reason: `${id.failure.reason} (the session id of your agent, as its hooks get it), or unset it`
      })
    }
    return Option.some(id.success)
  }
  const claude = yield* nonEmpty(CLAUDE_CODE_SESSION_ENV)
  if (Option.isNone(claude)) return Option.none<SessionId>()
  const id = decodeSessionId(claude.value)
  if (Result.isSuccess(id)) return Option.some(id.success)
  yield* Console.error(
    `memdir mcp: ${CLAUDE_CODE_SESSION_ENV} is not a session id memdir keeps (${id.failure.reason}): this server ` +
      `is its own session, so a memory the hooks injected may be recalled again`
  )
  return Option.none<SessionId>()
})

/** Where Codex (0.171) names its session in each `tools/call`: `_meta["x-codex-turn-metadata"].session_id`. */
export const CODEX_TURN_METADATA = "x-codex-turn-metadata"

/**
 * The session a tool call belongs to: the environment's (`sessionOfEnvironment`) when it names one; else the one
 * the client names in the call's `_meta`, as Codex does (it starts MCP servers with a bare environment, and sends
 * its session id, the hooks' `session_id`, with every call). Anything else there (absent, not a session id memdir
 * keeps) leaves the call in the process's own session.
 */
export const sessionOfCall = (
  environment: Option.Option<SessionId>,
  meta: Readonly<Record<string, unknown>> | undefined
): Option.Option<SessionId> => {
  if (Option.isSome(environment)) return environment
  const turn = meta?.[CODEX_TURN_METADATA]
  const id = typeof turn === "object" && turn !== null ? (turn as Record<string, unknown>).session_id : undefined
  if (typeof id !== "string") return Option.none()
  return Result.match(decodeSessionId(id), { onFailure: () => Option.none(), onSuccess: Option.some })
}

const warn = (what: string) => (error: MemoryIoError | LockTimeoutError) =>
  Console.error(`memdir mcp: the session record could not be ${what} (${error.message}): a memory may come twice`)

/** What the session already got (nothing for a server without a session, or a record that cannot be read). */
export const sessionBefore = Effect.fn("McpSession.before")(
  function*(session: Option.Option<SessionId>, memoryDir: string) {
    if (Option.isNone(session)) return Option.none<SessionState>()
    const state = yield* HookSessionState
    return yield* state.load(memoryDir, session.value).pipe(
      Effect.map(Option.some),
      Effect.catch((error) => Effect.as(warn("read")(error), Option.none<SessionState>()))
    )
  }
)

/**
 * Adds what a tool gave the model (relative paths, and the bytes of recalled content) to the session's record, with
 * the tool and the query it answered (`memdir ui`'s activity view shows them).
 */
export const recordInSession = Effect.fn("McpSession.record")(
  function*(
    session: Option.Option<SessionId>,
    memoryDir: string,
    paths: ReadonlyArray<string>,
    bytes: number,
    detail?: InjectionDetail
  ) {
    if (Option.isNone(session) || paths.length === 0) return
    const state = yield* HookSessionState
    yield* state.record(memoryDir, session.value, paths, bytes, detail).pipe(
      Effect.asVoid,
      Effect.catch(warn("written"))
    )
  }
)
