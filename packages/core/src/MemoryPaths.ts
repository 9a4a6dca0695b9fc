/**
 * MemoryPaths: where the memory of a project lives and whether auto memory is on (SPEC §1).
 * CONTRACT (owned by the paths helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { InvalidMemoryDirError, SettingsError } from "./Errors.js"
import type { GitRootInfo } from "./GitRoot.js"

export interface MemoryLocation {
  readonly root: GitRootInfo
  /** Absolute, NFC-normalised, ends with the path separator. */
  readonly memoryDir: string
  readonly source: "env" | "policy" | "flag" | "local" | "user" | "default"
  readonly enabled: boolean
  /** Which link of the enable chain decided (e.g. "env MEMDIR_DISABLE_AUTO_MEMORY", "default"). */
  readonly enabledBy: string
}

export class MemoryPaths extends Context.Tag("@memdir/core/MemoryPaths")<MemoryPaths, {
  readonly resolve: (cwd: string) => Effect.Effect<MemoryLocation, InvalidMemoryDirError | SettingsError>
}>() {}
