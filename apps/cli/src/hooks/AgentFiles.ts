/**
 * Where Claude Code and Codex keep their hook configuration (user and project scope), and what `memdir doctor` reads
 * there: which of them run memdir's hooks without the `Stop` hook (docs/hooks.md#the-stop-hook), and whether they
 * run `memdir-hook` on a `PATH` without the tools it needs; and where an agent finds a hook's program. Read only:
 * install and uninstall edit these files in `commands/hooks.ts`.
 */
import { isMissingFile } from "@memdir/core/Errors"
import { MemoryFs } from "@memdir/core/MemoryFs"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
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
 * The agents' hook files, each read and parsed once: a file that is missing, unreadable, not a regular file (a
 * FIFO), over `MAX_AGENT_FILE_BYTES` or not a hook configuration is left out (`hooks install` says what is wrong with
 * it). What `doctor` reports of them is taken from these (`withoutStopHook`, `hookScriptTools`).
 */
export const readHookFiles = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const files = yield* hookFiles(cwd)
    const read = yield* Effect.forEach(files, (hookFile) =>
      readAgentFile(hookFile.file).pipe(
        Effect.map(({ text }) => {
          if (text === undefined) return []
          const config = HookConfig.parseConfig(hookFile.file, text)
          return Result.isSuccess(config) ? [{ hookFile, config: config.success }] : []
        }),
        Effect.orElseSucceed(() => [])
      ))
    return read.flat()
  })

export type ReadHookFile = Effect.Success<ReturnType<typeof readHookFiles>>[number]

/**
 * The hook files that run memdir's hooks but not on `Stop`: with automatic model calls on, extraction there runs
 * once per session (at `SessionEnd`) instead of after each turn.
 */
export const withoutStopHook = (files: ReadonlyArray<ReadHookFile>): ReadonlyArray<HookFile> =>
  files.flatMap(({ config, hookFile }) => {
    const events = HookConfig.memdirEvents(config)
    return events.length > 0 && !events.includes("Stop") ? [hookFile] : []
  })

/**
 * The program a hook command starts (its first word, quotes taken off), when the agent would not find it: a path
 * that is not an executable file, or a name in no directory of `PATH` (the agent starts the command with the `PATH` it
 * has, usually yours). Undefined when it is found, and on Windows (`PATHEXT`) where memdir does not look.
 */
export const programNotFound = (command: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const first = /^\s*(?:"([^"]*)"|'([^']*)'|(\S+))/.exec(command)
  const program = first?.[1] ?? first?.[2] ?? first?.[3]
  if (program === undefined || program === "" || process.platform === "win32") return undefined
  const runnable = (file: string) => {
    try {
      NodeFs.accessSync(file, NodeFs.constants.X_OK)
      return NodeFs.statSync(file).isFile()
    } catch {
      return false
    }
  }
  if (program.includes("/")) return runnable(program) ? undefined : program
  const dirs = (env.PATH ?? "").split(NodePath.delimiter).filter((dir) => NodePath.isAbsolute(dir))
  return dirs.some((dir) => runnable(NodePath.join(dir, program))) ? undefined : program
}

/** The tools `memdir-hook` asks the hook daemon with (`curl`, `sha256sum`) and starts it with (`setsid`). */
export const HOOK_SCRIPT_TOOLS = ["curl", "sha256sum", "setsid"] as const

/**
 * Whether an agent's hook file runs memdir's hooks through `memdir-hook`, and which of the tools it needs are not on
 * this `PATH`: `undefined` when no hook file runs `memdir-hook`.
 */
export const hookScriptTools = (
  files: ReadonlyArray<ReadHookFile>,
  env: NodeJS.ProcessEnv = process.env
): { readonly missing: ReadonlyArray<string> } | undefined =>
  files.some(({ config }) =>
      HookConfig.memdirCommands(config).some((command) => /(?:^|[\s/"'])memdir-hook\b/.test(command))
    )
    ? { missing: HOOK_SCRIPT_TOOLS.filter((tool) => programNotFound(tool, env) !== undefined) }
    : undefined
