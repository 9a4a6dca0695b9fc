/**
 * The automatic-model-calls switch, pure: whether memdir may call a model from a program the user did not run by
 * hand — a hook (extraction and dream at session end, model recall on a prompt) or the MCP server (model recall).
 * An API key inherited from the agent's environment never turns these on by itself: each call is billed to the
 * key's owner. Resolved once, with the other settings, by `MemoryPaths` (the resolved location carries it).
 *
 * First that speaks:
 * 1. `MEMDIR_AUTOMATIC_MODEL_CALLS` (truthy → on, defined-falsy → off);
 * 2. `automaticModelCalls` in the policy file (on or off);
 * 3. `automaticModelCalls: false` in the project settings (a repository may always opt out);
 * 4. `automaticModelCalls` in the local, then the user settings (on or off);
 * 5. default off. A project's `automaticModelCalls: true` is ignored: a committed file never turns billing on.
 */
import * as Result from "effect/Result"
import { SettingsError } from "../../Errors.js"
import type { LoadedSettings, SettingsSource } from "../../Settings.js"
import { isEnvDefinedFalsy, isEnvTruthy } from "./paths.js"

export const AUTOMATIC_MODEL_CALLS_ENV = "MEMDIR_AUTOMATIC_MODEL_CALLS"
export const AUTOMATIC_MODEL_CALLS_KEY = "automaticModelCalls"

/** Whether automatic model calls are on, and which link of the chain decided. */
export interface AutomaticModelCalls {
  readonly enabled: boolean
  /** e.g. "env MEMDIR_AUTOMATIC_MODEL_CALLS", "user settings /…/settings.json", "default". */
  readonly enabledBy: string
}

export interface ModelCallsSetting {
  readonly source: SettingsSource
  readonly path: string
  readonly value: boolean
}

/** `automaticModelCalls` of every settings file that sets it, in priority order; a wrong type names file and key. */
export const readModelCallsSettings = (
  sources: LoadedSettings["sources"]
): Result.Result<ReadonlyArray<ModelCallsSetting>, SettingsError> => {
  const found: Array<ModelCallsSetting> = []
  for (const { path, settings, source } of sources) {
    const value = settings[AUTOMATIC_MODEL_CALLS_KEY]
    if (value === undefined) continue
    if (typeof value !== "boolean") {
      return Result.fail(
        new SettingsError({
          path,
          key: AUTOMATIC_MODEL_CALLS_KEY,
          detail: `wrong type: expected boolean, found ${value === null ? "null" : typeof value}`
        })
      )
    }
    found.push({ source, path, value })
  }
  return Result.succeed(found)
}

/** The chain over the env value and the settings found (see the module comment). */
export const resolveModelCallsEnabled = (
  envValue: string | undefined,
  settings: ReadonlyArray<ModelCallsSetting>
): AutomaticModelCalls => {
  if (isEnvTruthy(envValue)) return { enabled: true, enabledBy: `env ${AUTOMATIC_MODEL_CALLS_ENV}` }
  if (isEnvDefinedFalsy(envValue)) return { enabled: false, enabledBy: `env ${AUTOMATIC_MODEL_CALLS_ENV}` }
  const said = (entry: ModelCallsSetting): AutomaticModelCalls => ({
    enabled: entry.value,
    enabledBy: `${entry.source} settings ${entry.path}`
  })
  const policy = settings.find((entry) => entry.source === "policy")
  if (policy !== undefined) return said(policy)
  const projectOptOut = settings.find((entry) => entry.source === "project" && !entry.value)
  if (projectOptOut !== undefined) return said(projectOptOut)
  const trusted = settings.find((entry) => entry.source === "local" || entry.source === "user")
  if (trusted !== undefined) return said(trusted)
  return { enabled: false, enabledBy: "default" }
}

/** The whole switch from the loaded settings: a wrong type is a `SettingsError` naming the file and the key. */
export const resolveAutomaticModelCalls = (
  envValue: string | undefined,
  sources: LoadedSettings["sources"]
): Result.Result<AutomaticModelCalls, SettingsError> =>
  Result.map(readModelCallsSettings(sources), (found) => resolveModelCallsEnabled(envValue, found))
