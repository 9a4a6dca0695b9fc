/**
 * Where Claude Code and Codex keep their hook configuration (user and project scope), and what `memdir doctor` reads
 * there: which of them run memdir's hooks without the `Stop` hook (docs/hooks.md#the-stop-hook). Read only: install
 * and uninstall edit these files in `commands/hooks.ts`.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
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
 * The hook files that run memdir's hooks but not on `Stop`: with automatic model calls on, extraction there runs
 * once per session (at `SessionEnd`) instead of after each turn. A file that is missing, unreadable, not a regular
 * file (a FIFO), over `MAX_AGENT_FILE_BYTES` or not a hook configuration is not reported (`hooks install` says what
 * is wrong with it).
 */
export const filesWithoutStopHook = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const files = yield* hookFiles(cwd)
    // a regular file of a settings file's size only: a FIFO there would block the read, a huge file fill memory
    const readable = (file: string) =>
      Effect.flatMap(fs.stat(file), (info) =>
        info.type === "File" && Number(info.size) <= MAX_AGENT_FILE_BYTES ?
          fs.readFileString(file) :
          Effect.fail(new Error(`${file}: not a regular file of at most ${MAX_AGENT_FILE_BYTES} bytes`)))
    const missing = yield* Effect.forEach(files, (hookFile) =>
      readable(hookFile.file).pipe(
        Effect.map((text): ReadonlyArray<HookFile> => {
          const config = HookConfig.parseConfig(hookFile.file, text)
          if (Result.isFailure(config)) return []
          const events = HookConfig.memdirEvents(config.success)
          return events.length > 0 && !events.includes("Stop") ? [hookFile] : []
        }),
        Effect.orElseSucceed(() => [])
      ))
    return missing.flat()
  })
