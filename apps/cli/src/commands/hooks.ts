/**
 * `memdir hooks install | uninstall --agent claude|codex [--user|--project] [--dry-run]` (docs/hooks.md): writes or
 * removes memdir's entries in the agent's hook configuration — Claude Code's `settings.json`, Codex's `hooks.json`
 * — merging with what is there (`hooks/HookConfig.ts`). The file is written atomically (a temp file beside it, then
 * a rename; through a symlink, the file it points to), and a malformed file is refused before anything is written.
 * For Claude Code, install also turns its own auto memory off and adds the permission rules memdir needs
 * (docs/hooks.md#one-memory-in-claude-code), shows the diff first (and asks, on a terminal), and records what it
 * changed beside the hooks in `$MEMDIR_HOME/agent-settings.json`, so that uninstall takes back exactly that. For
 * Codex (user scope), install also lets its sandbox write memdir's memory and adds memdir's MCP server in its
 * `config.toml` (`hooks/CodexConfig.ts`, docs/hooks.md#codex-memory-and-mcp), marked so that uninstall takes out
 * exactly that.
 */
import { isInside } from "@memdir/core/Containment"
import { AgentConfigError, MemoryIoError } from "@memdir/core/Errors"
import { Settings } from "@memdir/core/Settings"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as NodeOs from "node:os"
import { askYesNo } from "../Ask.js"
import { common, jsonOption, locate, locationHandler, switchFlag } from "../Common.js"
import { configPath, MAX_AGENT_FILE_BYTES, programNotFound, readAgentFile } from "../hooks/AgentFiles.js"
import type { CodexConfigChange, CodexSetup } from "../hooks/CodexConfig.js"
import * as HookConfig from "../hooks/HookConfig.js"
import {
  askAutomaticModelCalls,
  automaticModelCallsBy,
  automaticModelCallsOn,
  TURN_OFF_HINT,
  TURN_ON_HINT,
  writeAutomaticModelCalls
} from "../ModelCalls.js"
import { printJson, thousands } from "../Output.js"

const agentOption = Flag.Literals("agent", ["claude", "codex"]).pipe(
  Flag.withDescription("Which agent CLI: claude (Claude Code) or codex (Codex)")
)
const projectOption = switchFlag("project").pipe(
  Flag.withDescription(
    "The project's file (<git root>/.claude/settings.json or <git root>/.codex/hooks.json, read in a trusted project)"
  )
)
const userOption = switchFlag("user").pipe(
  Flag.withDescription("Your user file (~/.claude/settings.json or $CODEX_HOME/hooks.json, ~/.codex/): the default")
)
const dryRunOption = switchFlag("dry-run").pipe(
  Flag.withDescription("Print the change as a diff; write nothing")
)
const keepAgentMemoryOption = switchFlag("keep-agent-memory").pipe(
  Flag.withDescription(
    "Claude Code: leave its own auto memory on (two memories in every session; the default turns it off)"
  )
)

const scopeOf = (args: { readonly project: boolean; readonly user: boolean }) =>
  args.project && args.user
    ? Effect.fail(new AgentConfigError({ path: "--project/--user", at: "", detail: "give one of them, not both" }))
    : Effect.succeed<HookConfig.Scope>(args.project ? "project" : "user")

/** The file's text, or undefined when there is none; the target of a symlink is the file memdir edits. */
const readTarget = (file: string) =>
  readAgentFile(file).pipe(
    Effect.mapError((error) =>
      error.reason === "NotRegularFile"
        ? new AgentConfigError({ path: file, at: "", detail: "is not a regular file" })
        : error.reason === "TooLarge"
        ? new AgentConfigError({
          path: file,
          at: "",
          detail: `is over the ${thousands(MAX_AGENT_FILE_BYTES)} bytes memdir reads (${error.detail})`
        })
        : new MemoryIoError({ op: error.op, path: file, detail: error.message })
    )
  )

