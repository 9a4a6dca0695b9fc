/**
 * docs/memory-tool.md's library example: memdir as the backend of the Anthropic memory tool, in the SDK's tool
 * runner. `test/examples.test.ts` runs it against a local Messages API server and checks that the docs show
 * exactly this code.
 *
 *   ANTHROPIC_API_KEY=sk-ant-… pnpm tsx packages/core/examples/memory-tool.ts [PROJECT_DIR]
 */
import Anthropic from "@anthropic-ai/sdk"
import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory"
import { NodeServices } from "@effect/platform-node"
import { Memdir, MemoryPaths, MemoryToolBackend, ModelCatalog } from "@memdir/core"
import { Console, Effect } from "effect"

const program = Effect.gen(function*() {
  // the project's memory directory, and whether /memories/team (its team/ directory) is on
  const location = yield* (yield* MemoryPaths.MemoryPaths).locate(process.argv[2] ?? process.cwd())

  // where `new BetaLocalFilesystemMemoryTool()` would go: memdir's handlers for every memory command
  const memory = betaMemoryTool(yield* MemoryToolBackend.handlers(location))

  // the SDK's tool runner answers each memory tool call with the handlers until the model is done
  const client = new Anthropic() // ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL) from the environment
  const final = yield* Effect.tryPromise(() =>
    client.beta.messages.toolRunner({
      model: ModelCatalog.DEFAULT_MODEL, // memdir's default model, a current one
      max_tokens: 2048,
      betas: ["context-management-2025-06-27"],
      system: "Each memory is a Markdown file with frontmatter: name, description and type " +
        "(user | feedback | project | reference).",
      messages: [{ role: "user", content: "Remember: integration tests must hit a real database, never mocks." }],
      tools: [memory]
    })
  )
  for (const block of final.content) if (block.type === "text") yield* Console.log(block.text)
  yield* Console.log(`memory directory: ${location.memoryDir}`)
})

// every live service, on Node's file system
program.pipe(Effect.provide(Memdir.layer()), Effect.provide(NodeServices.layer), Effect.runPromise)
