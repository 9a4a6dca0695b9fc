/**
 * The activity view's data (`apps/cli/src/ui/data/activity.ts`) over the records the real doors leave: the bundled
 * CLI's `memdir hook` fed the UserPromptSubmit JSON Claude Code writes, and `memdir mcp` driven by the MCP SDK's real
 * `Client` in the same session (`CLAUDE_CODE_SESSION_ID`). Read in this process, as `memdir ui` reads it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as MemoryFs from "@memdir/core/MemoryFs"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { repoRoot } from "./support/cli.js"
import { connectMcp, doorEnv, mcpScratch, promptHook, writeTwoTopics } from "./support/mcp.js"

const scratch = mcpScratch("memdir-ui-activity-")

/** The part of the view this test reads (the module is the CLI's, outside this project's sources: loaded by path). */
interface ActivityModule {
  readonly recentActivity: (
    root: { readonly memoryDir: string },
    options?: { readonly limit?: number }
  ) => Effect.Effect<
    {
      readonly injections: ReadonlyArray<
        {
          readonly at: string
          readonly session: string
          readonly event: string
          readonly prompt?: string
          readonly memories: ReadonlyArray<string>
        }
      >
      readonly unreadable: ReadonlyArray<string>
    },
    unknown,
    MemoryFs.MemoryFs
  >
}
const loadActivity = () =>
  Effect.promise(() => import(path.join(repoRoot, "apps/cli/src/ui/data/activity.ts")) as Promise<ActivityModule>)

const SESSION = "7a1c2d3e-0000-4000-8000-00000000b001"
const DATABASE = "should the new integration tests mock the postgres database?"

const envOf = (memoryDir: string, extra: Record<string, string> = {}) => doorEnv(scratch, memoryDir, extra)

describe("recentActivity over the real hook and MCP server", () => {
  it.live(
    "what the hook injected into the session, and what memory_recall gave it for which query",
    () =>
      Effect.gen(function*() {
        const memoryDir = path.join(scratch.dir, "memory")
        fs.mkdirSync(memoryDir, { recursive: true })
        writeTwoTopics(memoryDir)
        const { recentActivity } = yield* loadActivity()

        const run = yield* Effect.promise(() => promptHook(scratch, memoryDir, SESSION, DATABASE))
        assert.strictEqual(run.status, 0, run.stderr)
        assert.include(run.stdout, "feedback_database_tests.md")
        const client = yield* Effect.promise((): Promise<Client> =>
          connectMcp(scratch, { env: envOf(memoryDir, { CLAUDE_CODE_SESSION_ID: SESSION }), name: "claude-code" })
        )
        yield* Effect.promise(() =>
          client.callTool({ name: "memory_recall", arguments: { query: "when does the next release leave?" } })
        )

        const activity = yield* recentActivity({ memoryDir }).pipe(Effect.provide(MemoryFs.layer))
        assert.deepStrictEqual(activity.unreadable, [])
        const [mcp, hook] = activity.injections
        assert.lengthOf(activity.injections, 2)
        assert.deepStrictEqual([mcp!.session, mcp!.event, mcp!.prompt], [
          SESSION,
          "mcp memory_recall",
          "when does the next release leave?"
        ])
        assert.include(mcp!.memories, "reference_release_train.md")
        assert.deepStrictEqual([hook!.session, hook!.event, hook!.prompt], [SESSION, "UserPromptSubmit", DATABASE])
        assert.deepStrictEqual(hook!.memories, ["feedback_database_tests.md"])
        assert.isAtMost(Date.parse(hook!.at), Date.parse(mcp!.at))
      }),
    60_000
  )
})
