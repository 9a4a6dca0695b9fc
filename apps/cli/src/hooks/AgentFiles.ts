/**
 * Where Claude Code and Codex keep their hook configuration (user and project scope), and what `memdir doctor` reads
 * there: which of them run memdir's hooks without the `Stop` hook (docs/hooks.md#the-stop-hook). Read only: install
 * and uninstall edit these files in `commands/hooks.ts`.
 */
import { isMissingFile } from "@memdir/core/Errors"
import { MemoryFs } from "@memdir/core/MemoryFs"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as NodeOs from "node:os"
import { locate } from "../Common.js"
import * as HookConfig from "./HookConfig.js"

/** Where an agent keeps its hook configuration, per scope. */
export const configPath = (agent: HookConfig.Agent, scope: HookConfig.Scope, cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    if (scope === "project") {
      const root = (yield* locate(cwd)).root.root
      return agent === "claude" ? path.join(root, ".claude", "settings.json") : path.join(root, ".codex", "hooks.json")
    }
    const home = NodeOs.homedir()
    if (agent === "claude") return path.join(home, ".claude", "settings.json")
    const codexHome = process.env.CODEX_HOME
    return path.join(
      codexHome !== undefined && codexHome !== "" ? path.resolve(codexHome) : path.join(home, ".codex"),
      "hooks.json"
    )
  })

/** The most of an agent's settings or hook file memdir reads (`hooks install` refuses a larger one, `doctor` skips it). */
export const MAX_AGENT_FILE_BYTES = 4 * 1024 * 1024

/** The agent hook files memdir's `install` may have written, for the project at `cwd`. */
const hookFiles = (cwd: Option.Option<string>) =>
  Effect.forEach(
    [["claude", "user"], ["claude", "project"], ["codex", "user"], ["codex", "project"]] as const,
    ([agent, scope]) => Effect.map(configPath(agent, scope, cwd), (file): HookFile => ({ agent, scope, file }))
  )

/** An agent's hook configuration file. */
export interface HookFile {
  readonly agent: HookConfig.Agent
  readonly scope: HookConfig.Scope
  readonly file: string
}

/**
 * An agent's settings or hook file as memdir reads one: through links to the file they name (a dotfiles manager's),
 * a regular file of at most `MAX_AGENT_FILE_BYTES`, opened without blocking (a FIFO is `NotRegularFile`, never a
 * hang; `MemoryFs.readFile`). `text` is undefined when there is no file; `target` is the file to write.
 */
export const readAgentFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const target = yield* fs.realPathOfDeepestExisting(file)
    const text = yield* fs.readFile(target, { maxBytes: MAX_AGENT_FILE_BYTES }).pipe(
      Effect.map((read): string | undefined => read.text),
      Effect.catchIf(isMissingFile, () => Effect.succeed(undefined))
    )
    return { target, text }
  })

/**
 * The hook files that run memdir's hooks but not on `Stop`: with automatic model calls on, extraction there runs
 * once per session (at `SessionEnd`) instead of after each turn. A file that is missing, unreadable, not a regular
 * file (a FIFO), over `MAX_AGENT_FILE_BYTES` or not a hook configuration is not reported (`hooks install` says what
 * is wrong with it).
 */
export const filesWithoutStopHook = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const files = yield* hookFiles(cwd)
    const missing = yield* Effect.forEach(files, (hookFile) =>
      readAgentFile(hookFile.file).pipe(
        Effect.map(({ text }): ReadonlyArray<HookFile> => {
          if (text === undefined) return []
          const config = HookConfig.parseConfig(hookFile.file, text)
          if (Result.isFailure(config)) return []
          const events = HookConfig.memdirEvents(config.success)
          return events.length > 0 && !events.includes("Stop") ? [hookFile] : []
        }),
        Effect.orElseSucceed(() => [])
      ))
    return missing.flat()
  })