/** Temp file beside the target, then rename: a reader (the agent) sees the old file or the new one. */
const writeAtomically = (target: string, text: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const io = (op: string) => (error: { readonly message: string }) =>
      new MemoryIoError({ op, path: target, detail: error.message })
    yield* fs.makeDirectory(path.dirname(target), { recursive: true }).pipe(Effect.mapError(io("create directory")))
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.memdir-${process.pid}.tmp`)
    yield* fs.writeFileString(temp, text, { mode: 0o600 }).pipe(Effect.mapError(io("write")))
    yield* fs.rename(temp, target).pipe(
      Effect.mapError(io("rename")),
      Effect.tapError(() => Effect.ignore(fs.remove(temp)))
    )
  })

/**
 * `$MEMDIR_HOME/agent-settings.json`: per settings file (its real path), what install changed there beside the hooks
 * (`HookConfig.SettingsChange`), so that uninstall takes back exactly that and nothing the user had set before.
 */
const recordFile = Effect.map(Settings, (settings) => `${settings.env.home}/agent-settings.json`)

const readRecords = Effect.gen(function*() {
  const file = yield* recordFile
  const { text } = yield* readTarget(file)
  return yield* Effect.fromResult(HookConfig.parseRecords(file, text))
})

const writeRecords = (records: HookConfig.InstallRecords) =>
  Effect.gen(function*() {
    const file = yield* recordFile
    const { target } = yield* readTarget(file)
    yield* writeAtomically(target, HookConfig.renderRecords(records))
  })

/** Install after install: the first record of a value before memdir wins, added rules accumulate. */
const mergeRecord = (
  earlier: HookConfig.SettingsChange | undefined,
  later: HookConfig.SettingsChange
): HookConfig.SettingsChange =>
  earlier === undefined ? later : {
    autoMemoryEnabled: earlier.autoMemoryEnabled !== undefined ? earlier.autoMemoryEnabled : later.autoMemoryEnabled,
    allow: [...(earlier.allow ?? []), ...(later.allow ?? []).filter((rule) => !(earlier.allow ?? []).includes(rule))],
    created: earlier.created ?? later.created
  }

/** On a terminal, after the diff: write it? (default No). `undefined` when stdin or stdout is not a terminal. */
const confirmWrite = (file: string): Effect.Effect<boolean | undefined> => askYesNo(`Write these changes to ${file}?`)

/**
 * The rules for memdir's memory base, and for this project's memory directory when it lies elsewhere
 * (`MEMDIR_MEMORY_DIR`, `autoMemoryDirectory`), as Claude Code reads a path in a rule.
 */
const claudeSetup = (keepAgentMemory: boolean, cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const { memoryBase, userHome } = (yield* Settings).env
    const { memoryDir } = yield* locate(cwd)
    const dirs = isInside(memoryBase, memoryDir, { allowRoot: true }) ? [memoryBase] : [memoryBase, memoryDir]
    return {
      allow: HookConfig.claudeAllowRules(dirs.map((dir) => HookConfig.ruleRoot(dir, userHome))),
      autoMemoryOff: !keepAgentMemory
    } satisfies HookConfig.ClaudeSetup
  })

type Action = "install" | "uninstall"

interface ModelCallsArgs {
  readonly cwd: Option.Option<string>
  readonly dryRun: boolean
  readonly json: boolean
  readonly modelCalls: Option.Option<"on" | "off">
}

/** Where the switch stands for the project, and who decided. */
const modelCallsState = (cwd: Option.Option<string>) =>
  Effect.map(Effect.option(locate(cwd)), (location) =>
    Option.match(location, {
      onNone: () => ({ on: false, by: "unknown: the project's settings could not be read" }),
      onSome: (l) => ({ on: automaticModelCallsOn(l), by: automaticModelCallsBy(l) })
    }))

/**
 * The automatic-model-calls switch (docs/configuration.md#automatic-model-calls), asked before the hooks are
 * written, since it decides whether the `Stop` hook has work (`HookConfig.eventsFor`): `--model-calls` answers;
 * without it, `install` on a terminal asks (the default: as they stand, so Enter changes nothing); anywhere else
 * there is no answer (undefined).
 */
const decideModelCalls = (action: Action, args: ModelCallsArgs) =>
  Option.isSome(args.modelCalls)
    ? Effect.succeed(args.modelCalls.value === "on")
    : action === "install" && !args.json && !args.dryRun
    ? Effect.flatMap(modelCallsState(args.cwd), (now) => askAutomaticModelCalls(now.on))
    : Effect.succeed(undefined)

/**
 * After the hooks: the answer is written to the user settings; without one, `install` only says where the switch
 * stands (stderr), and `uninstall` leaves it alone.
 */
const settleModelCalls = (action: Action, args: ModelCallsArgs, answer: boolean | undefined) =>
  Effect.gen(function*() {
    if (answer === undefined) {
      if (action === "uninstall" || args.json) return
      const now = yield* modelCallsState(args.cwd)
      return yield* Console.error(
        now.on
          ? `memdir: automatic model calls are on (${now.by}): the hooks run extraction and the dream with your key ` +
            `after each turn and session; ${TURN_OFF_HINT}`
          : `memdir: automatic model calls are off (${now.by}): the hooks never call a model, even with a key; ` +
            TURN_ON_HINT
      )
    }
    if (args.dryRun) {
      return yield* Console.log(`(dry run: "automaticModelCalls": ${answer} was not written)`)
    }
    const file = yield* writeAutomaticModelCalls(answer)
    if (args.json) return
    const now = yield* modelCallsState(args.cwd)
    yield* Console.log(
      `automatic model calls: wrote "automaticModelCalls": ${answer} to ${file}` +
        (now.on === answer ? "" : `; still ${now.on ? "on" : "off"} here: ${now.by} decides`)
    )
  })

const modelCallsOption = <A extends "on" | "off">(choices: ReadonlyArray<A>, description: string) =>
  Flag.Literals("model-calls", choices).pipe(Flag.withDescription(description), Flag.optional)

const run = (
  action: Action,
  args: {
    readonly cwd: Option.Option<string>
    readonly agent: HookConfig.Agent
    readonly project: boolean
    readonly user: boolean
    readonly dryRun: boolean
    readonly json: boolean
    readonly command?: Option.Option<string>
    readonly keepAgentMemory?: boolean
  },
  events: ReadonlyArray<string> = HookConfig.ALL_EVENTS
) =>
  Effect.gen(function*() {
    const scope = yield* scopeOf(args)
    const file = yield* configPath(args.agent, scope, args.cwd)
    const { target, text } = yield* readTarget(file)
    const config = yield* Effect.fromResult(HookConfig.parseConfig(file, text))
    const command = Option.getOrElse(args.command ?? Option.none(), () => HookConfig.DEFAULT_COMMAND)
    const records = args.agent === "claude" ? yield* readRecords : {}
    const change = action === "install"
      ? HookConfig.install(
        config,
        args.agent,
        command,
        args.agent === "claude" ? yield* claudeSetup(args.keepAgentMemory === true, args.cwd) : undefined,
        events
      )
      : HookConfig.uninstall(config, records[target])
    const changed = HookConfig.isChange(change)
    const after = changed ? HookConfig.renderConfig(change.config, text) : text ?? ""
    const diff = changed ? HookConfig.lineDiff(file, text ?? "", after) : ""
    const agent = HookConfig.agentName[args.agent]
    // Claude Code's settings change beyond hooks (its memory, its permissions): the diff comes first, a terminal asks
    const asks = action === "install" && changed && !args.dryRun && !args.json &&
      !HookConfig.isEmptySettingsChange(change.settings)
    if (asks) yield* Console.log(diff.replace(/\n$/, ""))
    if (asks && (yield* confirmWrite(file)) === false) {
      yield* Console.log(`nothing written: ${file} is as it was`)
      return "declined" as const
    }
    if (changed && !args.dryRun) {
      yield* writeAtomically(target, after)
      if (args.agent === "claude") {
        const { [target]: recorded, ...others } = records
        if (action === "install" && !HookConfig.isEmptySettingsChange(change.settings)) {
          yield* writeRecords({ ...others, [target]: mergeRecord(recorded, change.settings) })
        } else if (action === "uninstall" && recorded !== undefined) {
          yield* writeRecords(others)
        }
      }
    }
    const codex = args.agent === "codex" ? yield* codexConfigStep(action, scope, file, args) : undefined
    const missing = action === "install" ? programNotFound(command) : undefined
    const warnings = missing === undefined ? [] : [notFoundWarning(missing, agent)]
    for (const warning of warnings) yield* Console.error(warning)
    if (args.json) {
      return yield* printJson({
        action,
        agent: args.agent,
        scope,
        path: file,
        changed,
        dryRun: args.dryRun,
        events: change.events,
        ...(action === "install" ? { removedEvents: change.removed ?? [] } : {}),
        settings: change.settings,
        diff,
        ...(codex === undefined ? {} : { codexConfig: codex }),
        ...(warnings.length === 0 ? {} : { warnings })
      })
    }
    if (!changed) {
      return yield* Console.log(
        action === "install"
          ? `memdir hooks for ${agent} are already in ${file}`
          : `no memdir hooks for ${agent} in ${file}: nothing to remove`
      )
    }
    if (args.dryRun) {
      yield* Console.log(diff.replace(/\n$/, ""))
      return yield* Console.log(`(dry run: ${file} was not written)`)
    }
    const removed = change.removed ?? []
    if (action === "uninstall" || change.events.length > 0 || removed.length === 0) {
      yield* Console.log(
        `${action === "install" ? "installed" : "removed"} memdir hooks for ${agent} ` +
          `(${
            change.events.length > 0
              ? change.events.join(", ")
              : action === "install"
              ? "already there"
              : "none were left"
          }) ` +
          `${action === "install" ? "in" : "from"} ${file}`
      )
    }
    if (removed.length > 0) {
      yield* Console.log(
        `took memdir's ${removed.join(", ")} hook out of ${file}: ${noStopHook}`
      )
    } else if (action === "install" && change.events.length > 0 && !events.includes("Stop")) {
      yield* Console.log(`no Stop hook: ${noStopHook}`)
    }
    const settingsNote = describeSettings(action, change.settings)
    if (settingsNote !== undefined) yield* Console.log(settingsNote)
    if (action === "install" && args.agent === "claude" && !(yield* claudeRunsMemdirMcp(args.cwd))) {
      yield* Console.log(claudeMcpNote)
    }
    if (action === "install" && args.agent === "codex") yield* Console.log(codexTrustNote(scope))
    if (
      action === "install" && args.agent === "claude" && scope === "project" && (change.settings.allow ?? []).length > 0
    ) {
      yield* Console.log(claudeTrustNote)
    }
  })

