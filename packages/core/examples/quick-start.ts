/**
 * The README's library snippet, as a file: save a memory, build the system-prompt section, recall for a
 * question. `test/examples.test.ts` runs it and checks that the README shows exactly this code.
 *
 *   pnpm tsx packages/core/examples/quick-start.ts [PROJECT_DIR]
 */
import { NodeServices } from "@effect/platform-node"
import { Memdir, MemoryIndex, MemoryPaths, Prompt, Recall, Write } from "@memdir/core"
import { Console, Effect } from "effect"

const program = Effect.gen(function*() {
  // the project's git root decides the memory directory (all worktrees share one)
  const { memoryDir } = yield* (yield* MemoryPaths.MemoryPaths).resolve(process.argv[2] ?? process.cwd())

  // save: the file <type>_<topic>.md and its one line in MEMORY.md (a second write updates, never duplicates)
  yield* Write.writeMemory({
    memoryDir,
    type: "feedback",
    name: "Testing policy",
    description: "Integration tests must hit a real database, never mocks",
    body: "**Why:** mocked tests hid a broken migration.\n\n**How to apply:** tests under tests/integration/."
  })

  // the memory section of the system prompt, MEMORY.md loaded under its caps (200 lines / 25,000 bytes)
  const index = yield* (yield* MemoryIndex.MemoryIndex).load(memoryDir)
  const systemPrompt = yield* Prompt.buildMemoryPrompt({ memoryDir, index })
  yield* Console.log(`system prompt: ${systemPrompt.length} characters`)

  // recall: the <= 5 memories that clearly help, each with its age and, when old, a verify-first caveat
  const session = yield* Recall.RecallSession
  const recalled = yield* session.recall({ memoryDir, query: "should the new integration test mock the database?" })
  for (const memory of recalled.selected) yield* Console.log(Recall.renderRecalledMemory(memory))
})

// every live service, offline (no key needed), on Node's file system
program.pipe(Effect.provide(Memdir.layer()), Effect.provide(NodeServices.layer), Effect.runPromise)
