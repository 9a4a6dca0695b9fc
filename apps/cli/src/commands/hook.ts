/**
 * `memdir hook`: the one command an agent CLI's hooks run (docs/hooks.md). Reads the hook's JSON on stdin, dispatches
 * on `hook_event_name`, and answers on stdout in the agent's JSON (`hookSpecificOutput.additionalContext`), or
 * with nothing. It never blocks or fails the agent: every failure (bad JSON, a hostile field, memory disabled, I/O,
 * a defect, a run over its time guard) ends with exit 0 and no output, the reason on stderr (which Claude Code
 * shows only in verbose mode).
 */
import * as HookSessionState from "@memdir/core/HookSessionState"
import * as Cause from "effect/Cause"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as NodeUtil from "node:util"
import { common, switchFlag } from "../Common.js"
import { serveHooks } from "../hookd/HookDaemon.js"
import { type DaemonAnswer, takeStashedStdin } from "../hookd/HookSocket.js"
import { sessionStart, sessionStop, userPromptSubmit } from "../hooks/HookHandlers.js"
import { HOOK_INPUT_MAX_BYTES, type HookInput, type HookOutput, parseHookInput } from "../hooks/HookInput.js"
import { memdirHandler } from "../Services.js"

/** A prompt hook answers within this or answers nothing (the agent waits up to the configured timeout). */
export const HOOK_GUARD_MS = 8_000
/**
 * `MEMDIR_HOOK_GUARD_MS` (1–600000) replaces `HOOK_GUARD_MS`: a slower machine may need more; anything else in it is
 * ignored (a hook must not fail over its own setting).
 */
const guardFromEnv = (): number => {
  const value = Number(process.env.MEMDIR_HOOK_GUARD_MS)
  return Number.isInteger(value) && value >= 1 && value <= 600_000 ? value : HOOK_GUARD_MS
}
/** The detached background job (extraction, dream) stops after this. */
const BACKGROUND_GUARD_MS = 15 * 60_000

/**
 * stdin, whole, up to `HOOK_INPUT_MAX_BYTES` (more is an error); a terminal is no input. The launcher may have read
 * it already, asking the hook daemon first (hookd/HookClient.ts): then what it read.
 */
const readHookStdin: Effect.Effect<string, Error> = Effect.suspend(() => {
  const stashed = takeStashedStdin()
  if (stashed === undefined) return readProcessStdin
  return "text" in stashed ? Effect.succeed(stashed.text) : Effect.fail(new Error(stashed.error))
})

const readProcessStdin: Effect.Effect<string, Error> = Effect.callback<string, Error>((resume) => {
  const stdin = process.stdin
  if (stdin.isTTY) return resume(Effect.succeed(""))
  const chunks: Array<Buffer> = []
  let size = 0
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > HOOK_INPUT_MAX_BYTES) {
      cleanup()
      stdin.destroy()
      resume(Effect.fail(new Error(`stdin is over ${HOOK_INPUT_MAX_BYTES} bytes`)))
    } else {
      chunks.push(chunk)
    }
  }
  const onEnd = () => {
    cleanup()
    resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
  }
  const onError = (error: Error) => {
    cleanup()
    resume(Effect.fail(error))
  }
  const cleanup = () => {
    stdin.off("data", onData).off("end", onEnd).off("error", onError)
  }
  stdin.on("data", onData).on("end", onEnd).on("error", onError)
  return Effect.sync(() => {
    cleanup()
    stdin.pause()
  })
})

const say = (line: string) => Console.error(`memdir hook: ${line}`)

const dispatch = (input: HookInput, wantsModel: boolean) =>
  Effect.gen(function*() {
    const sessionId = HookSessionState.decodeSessionId(input.session_id)
    if (Result.isFailure(sessionId)) return yield* Effect.fail(sessionId.failure)
    switch (input.hook_event_name) {
      case "SessionStart":
        return yield* sessionStart(input)
      case "UserPromptSubmit":
        return yield* userPromptSubmit(input, sessionId.success, { wantsModel })
      case "Stop":
      case "SessionEnd":
        return yield* sessionStop(input)
    }
  })