/** What install says when the hooks' program is not where the agent looks for it. */
const notFoundWarning = (program: string, agent: string) =>
  `memdir: the hooks run \`${program}\`, which is not on your PATH: ${agent} would fail to start every hook. ` +
  "Install memdir (`npm i -g @memdir/cli` brings `memdir` and `memdir-hook`), or give `--command` a full path"

/**
 * The MCP server's command for a hook command: `memdir hook …` → `memdir mcp`, `npx @memdir/cli hook` →
 * `npx @memdir/cli mcp`, `…/bin/memdir-hook …` → `…/bin/memdir mcp`.
 */
const mcpCommandFor = (hookCommand: string): CodexSetup["mcp"] => {
  const words = hookCommand.replace(/(?:\s+hook|(?<=memdir)-hook)(?:\s.*)?$/, "").trim().split(/\s+/)
  return words.length === 0 || words.some((word) => /["'\\]/.test(word))
    ? { command: "memdir", args: ["mcp"] }
    : { command: words[0]!, args: [...words.slice(1), "mcp"] }
}

/**
 * Codex's `config.toml` beside its `hooks.json` (user scope only: a project's file is shared, and memdir's root is
 * yours): install adds `writable_roots` for memdir's memory and the `memdir` MCP server, uninstall takes out what
 * install marked. The diff comes first; a terminal is asked (default No). Project scope: a note only.
 */
const codexConfigStep = (
  action: Action,
  scope: HookConfig.Scope,
  hooksFile: string,
  args: {
    readonly cwd: Option.Option<string>
    readonly dryRun: boolean
    readonly json: boolean
    readonly command?: Option.Option<string>
  }
) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const file = path.join(path.dirname(hooksFile), "config.toml")
    if (scope === "project") {
      const note = "memdir leaves a project's .codex/config.toml alone: its sandbox root and MCP server are yours; " +
        "run `memdir hooks install --agent codex` (user scope) for them"
      if (action === "install" && !args.json) yield* Console.log(note)
      return { path: file, changed: false, keys: [], notes: action === "install" ? [note] : [], diff: "" }
    }
    const { target, text } = yield* readTarget(file)
    // loaded only for Codex: it brings a TOML parser no other command needs at start-up
    const CodexConfig = yield* Effect.promise(() => import("../hooks/CodexConfig.js"))
    let change: CodexConfigChange
    if (action === "install") {
      const { memoryBase } = (yield* Settings).env
      const { memoryDir } = yield* locate(args.cwd)
      const roots = isInside(memoryBase, memoryDir, { allowRoot: true }) ? [memoryBase] : [memoryBase, memoryDir]
      const command = Option.getOrElse(args.command ?? Option.none(), () => HookConfig.DEFAULT_COMMAND)
      change = yield* Effect.fromResult(
        CodexConfig.install(file, text, {
          writableRoots: roots.map((root) => root.replace(/\/+$/, "")),
          mcp: mcpCommandFor(command)
        })
      )
    } else {
      change = CodexConfig.uninstall(text)
    }
    const changed = change.text !== (text ?? "")
    const diff = changed ? HookConfig.lineDiff(file, text ?? "", change.text) : ""
    const result = { path: file, changed, keys: change.keys, notes: change.notes, diff }
    if (!args.json) {
      if (changed) yield* Console.log(diff.replace(/\n$/, ""))
      for (const note of change.notes) yield* Console.log(note)
    }
    if (!changed) return result
    if (args.dryRun) {
      if (!args.json) yield* Console.log(`(dry run: ${file} was not written)`)
      return result
    }
    if (action === "install" && !args.json && (yield* confirmWrite(file)) === false) {
      yield* Console.log(`nothing written: ${file} is as it was`)
      return { ...result, changed: false }
    }
    yield* writeAtomically(target, change.text)
    if (!args.json) {
      yield* Console.log(
        action === "install"
          ? `Codex: ${
            change.keys.join(" and ")
          } added to ${file} (memdir's memory writable in the sandbox, its MCP tools)`
          : `Codex: memdir's ${change.keys.join(" and ")} removed from ${file}`
      )
    }
    return result
  })

