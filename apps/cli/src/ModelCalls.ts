/**
 * Automatic model calls (docs/configuration.md#automatic-model-calls): what a hook or the MCP server — programs the
 * user did not run by hand — may spend on a model. A key in the agent's environment is not enough: the project's
 * `automaticModelCalls` switch (resolved on the `MemoryLocation`) must be on too. The commands a person types
 * (`memdir recall`, `extract`, `dream`) use a configured key as before.
 */
import { ioErrorOf, isMissingFile, switchSourceText } from "@memdir/core/Errors"
import { MemoryFs } from "@memdir/core/MemoryFs"
import { AUTOMATIC_MODEL_CALLS_ENV, AUTOMATIC_MODEL_CALLS_KEY, type MemoryLocation } from "@memdir/core/MemoryPaths"
import { MAX_SETTINGS_BYTES, parseSettingsFile, Settings } from "@memdir/core/Settings"
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { askYesNo } from "./Ask.js"

/** Whether this location lets memdir call a model on its own (absent switch: off). */
export const automaticModelCallsOn = (location: MemoryLocation): boolean =>
  location.automaticModelCalls?.enabled === true

/** Who decided, as data (`--json`): the switch's `enabledBy`, "default" when the location carries no switch. */
export const automaticModelCallsSource = (location: MemoryLocation): string =>
  location.automaticModelCalls?.enabledBy ?? "default"

/** Who decided, for messages: "automatic model calls are off (the default)". */
export const automaticModelCallsBy = (location: MemoryLocation): string =>
  switchSourceText(automaticModelCallsSource(location))

/** How to turn them on, in one clause. */
export const TURN_ON_HINT = `turn them on with "${AUTOMATIC_MODEL_CALLS_KEY}": true in $MEMDIR_HOME/settings.json ` +
  `(\`memdir hooks install --model-calls on\`) or ${AUTOMATIC_MODEL_CALLS_ENV}=1`

/** How to turn them off, in one clause. */
export const TURN_OFF_HINT = `turn them off with "${AUTOMATIC_MODEL_CALLS_KEY}": false in $MEMDIR_HOME/settings.json ` +
  `(\`memdir hooks install --model-calls off\`) or ${AUTOMATIC_MODEL_CALLS_ENV}=0`

// ---------------------------------------------------------------------------------------------------------------
// Writing the switch: `memdir hooks install --model-calls on|off` (or its question)
// ---------------------------------------------------------------------------------------------------------------

/**
 * Sets `automaticModelCalls` in the user settings file (`$MEMDIR_HOME/settings.json`), every other key kept: read
 * like every settings file (size-bounded, a JSON object), then written atomically (temp file, rename) with mode
 * 0600; through a link (a dotfiles manager's), the file it points to. Returns the file's path.
 */
export const writeAutomaticModelCalls = (enabled: boolean) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const fs = yield* MemoryFs
    const file = NodePath.join(settings.env.home, "settings.json")
    const target = yield* fs.realPathOfDeepestExisting(file).pipe(Effect.mapError(ioErrorOf("resolve", file)))
    const text = yield* fs.readFile(target, { maxBytes: MAX_SETTINGS_BYTES }).pipe(
      Effect.map((read) => read.text),
      Effect.catchIf(isMissingFile, () => Effect.succeed("")),
      Effect.mapError(ioErrorOf("read", file))
    )
    const current = yield* Effect.fromResult(parseSettingsFile(file, text))
    const next = { ...current, [AUTOMATIC_MODEL_CALLS_KEY]: enabled }
    yield* fs.writeFileAtomic(target, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 }).pipe(
      Effect.mapError(ioErrorOf("write", file))
    )
    return file
  })

/**
 * Asks on the terminal, the default being where the switch stands (`on`): pressing Enter on a re-install keeps it;
 * `undefined` (no answer) when stdin or stdout is not a terminal, or at end of input.
 */
export const askAutomaticModelCalls = (on: boolean): Effect.Effect<boolean | undefined> =>
  askYesNo(
    `${on ? "Keep automatic model calls on?" : "Turn on automatic model calls?"} After each turn and at the end of ` +
      "each session the hooks then run extraction and the dream with your ANTHROPIC_API_KEY, billed to it " +
      "(`memdir doctor` shows the models and an estimate of the cost).",
    // Ctrl-D: no answer, so the switch stays as it is (and the hooks follow it)
    { yes: on, ended: undefined }
  )
