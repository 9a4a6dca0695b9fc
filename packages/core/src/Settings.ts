/**
 * Settings: memdir's environment and the settings files, by source, with their trust level (SPEC §1).
 * CONTRACT (owned by the paths helper; implementation to be filled in).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { SettingsError } from "./Errors.js"

/** Where a setting came from. `project` is committed in the repo and never trusted for the directory. */
export type SettingsSource = "policy" | "flag" | "local" | "user" | "project"

export interface SettingsFile {
  readonly autoMemoryDirectory?: string | undefined
  readonly autoMemoryEnabled?: boolean | undefined
  readonly [key: string]: unknown
}

/** Environment and process-level inputs (from `Config`, so tests can supply a ConfigProvider). */
export interface MemdirEnv {
  /** MEMDIR_HOME, default `~/.memdir`. */
  readonly home: string
  /** The user's home directory, for `~/` expansion. */
  readonly userHome: string
  /** MEMDIR_MEMORY_DIR: full override of the memory directory. */
  readonly memoryDirOverride?: string | undefined
  /** MEMDIR_DISABLE_AUTO_MEMORY raw value (truthy → off, defined-falsy → forced on). */
  readonly disableAutoMemory?: string | undefined
  /** MEMDIR_SIMPLE (bare/simple mode → off). */
  readonly simpleMode: boolean
  /** MEMDIR_REMOTE without MEMDIR_REMOTE_MEMORY_DIR: remote without persistent storage → off. */
  readonly remoteWithoutStorage: boolean
  /** MEMDIR_POLICY_FILE, default `/etc/memdir/policy.json`. */
  readonly policyFile: string
  /** The `--memory-dir` CLI flag, when given. */
  readonly flagMemoryDir?: string | undefined
}

export interface LoadedSettings {
  /** Files in priority order policy, flag, local, user, project; missing files are absent. */
  readonly sources: ReadonlyArray<
    { readonly source: SettingsSource; readonly path: string; readonly settings: SettingsFile }
  >
}

export class Settings extends Context.Tag("@memdir/core/Settings")<Settings, {
  readonly env: MemdirEnv
  /** Reads the settings files that apply to a project root. */
  readonly load: (root: string) => Effect.Effect<LoadedSettings, SettingsError>
}>() {}