/** One line on what changed beside the hooks (docs/hooks.md#one-memory-in-claude-code). */
const describeSettings = (action: Action, settings: HookConfig.SettingsChange): string | undefined => {
  const parts = [
    ...(settings.autoMemoryEnabled === undefined ? [] : [
      action === "install"
        ? "Claude Code's own auto memory turned off (\"autoMemoryEnabled\": false): memdir is its memory"
        : `Claude Code's own auto memory back as it was (${
          settings.autoMemoryEnabled === null ? "autoMemoryEnabled unset" : `"autoMemoryEnabled": true`
        })`
    ]),
    ...((settings.allow ?? []).length === 0 ? [] : [
      `${action === "install" ? "allowed" : "removed the rules"} ${(settings.allow ?? []).join(", ")}`
    ])
  ]
  return parts.length === 0 ? undefined : parts.join("; ")
}

/**
 * Claude Code 2.1.332 ignores a project file's `permissions.allow` until the workspace is trusted ("Ignoring 1
 * permissions.allow entry from .claude/settings.json: this workspace has not been trusted"), though it takes the
 * project's `autoMemoryEnabled: false` at once (docs/hooks.md#one-memory-in-claude-code).
 */
const claudeTrustNote = "Claude Code applies a project's permission rules only in a workspace you trust: start " +
  "`claude` in it once and accept the trust dialog (until then a Write into memdir's directory is denied)."

