/**
 * The team switch and the team remote, pure: which settings file (or env value) speaks first. Resolved once, with
 * the other settings, by `MemoryPaths` (the resolved location says whether team memory is on).
 *
 * The switch, first that speaks:
 * 1. auto memory off → off: disabling auto memory disables team memory, its prompt section and its sync;
 * 2. `MEMDIR_TEAM_MEMORY` (truthy → on, defined-falsy → off);
 * 3. `teamMemory` in the policy file (on or off);
 * 4. `teamMemory: false` in the project settings (a repository may always opt out);
 * 5. `teamMemory` in the local, then the user settings (on or off);
 * 6. default off. A project's `teamMemory: true` is ignored.
 * `teamRemote` likewise comes from policy, local or user settings only.
 */
import * as Result from "effect/Result"
import { SettingsError } from "../../Errors.js"
import type { LoadedSettings, SettingsSource } from "../../Settings.js"
import { isEnvDefinedFalsy, isEnvTruthy } from "./paths.js"

export const TEAM_MEMORY_ENV = "MEMDIR_TEAM_MEMORY"

/** What the team switch and remote resolved to, and who decided. */
export interface TeamSwitch {
  readonly enabled: boolean
  /** Which link of the team switch decided (e.g. "env MEMDIR_TEAM_MEMORY", "user settings /…/settings.json"). */
  readonly enabledBy: string
  /** `teamRemote` from a trusted settings file, when set. */
  readonly remote?: string | undefined
  /** The file that set `remote`. */
  readonly remoteSource?: string | undefined
}

export interface TeamSettingValue<A> {
  readonly source: SettingsSource
  readonly path: string
  readonly value: A
}

export interface TeamSettings {
  /** `teamMemory` of every settings file that sets it, in priority order. */
  readonly switches: ReadonlyArray<TeamSettingValue<boolean>>
  /** `teamRemote` of every settings file that sets it, in priority order (project included, for reporting). */
  readonly remotes: ReadonlyArray<TeamSettingValue<string>>
}

/**
 * Refuses remotes git would read as an option (`-u…`, `--upload-pack=…`) or that hide a control character; any
 * real git URL (https, ssh, scp-like, a local path) passes.
 */
export const validateTeamRemote = (path: string, value: string): Result.Result<string, SettingsError> => {
  const remote = value.trim()
  const refuse = (detail: string) => Result.fail(new SettingsError({ path, key: "teamRemote", detail }))
  if (remote.length === 0) return refuse("must not be empty")
  if (remote.startsWith("-")) return refuse("must not start with '-' (git would read it as an option)")

  if (/[\u0000-\u001f\u007f]/.test(remote)) return refuse("must not contain control characters")
  return Result.succeed(remote)
}

/** The team keys of the loaded settings files, type-checked (a wrong type is a `SettingsError` naming the file). */
export const readTeamSettings = (
  sources: LoadedSettings["sources"]
): Result.Result<TeamSettings, SettingsError> => {
  const switches: Array<TeamSettingValue<boolean>> = []
  const remotes: Array<TeamSettingValue<string>> = []
  for (const { path, settings, source } of sources) {
    const enabled = settings.teamMemory
    if (enabled !== undefined) {
      if (typeof enabled !== "boolean") {
        return Result.fail(
          new SettingsError({
            path,
            key: "teamMemory",
            detail: `wrong type: expected boolean, found ${typeof enabled}`
          })
        )
      }
      switches.push({ source, path, value: enabled })
    }
    const remote = settings.teamRemote
    if (remote !== undefined) {
      if (typeof remote !== "string") {
        return Result.fail(
          new SettingsError({ path, key: "teamRemote", detail: `wrong type: expected string, found ${typeof remote}` })
        )
      }
      const valid = validateTeamRemote(path, remote)
      if (Result.isFailure(valid)) return Result.fail(valid.failure)
      remotes.push({ source, path, value: valid.success })
    }
  }
  return Result.succeed({ switches, remotes })
}

/** The team switch (see the module comment for the chain). */
export const resolveTeamEnabled = (
  autoMemory: { readonly enabled: boolean; readonly enabledBy: string },
  envValue: string | undefined,
  switches: TeamSettings["switches"]
): { readonly enabled: boolean; readonly enabledBy: string } => {
  if (!autoMemory.enabled) return { enabled: false, enabledBy: `auto memory is disabled (${autoMemory.enabledBy})` }
  if (isEnvTruthy(envValue)) return { enabled: true, enabledBy: `env ${TEAM_MEMORY_ENV}` }
  if (isEnvDefinedFalsy(envValue)) return { enabled: false, enabledBy: `env ${TEAM_MEMORY_ENV}` }
  const said = (entry: TeamSettingValue<boolean>) => ({
    enabled: entry.value,
    enabledBy: `${entry.source} settings ${entry.path}`
  })
  const policy = switches.find((entry) => entry.source === "policy")
  if (policy !== undefined) return said(policy)
  const projectOptOut = switches.find((entry) => entry.source === "project" && !entry.value)
  if (projectOptOut !== undefined) return said(projectOptOut)
  const trusted = switches.find((entry) => entry.source === "local" || entry.source === "user")
  if (trusted !== undefined) return said(trusted)
  return { enabled: false, enabledBy: "default" }
}

/** `teamRemote` from the first trusted source (policy, local, user) that sets it; project settings never count. */
export const resolveTeamRemote = (
  remotes: TeamSettings["remotes"]
): { readonly remote: string; readonly source: string } | undefined => {
  const trusted = remotes.find((entry) =>
    entry.source === "policy" || entry.source === "local" || entry.source === "user"
  )
  return trusted === undefined ? undefined : { remote: trusted.value, source: trusted.path }
}

/** The whole switch from the loaded settings: a wrong type or an unsafe remote is a `SettingsError`. */
export const resolveTeamSwitch = (
  autoMemory: { readonly enabled: boolean; readonly enabledBy: string },
  envValue: string | undefined,
  sources: LoadedSettings["sources"]
): Result.Result<TeamSwitch, SettingsError> =>
  Result.map(readTeamSettings(sources), (team) => {
    const switched = resolveTeamEnabled(autoMemory, envValue, team.switches)
    const remote = resolveTeamRemote(team.remotes)
    return { ...switched, ...(remote === undefined ? {} : { remote: remote.remote, remoteSource: remote.source }) }
  })
