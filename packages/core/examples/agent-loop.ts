/**
 * memdir in an agent loop: resolve the project's memory, inject the prompt section, prefetch recall while
 * the main model works, consume it only if it finished, and save what the turn taught.
 *
 *   pnpm tsx packages/core/examples/agent-loop.ts [PROJECT_DIR]
 *
 * Uses MEMDIR_HOME (default ~/.memdir) like the CLI; point it at a scratch directory to experiment.
 */
import { NodeServices } from "@effect/platform-node"
import { Memdir, MemoryIndex, MemoryPaths, Prompt, Recall, Write } from "@memdir/core"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const projectDir = process.argv[2] ?? process.cwd()

/** Stand-in for the main model call (a real one takes seconds); a real runtime calls its LLM here. */
const callMainModel = (_system: string, userMessage: string) =>
  Effect.as(Effect.sleep("1 second"), `(answer to: ${userMessage})`)

const turn = (memoryDir: string, systemPrompt: string, userMessage: string) =>
  Effect.gen(function*() {
    const session = yield* Recall.RecallSession
    // 1. the user's message arrives: start recall in the background (one-word prompts are skipped)
    const prefetch = yield* session.prefetch({ memoryDir, query: userMessage })
    // 2. the main model works meanwhile; the user never waits for memory
    const answer = yield* callMainModel(systemPrompt, userMessage)
    // 3. attach recalled memories only if recall already finished
    const recalled = yield* prefetch.consume
    if (Option.isSome(recalled)) {
      for (const memory of recalled.value.selected) {
        yield* Console.log(Recall.renderRecalledMemory(memory))
      }
      yield* Console.log(`recall: ${recalled.value.telemetry.selected}/${recalled.value.candidates} selected`)
    } else {
      yield* Console.log("recall: not finished in time, skipped this turn")
    }
    return answer
  })

const program = Effect.gen(function*() {
  const location = yield* (yield* MemoryPaths.MemoryPaths).resolve(projectDir)
  if (!location.enabled) return yield* Console.log(`auto memory is off (${location.enabledBy})`)

  // save a memory the way an agent would after learning something (two steps: file + index line)
  yield* Write.writeMemory({
    memoryDir: location.memoryDir,
    type: "feedback",
    name: "Testing policy",
    description: "Integration tests must hit a real database, never mocks",
    body: "**Why:** mocked tests hid a broken migration.\n\n**How to apply:** tests under tests/integration/."
  })

  // the system-prompt section, with MEMORY.md loaded under its caps
  const index = yield* (yield* MemoryIndex.MemoryIndex).load(location.memoryDir)
  const systemPrompt = yield* Prompt.buildMemoryPrompt({ memoryDir: location.memoryDir, index })
  yield* Console.log(`system prompt: ${systemPrompt.length} chars, memory at ${location.memoryDir}`)

  yield* turn(location.memoryDir, systemPrompt, "should the new integration test mock the database?")
})

// one layer for the whole session: every live service, on Node's file system
program.pipe(Effect.provide(Memdir.layer()), Effect.provide(NodeServices.layer), Effect.runPromise)