/**
 * Whether Claude Code already starts an MCP server named `memdir` here: in `~/.claude.json` (user scope, or this
 * project's local scope) or the project's `.mcp.json`. Only for a hint: a file that cannot be read or parsed counts
 * as "not there", and the hint is shown.
 */
const claudeRunsMemdirMcp = (cwd: Option.Option<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = (yield* locate(cwd)).root.root
    const json = (file: string) =>
      fs.readFileString(file).pipe(
        Effect.map((text): any => JSON.parse(text)),
        Effect.option,
        Effect.map(Option.getOrUndefined)
      )
    const state = yield* json(path.join(NodeOs.homedir(), ".claude.json"))
    const project = yield* json(path.join(root, ".mcp.json"))
    return [state?.mcpServers, state?.projects?.[root]?.mcpServers, project?.mcpServers].some((servers) =>
      typeof servers === "object" && servers !== null && "memdir" in servers
    )
  })

/** Why install leaves the Stop hook out (docs/hooks.md#the-stop-hook). */
const noStopHook = "with automatic model calls off it would start nothing after each turn and still cost every " +
  "prompt a Node start; `memdir hooks install --model-calls on` adds it"

/** memdir's MCP tools (docs/mcp.md) are not set up by `hooks install`: the agent's own command adds them. */
const claudeMcpNote = "For memdir's MCP tools in Claude Code (allowed by the mcp__memdir rule): " +
  "`claude mcp add -s user memdir -- memdir mcp` (docs/mcp.md). Claude Code waits for its MCP servers before the " +
  "first request, so the server's start-up is added to every session (~0.6 s on a 2-core machine); the hooks " +
  "alone already bring memory to each prompt."