const answerHook = (stdin: Effect.Effect<string, Error>, wantsModel: boolean) =>
  Effect.gen(function*() {
    const parsed = parseHookInput(yield* stdin)
    if (Result.isFailure(parsed)) {
      const problem = parsed.failure
      return yield* problem._tag === "OtherEvent" ? Effect.void : say(`${problem.detail}; answered with nothing`)
    }
    const output: Option.Option<HookOutput> = yield* dispatch(parsed.success, wantsModel).pipe(
      Effect.provide(HookSessionState.layer)
    )
    if (Option.isSome(output)) yield* Console.log(JSON.stringify(output.value))
  })

const runBackground = Effect.flatMap(
  Effect.promise(() => import("../hooks/HookBackground.js")),
  (module) => module.runBackground
)

/** Every failure, defect included, becomes "nothing" plus one stderr line: a memory hook must never fail the agent. */
const failOpen = <E, R>(effect: Effect.Effect<void, E, R>, guardMs: number) =>
  effect.pipe(
    Effect.timeoutOption(Duration.millis(guardMs)),
    Effect.flatMap(Option.match({
      onNone: () => say(`no answer within ${guardMs} ms; answered with nothing`),
      onSome: () => Effect.void
    })),
    // The one place memdir catches every cause on purpose (docs/hooks.md: fail open); the reason is still reported.
    Effect.catchCause((cause) => say(`${Cause.pretty(cause).split("\n")[0]!.slice(0, 500)}; answered with nothing`))
  )

/**
 * A console that keeps what is written to it: the daemon's answer is what `memdir hook` would have written to
 * stdout (`log`, `info`, `debug`) and stderr (`error`, `warn`, logs included), formatted as Node's console does.
 */
const capturingConsole = () => {
  const stdout: Array<string> = []
  const stderr: Array<string> = []
  const to = (lines: Array<string>) => (...args: ReadonlyArray<unknown>) => {
    lines.push(NodeUtil.format(...args) + "\n")
  }
  const console: Console.Console = Object.assign(Object.create(globalThis.console), {
    log: to(stdout),
    info: to(stdout),
    debug: to(stdout),
    error: to(stderr),
    warn: to(stderr)
  })
  return { console, answer: (): DaemonAnswer => ({ stdout: stdout.join(""), stderr: stderr.join("") }) }
}

export const hookCommand = Command.make(
  "hook",
  {
    ...common,
    selector: Flag.Literals("selector", ["offline", "model", "auto"]).pipe(
      Flag.withDescription(
        "Who picks memories on UserPromptSubmit: offline (default: no network, fast), model, or auto (model when a " +
          "key is configured); model and auto only while automaticModelCalls is on (docs/configuration.md)"
      ),
      Flag.withDefault("offline" as const)
    ),
    background: switchFlag("background").pipe(
      Flag.withDescription("Internal: the detached extraction + dream job a Stop/SessionEnd hook starts")
    ),
    serve: switchFlag("serve").pipe(
      Flag.withDescription("Internal: the session's hook daemon the first hook starts (docs/hooks.md)")
    )
  },
  (args) => {
    const handledWith = (stdin: Effect.Effect<string, Error>) =>
      memdirHandler(
        (
          a: typeof args
        ): Effect.Effect<void, unknown, Effect.Services<typeof runBackground | ReturnType<typeof answerHook>>> =>
          a.background ? runBackground : answerHook(stdin, a.selector !== "offline"),
        // model or auto only while the project's automaticModelCalls switch is on (set per prompt by the handler)
        (a) => ({
          selector: a.selector === "offline"
            ? "offline"
            : a.selector === "model"
            ? "model-if-allowed"
            : "auto-if-allowed"
        })
      )(args)
    if (args.serve && !args.background) {
      // each hook as `memdir hook` would answer it, its output kept for the client
      return serveHooks((stdin) => {
        const { answer, console } = capturingConsole()
        return failOpen(handledWith(Effect.succeed(stdin)), guardFromEnv()).pipe(
          Effect.provideService(Console.Console, console),
          Effect.map(answer)
        )
      })
    }
    const handled = handledWith(readHookStdin)
    const guardMs = args.background ? BACKGROUND_GUARD_MS : guardFromEnv()
    // Belt and braces: should the runtime itself stall, the process still ends, with nothing on stdout.
    const hardStop = setTimeout(() => process.exit(0), guardMs + 2_000)
    hardStop.unref()
    return failOpen(handled, guardMs)
  }
).pipe(
  Command.withDescription(
    "Answer an agent CLI hook (Claude Code, Codex): JSON on stdin, context on stdout; never fails the prompt"
  )
)
