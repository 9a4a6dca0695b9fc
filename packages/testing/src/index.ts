/**
 * @memdir/testing — swap memdir's live layers for deterministic ones (`TestMemdir`), and real parts for
 * tests that want them (`Fixtures`: scratch dirs, git repos and worktrees, aged memory files).
 */
export * as Fixtures from "./Fixtures.js"
export * as MessagesApiServer from "./MessagesApiServer.js"
export * as SdkModels from "./SdkModels.js"
export * as TestMemdir from "./TestMemdir.js"