/** Codex runs a hook from a user or project file only once the user has trusted it (docs/hooks.md#codex). */
const codexTrustNote = (scope: HookConfig.Scope) =>
  [
    "Codex runs these hooks only after you trust them: start `codex` and choose \"Trust all and continue\" when it",
    "asks to review hooks (or type /hooks, then t). `codex exec` skips untrusted hooks without a word.",
    ...(scope === "project"
      ? ["A project's .codex/ is read only in a trusted project (`codex exec --trust` once in it)."]
      : [])
  ].join("\n")

const installCommand = Command.make(
  "install",
  {
    ...common,
    json: jsonOption,
    agent: agentOption,
    project: projectOption,
    user: userOption,
    dryRun: dryRunOption,
    keepAgentMemory: keepAgentMemoryOption,
    command: Flag.String("command").pipe(
      Flag.withDescription(
        `The command the hooks run (default: "${HookConfig.DEFAULT_COMMAND}"; memdir's \`hook\`, options after it)`
      ),
      Flag.optional
    ),
    modelCalls: modelCallsOption(
      ["on", "off"],
      "Turn automatic model calls (extraction and dream at session end, with your key) on or off in your user " +
        "settings; without it a terminal is asked (default No)"
    )
  },
  locationHandler((args) =>
    Option.isSome(args.command) && !HookConfig.isMemdirCommand(args.command.value)
      ? Effect.fail(
        new AgentConfigError({
          path: "--command",
          at: "",
          detail: `${
            JSON.stringify(args.command.value)
          } must run memdir's \`hook\` (e.g. "npx @memdir/cli hook", "memdir hook --selector model")`
        })
      )
      : Effect.gen(function*() {
        const answer = yield* decideModelCalls("install", args)
        // the Stop hook only where it has work: automatic model calls on (as answered, else as they stand here)
        const on = answer ?? (yield* modelCallsState(args.cwd)).on
        const outcome = yield* run("install", args, HookConfig.eventsFor(on))
        if (outcome !== "declined") yield* settleModelCalls("install", args, answer)
      })
  )
).pipe(
  Command.withDescription("Add memdir's hooks to Claude Code's or Codex's configuration (merged, never clobbered)")
)

const uninstallCommand = Command.make(
  "uninstall",
  {
    ...common,
    json: jsonOption,
    agent: agentOption,
    project: projectOption,
    user: userOption,
    dryRun: dryRunOption,
    modelCalls: modelCallsOption(["off"], "Also turn automatic model calls off in your user settings")
  },
  locationHandler((args) =>
    Effect.gen(function*() {
      const answer = yield* decideModelCalls("uninstall", args)
      yield* run("uninstall", args)
      yield* settleModelCalls("uninstall", args, answer)
    })
  )
).pipe(Command.withDescription("Remove exactly the hooks `memdir hooks install` added"))

export const hooksCommand = Command.make("hooks").pipe(
  Command.withDescription("Install or remove memdir's hooks in an agent CLI (Claude Code, Codex)"),
  Command.withSubcommands([installCommand, uninstallCommand])
)
