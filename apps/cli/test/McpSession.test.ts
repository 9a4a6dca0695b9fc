import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import { CODEX_TURN_METADATA, sessionOfCall } from "../src/mcp/McpSession.js"

const codex = (sessionId: unknown) => ({ [CODEX_TURN_METADATA]: { session_id: sessionId, thread_id: "t" } })
const codexId = "01a244ec-c25c-7a91-9617-0d0f90f7d755"

describe("McpSession.sessionOfCall", () => {
  it("Codex's _meta names the session when the environment does not", () => {
    assert.deepStrictEqual(sessionOfCall(Option.none(), codex(codexId)), Option.some(codexId as any))
  })

  it("the environment's session wins over the call's", () => {
    const fromEnv = Option.some("from-env" as any)
    assert.deepStrictEqual(sessionOfCall(fromEnv, codex(codexId)), fromEnv)
  })

  it("no _meta, another shape, or an id memdir does not keep: the process's own session", () => {
    for (
      const meta of [
        undefined,
        {},
        { [CODEX_TURN_METADATA]: "x" },
        { [CODEX_TURN_METADATA]: null },
        codex(42),
        codex("../../etc/passwd"),
        codex(""),
        codex("a".repeat(500))
      ]
    ) {
      assert.isTrue(Option.isNone(sessionOfCall(Option.none(), meta)), JSON.stringify(meta))
    }
  })
})
