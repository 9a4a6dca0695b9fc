/**
 * @memdir/testing — swap memdir's live layers for deterministic ones (`TestMemdir`), and real parts for
 * tests that want them (`Fixtures`: scratch dirs, git repos and worktrees, aged memory files; local stand-ins for
 * the Messages API and for OpenAI's Responses API, which the real SDK and the real Codex CLI talk to).
 */
export * as Fixtures from "./Fixtures.js"
export * as MessagesApiServer from "./MessagesApiServer.js"
export * as ResponsesApiServer from "./ResponsesApiServer.js"
export * as SdkModels from "./SdkModels.js"
export * as TestMemdir from "./TestMemdir.js"
