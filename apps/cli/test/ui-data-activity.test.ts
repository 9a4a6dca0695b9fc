/**
 * The activity view's data (`ui/data/activity.ts`) over records the real programs write: the MCP door's session
 * record (`McpSession.recordInSession`, as `memory_recall` calls it), an extraction of a real Claude Code transcript
 * driven by a scripted model (`Extract.extract`, its report), and background runs traced by `BackgroundRuns.track`
 * as the hooks' job traces them. test/ui-data-activity.test.ts drives the bundled `memdir hook` and `memdir mcp`.
 */
import type Anthropic from "@anthropic-ai/sdk"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import * as BackgroundRuns from "@memdir/core/BackgroundRuns"
import { LockTimeoutError, ModelError } from "@memdir/core/Errors"
import { extract } from "@memdir/core/Extract"
import { decodeSessionId, layer as hookSessionStateLayer } from "@memdir/core/HookSessionState"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryStore from "@memdir/core/MemoryStore"
import * as Model from "@memdir/core/Model"
import * as Scanner from "@memdir/core/Scanner"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { recordInSession } from "../src/mcp/McpSession.js"
import { recentActivity } from "../src/ui/data/activity.js"

const transcriptFixture = NodePath.resolve(
  NodePath.dirname(fileURLToPath(import.meta.url)),
  "../../../packages/core/test/fixtures/transcripts/claude-code-session.jsonl"
)
const SESSION = "6b0d9a4e-2f7c-4c1e-8d35-91a2f0e7c3d1"

const memoryFile = (name: string, description: string, type: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntype: ${type}\n---\n\n${body}\n`

const toolUse = (id: string, name: string, input: unknown): Anthropic.ToolUseBlock => ({
  type: "tool_use",
  id,
  name,
  input,
  caller: { type: "direct" }
})

const extraction: Model.ModelScript = [
  {
    content: [
      toolUse("w1", "memory_write", {
        path: "feedback_no_db_mocks.md",
        content: memoryFile("No database mocks", "Integration tests hit a real database", "feedback", "Never mock it.")
      }),
      toolUse("w2", "memory_write", {
        path: "project_mobile_freeze.md",
        content: memoryFile("Mobile freeze", "Merge freeze from 2026-03-05", "project", "Freeze from 2026-03-05.")
      })
    ],
    stopReason: "tool_use"
  },
  Model.textReply("Saved 2 memories.")
]

const services = (script: Model.ModelScript) =>
  Layer.mergeAll(Model.layerTest(script), Scanner.layerNode, hookSessionStateLayer, BackgroundRuns.layer).pipe(
    Layer.provideMerge(MemoryStore.layerNode.pipe(Layer.provideMerge(MemoryIndex.layer))),
    Layer.provideMerge(NodeServices.layer)
  )

const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-ui-activity-" }))
})

describe("recentActivity", () => {
  it.live("nothing recorded yet: three empty lists; a record directory that cannot be listed is named", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      assert.deepStrictEqual(yield* recentActivity({ memoryDir: `${dir}/memory` }), {
        injections: [],
        extractions: [],
        backgroundFailures: [],
        unreadable: []
      })
      NodeFs.mkdirSync(`${dir}/memory`, { recursive: true })
      NodeFs.writeFileSync(`${dir}/memory/.sessions`, "not a directory")
      const odd = yield* recentActivity({ memoryDir: `${dir}/memory` })
      assert.deepStrictEqual(odd.injections, [])
      assert.lengthOf(odd.unreadable, 1)
      assert.match(odd.unreadable[0]!, /^\.sessions\/: /)
    }).pipe(Effect.provide(services([]))))

  it.live(
    "what MCP gave a session for which query; what extraction saved; the background runs that failed",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const memoryDir = `${dir}/memory`
        NodeFs.mkdirSync(memoryDir, { recursive: true })
        const session = Option.some(Result.getOrThrow(decodeSessionId("s-1")))

        // memory_recall and memory_read record what they gave, as the MCP server does
        yield* recordInSession(session, memoryDir, ["feedback_db.md", "project_api.md"], 120, {
          event: "mcp memory_recall",
          prompt: "how do we test the database?"
        })
        yield* recordInSession(session, memoryDir, ["project_api.md"], 0, { event: "mcp memory_read" })

        // a real extraction of a Claude Code transcript: it saves two memories and leaves its report
        const transcript = `${dir}/session.jsonl`
        NodeFs.copyFileSync(transcriptFixture, transcript)
        const extracted = yield* extract({ memoryDir, projectRoot: dir, transcript, homeDir: dir })
        assert.strictEqual(extracted.status, "extracted")

        // the hooks' job: an extraction that failed on the key, traced as the job traces it
        const refused = new ModelError({
          kind: "authentication",
          role: "extractor",
          model: "claude-x",
          status: 401,
          detail: "invalid x-api-key"
        })
        yield* BackgroundRuns.track({ memoryDir, session: "s-2" }, (notes) =>
          notes.extraction({
            status: "failed",
            runs: 1,
            messagesRead: 0,
            written: 0,
            refused: 0,
            failure: BackgroundRuns.failureOf(refused)
          }))

        // a job whose extraction had nothing new, then failed in the dream (its lock)

        yield* Effect.ignore(BackgroundRuns.track({ memoryDir, session: "s-3" }, (notes) =>
          Effect.andThen(
            notes.extraction({ status: "up-to-date", runs: 1, messagesRead: 0, written: 0, refused: 0 }),
            Effect.fail(new LockTimeoutError({ path: `${memoryDir}/.consolidate-lock`, waitedMs: 2_000 }))
          )))

        const activity = yield* recentActivity({ memoryDir }, { limit: 10 })
        assert.deepStrictEqual(
          activity.injections.map((i) => [i.session, i.event, i.prompt, i.memories]),
          [
            ["s-1", "mcp memory_read", undefined, ["project_api.md"]],
            ["s-1", "mcp memory_recall", "how do we test the database?", ["feedback_db.md", "project_api.md"]]
          ]
        )
        assert.deepStrictEqual(activity.extractions.map((e) => [e.from, e.ok, e.session, e.saved, e.error]), [
          ["run-log", false, "s-2", [], `ModelError (authentication): ${refused.message}`],
          ["report", true, SESSION, ["feedback_no_db_mocks.md", "project_mobile_freeze.md"], undefined]
        ])
        assert.isAbove(activity.extractions[1]!.messagesRead!, 0)
        assert.deepStrictEqual(activity.backgroundFailures.map((f) => [f.kind, f.state, f.session, f.fix]), [
          ["dream", "failed", "s-3", "another memdir held a lock; the next run retries"],
          ["extraction", "failed", "s-2", "the API key was refused: check ANTHROPIC_API_KEY"]
        ])
        assert.match(activity.backgroundFailures[0]!.error, /^LockTimeoutError: timed out after 2000 ms/)
        assert.deepStrictEqual(activity.unreadable, [])

        // the limit holds for every list; a corrupt record is named, never a failure
        assert.lengthOf((yield* recentActivity({ memoryDir }, { limit: 1 })).injections, 1)
        NodeFs.writeFileSync(`${memoryDir}/.sessions/s-3.json`, "{ corrupt")
        NodeFs.writeFileSync(NodePath.join(memoryDir, extracted.backupDir!, "report.json"), "[]")
        const damaged = yield* recentActivity({ memoryDir })
        assert.deepStrictEqual(damaged.unreadable, [
          "1 session record in .sessions/",
          `${extracted.backupDir}/report.json`
        ])
        assert.lengthOf(damaged.injections, 2)
      }).pipe(Effect.provide(services(extraction))),
    60_000
  )
})
