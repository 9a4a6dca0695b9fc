/**
 * `memdir hooks install | uninstall` as pure functions over an agent's configuration (docs/hooks.md): Claude Code's
 * `settings.json` and Codex's `hooks.json` (checked against codex-cli 0.171.0) share the shape `{"hooks": {Event: [{matcher?, hooks: [{type, command,
 * timeout}]}]}}`. Install adds one group per event running `memdir hook` unless one is already there; uninstall
 * removes exactly memdir's handlers (found by their command) and the groups, events and `hooks` object that only
 * they filled. Every other key, event, group and handler is kept as it was. A file of another shape is refused
 * with an `AgentConfigError` naming where.
 *
 * For Claude Code, install also makes memdir the one memory of the session (docs/hooks.md#one-memory-in-claude-code):
 * `autoMemoryEnabled: false` turns Claude Code's own auto memory off (its `# Memory` section and its
 * `~/.claude/projects/<p>/memory/`), and `permissions.allow` gets the rules that let the model read and write the
 * memory directory and call memdir's MCP tools. What it changed there is returned as a `SettingsChange`, kept by the
 * caller, and given back to uninstall, which takes back exactly that.
 */
import { AgentConfigError } from "@memdir/core/Errors"
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

export type Agent = "claude" | "codex"
export type Scope = "user" | "project"

export const agentName: Record<Agent, string> = { claude: "Claude Code", codex: "Codex" }

/**
 * The events memdir's hook answers, for both agents. Codex 0.171 runs all four from `hooks.json` (a real
 * `codex exec` run fed them to a hook; openai/codex `codex-rs/hooks/src/events/`), with hooks on by default
 * (`[features].hooks`, stable, default true) once the user has trusted them (docs/hooks.md).
 */
export const ALL_EVENTS: ReadonlyArray<string> = ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]

/**
 * The events install gives memdir's handler: `Stop` only while automatic model calls are on
 * (docs/hooks.md#the-stop-hook). Its one job is to start extraction after each turn, which needs them; with them off
 * it answers nothing and still costs the agent a Node start on every prompt (~0.1 s). `SessionEnd` stays: it ends
 * the hook daemon with the session, costs the agent nothing (async in Claude Code), and still extracts once per
 * session where the switch is turned on later (the local settings, the environment).
 */
export const eventsFor = (modelCalls: boolean): ReadonlyArray<string> =>
  modelCalls ? ALL_EVENTS : ALL_EVENTS.filter((event) => event !== "Stop")

/**
 * The command install writes: `memdir-hook` (bin/memdir-hook), a shell script that hands the hook to the running
 * hook daemon without starting Node (~50 ms of every hook) and is `memdir hook` otherwise; `memdir hook` on Windows,
 * where there is no daemon (docs/hooks.md#the-hook-daemon).
 */
export const DEFAULT_COMMAND = process.platform === "win32" ? "memdir hook" : "memdir-hook"
const SCRIPT_COMMAND = "memdir-hook"
/** What install wrote before `memdir-hook` (options after it), brought up to date by the next install. */
const EARLIER_COMMAND = /^memdir hook((?:\s+-[^\n]*)?)\s*$/
/** Seconds the agent waits for the hook; memdir's own guard answers well before (docs/hooks.md). */
export const HOOK_TIMEOUT_SECONDS = 15
/**
 * Codex 0.171 cuts a SessionEnd hook to 3 s and warns at every start when asked for more ("clamping SessionEnd
 * hook timeout to 3s in …/hooks.json", seen on a real run): memdir asks for what it gets. Its SessionEnd answer only
 * starts the background job, so it returns well within.
 */
export const CODEX_SESSION_END_TIMEOUT_SECONDS = 3

/** The timeout memdir writes for one event of an agent. */
export const timeoutFor = (agent: Agent, event: string): number =>
  agent === "codex" && event === "SessionEnd" ? CODEX_SESSION_END_TIMEOUT_SECONDS : HOOK_TIMEOUT_SECONDS

/**
 * memdir's handler: a command that runs memdir (`memdir`, `…/memdir.js`, `@memdir/cli`) with `hook` as its
 * subcommand, or `memdir-hook` (`…/bin/memdir-hook`), options only after it (`memdir hook --selector model`).
 */
export const isMemdirCommand = (command: unknown): boolean =>
  typeof command === "string" &&
  /(?:^|[\s/"'@])(?:memdir\S*\s+hook|memdir-hook["']?)(?:\s+-[^\n]*)?\s*$/.test(command)

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** One matcher group of an event: `{matcher?, hooks: [handler…]}` (checked by `parseConfig`). */
export type HookGroup = JsonObject & { readonly hooks: ReadonlyArray<JsonObject> }

/**
 * The events whose memdir handler Claude Code runs in the background (`"async": true`, Claude Code 2.1.332's hook
 * schema: "runs in background without blocking"): SessionEnd only starts memdir's background job and injects
 * nothing, and a headless session runs an async SessionEnd to its end after exiting, so the session need not wait
 * (docs/hooks.md#what-the-hooks-cost). Not Stop: measured with `claude -p`, an async Stop hook still running when the
 * turn ends holds the session (+1.3–1.8 s, even for a `sleep 0.3`), where a synchronous one answered by the hook
 * daemon costs ~0.1 s.
 */
export const asyncEventsFor: Record<Agent, ReadonlyArray<string>> = {
  claude: ["SessionEnd"],
  codex: []
}

/** The handler memdir adds for one event of an agent. */
export const memdirHandler = (agent: Agent, event: string, command: string = DEFAULT_COMMAND): JsonObject => ({
  type: "command",
  command,
  timeout: timeoutFor(agent, event),
  ...(asyncEventsFor[agent].includes(event) ? { async: true } : {})
})

/** The hook group memdir adds for one event of an agent. */
export const memdirGroup = (agent: Agent, event: string, command: string = DEFAULT_COMMAND): JsonObject => ({
  hooks: [memdirHandler(agent, event, command)]
})

/**
 * The `hooks` object memdir installs for an agent, for the given events (default: all four). The plugin's
 * `hooks/hooks.json` is the one for automatic model calls off, the default: a plugin cannot know the switch.
 */
export const memdirHooks = (
  agent: Agent,
  command: string = DEFAULT_COMMAND,
  events: ReadonlyArray<string> = ALL_EVENTS
): JsonObject => Object.fromEntries(events.map((event) => [event, [memdirGroup(agent, event, command)]]))

/** Parses a configuration file's text: empty or absent is `{}`; anything but a JSON object is refused. */
export const parseConfig = (path: string, text: string | undefined): Result.Result<JsonObject, AgentConfigError> => {
  if (text === undefined || text.trim() === "") return Result.succeed({})
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return Result.fail(new AgentConfigError({ path, at: "", detail: `not valid JSON (${String(error)})` }))
  }
  if (!isObject(parsed)) return Result.fail(new AgentConfigError({ path, at: "", detail: "not a JSON object" }))
  return Result.map(Result.andThen(checkHooks(path, parsed), () => checkSettings(path, parsed)), () => parsed)
}

/** The keys memdir's Claude Code setup edits have Claude Code's types, or memdir does not touch the file. */
const checkSettings = (path: string, config: JsonObject): Result.Result<void, AgentConfigError> => {
  const fail = (at: string, detail: string) => Result.fail(new AgentConfigError({ path, at, detail }))
  const enabled = config.autoMemoryEnabled
  if (enabled !== undefined && typeof enabled !== "boolean") return fail("autoMemoryEnabled", "is not true or false")
  const permissions = config.permissions
  if (permissions === undefined) return Result.succeed(undefined)
  if (!isObject(permissions)) return fail("permissions", "is not an object")
  const allow = permissions.allow
  if (allow !== undefined && !(Array.isArray(allow) && allow.every((rule) => typeof rule === "string"))) {
    return fail("permissions.allow", "is not an array of rule strings")
  }
  return Result.succeed(undefined)
}

/** The `hooks` object of a config is `{Event: [{hooks: [{…}]}]}`, or memdir does not touch the file. */
const checkHooks = (path: string, config: JsonObject): Result.Result<void, AgentConfigError> => {
  const fail = (at: string, detail: string) => Result.fail(new AgentConfigError({ path, at, detail }))
  const hooks = config.hooks
  if (hooks === undefined) return Result.succeed(undefined)
  if (!isObject(hooks)) return fail("hooks", "is not an object of events")
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) return fail(`hooks.${event}`, "is not an array of hook groups")
    for (const [i, group] of (groups as ReadonlyArray<Json>).entries()) {
      if (!isObject(group)) return fail(`hooks.${event}[${i}]`, "is not an object")
      if (!Array.isArray(group.hooks)) return fail(`hooks.${event}[${i}].hooks`, "is not an array of handlers")
      for (const [j, handler] of (group.hooks as ReadonlyArray<Json>).entries()) {
        if (!isObject(handler)) return fail(`hooks.${event}[${i}].hooks[${j}]`, "is not an object")
      }
    }
  }
  return Result.succeed(undefined)
}

const groupsOf = (hooks: JsonObject, event: string): ReadonlyArray<HookGroup> =>
  (hooks[event] as unknown as ReadonlyArray<HookGroup> | undefined) ?? []

const hasMemdir = (group: HookGroup) => group.hooks.some((handler) => isMemdirCommand(handler.command))

/** The events of a (parsed) config that run memdir's hook. */
/** The commands of memdir's handlers in a hook configuration, each once. */
export const memdirCommands = (config: JsonObject): ReadonlyArray<string> => {
  const hooks = isObject(config.hooks) ? config.hooks : {}
  const commands = Object.keys(hooks).flatMap((event) =>
    groupsOf(hooks, event).flatMap((group) =>
      group.hooks.flatMap((handler) =>
        isMemdirCommand(handler.command) && typeof handler.command === "string" ? [handler.command] : []
      )
    )
  )
  return [...new Set(commands)]
}

export const memdirEvents = (config: JsonObject): ReadonlyArray<string> => {
  const hooks = isObject(config.hooks) ? config.hooks : {}
  return Object.keys(hooks).filter((event) => groupsOf(hooks, event).some(hasMemdir))
}

/**
 * What install changed in Claude Code's settings beside the hooks, so that uninstall takes back exactly that (and
 * nothing the user had before): `autoMemoryEnabled`'s value before (`null`: absent), the `permissions.allow` rules
 * it added, and whether it created `permissions` or its `allow` list. Empty: nothing beside the hooks.
 */
export interface SettingsChange {
  readonly autoMemoryEnabled?: boolean | null | undefined
  readonly allow?: ReadonlyArray<string> | undefined
  readonly created?: "permissions" | "allow" | undefined
}

/**
 * `$MEMDIR_HOME/agent-settings.json`, memdir's own file: per settings file (its real path), the `SettingsChange`
 * install made there. Decoded, so a hand-edited record is refused with the file and the place, never half-used.
 */
const InstallRecords = Schema.fromJsonString(Schema.Struct({
  files: Schema.Record(
    Schema.String,
    Schema.Struct({
      autoMemoryEnabled: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
      allow: Schema.optionalKey(Schema.Array(Schema.String)),
      created: Schema.optionalKey(Schema.Literals(["permissions", "allow"]))
    })
  )
}))
const decodeRecords = Schema.decodeUnknownResult(InstallRecords, { errors: "first" })

export type InstallRecords = { readonly [settingsFile: string]: SettingsChange }

/** Parses memdir's install records: empty or absent is none. */
export const parseRecords = (path: string, text: string | undefined): Result.Result<InstallRecords, AgentConfigError> =>
  text === undefined || text.trim() === ""
    ? Result.succeed({})
    : Result.mapBoth(decodeRecords(text), {
      onFailure: (error) =>
        new AgentConfigError({ path, at: "", detail: `not memdir's install record (${error.message.split("\n")[0]})` }),
      onSuccess: (records) => records.files
    })

/** How memdir writes its install records. */
export const renderRecords = (records: InstallRecords): string => JSON.stringify({ files: records }, null, 2) + "\n"

export const isEmptySettingsChange = (change: SettingsChange): boolean =>
  change.autoMemoryEnabled === undefined && (change.allow ?? []).length === 0

export interface ConfigChange {
  readonly config: JsonObject
  /** Events memdir's handler was added to (install) or removed from (uninstall). */
  readonly events: ReadonlyArray<string>
  /** Install: events memdir's handler was taken from, because it has nothing to do there now (`eventsFor`). */
  readonly removed?: ReadonlyArray<string> | undefined
  /** Install: what it changed beside the hooks. Uninstall: what of the given change it took back. */
  readonly settings: SettingsChange
}

/** `changed` for the command: hooks or settings. */
export const isChange = (change: ConfigChange): boolean =>
  change.events.length > 0 || (change.removed ?? []).length > 0 || !isEmptySettingsChange(change.settings)

/** The MCP server name of docs/mcp.md (`claude mcp add memdir -- memdir mcp`): this rule allows all its tools. */
export const MCP_RULE = "mcp__memdir"

/**
 * The `permissions.allow` rules memdir's Claude Code setup needs, for memory roots written as Claude Code reads a
 * path in a rule (`~/.memdir`, or `//srv/memdir` for an absolute path; see `ruleRoot`): `Read` (also Grep, Glob)
 * and `Edit` (every tool that writes a file, Write included) under each, and memdir's MCP tools. Checked with Claude
 * Code 2.1.332 headless: without them a `Write` there and any `mcp__memdir__…` call is denied.
 */
export const claudeAllowRules = (roots: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...roots.flatMap((root) => [`Read(${root}/**)`, `Edit(${root}/**)`]),
  MCP_RULE
]

/** A directory as a Claude Code permission rule writes it: `~/…` under the user's home, else `//` + absolute. */
export const ruleRoot = (dir: string, userHome: string): string => {
  const trimmed = dir.replace(/\/+$/, "")
  const home = userHome.replace(/\/+$/, "")
  if (trimmed === home) return "~"
  if (trimmed.startsWith(home + "/")) return `~/${trimmed.slice(home.length + 1)}`
  return `/${trimmed}`
}

/** Claude Code's extra setup: the allow rules, and whether to turn its own auto memory off. */
export interface ClaudeSetup {
  readonly allow: ReadonlyArray<string>
  readonly autoMemoryOff: boolean
}

/** Pure: `autoMemoryEnabled: false` and the missing allow rules, with the record of what was changed. */
const installSettings = (config: JsonObject, setup: ClaudeSetup): { config: JsonObject; settings: SettingsChange } => {
  let next: Record<string, Json> = { ...config }
  let settings: SettingsChange = {}
  if (setup.autoMemoryOff && config.autoMemoryEnabled !== false) {
    const before = config.autoMemoryEnabled
    settings = { autoMemoryEnabled: typeof before === "boolean" ? before : null }
    next.autoMemoryEnabled = false
  }
  const permissions = isObject(config.permissions) ? config.permissions : undefined
  const allow = (permissions?.allow as ReadonlyArray<string> | undefined) ?? []
  const missing = setup.allow.filter((rule, i) => !allow.includes(rule) && setup.allow.indexOf(rule) === i)
  if (missing.length > 0) {
    const created = permissions === undefined ? "permissions" : permissions.allow === undefined ? "allow" : undefined
    settings = { ...settings, allow: missing, ...(created === undefined ? {} : { created }) }
    next = { ...next, permissions: { ...permissions, allow: [...allow, ...missing] } }
  }
  return { config: isEmptySettingsChange(settings) ? config : next, settings }
}

/** Pure: takes back what `installSettings` recorded, where it is still as memdir left it. */
const uninstallSettings = (
  config: JsonObject,
  recorded: SettingsChange
): { config: JsonObject; settings: SettingsChange } => {
  let next: Record<string, Json> = { ...config }
  let settings: SettingsChange = {}
  if (recorded.autoMemoryEnabled !== undefined && config.autoMemoryEnabled === false) {
    if (recorded.autoMemoryEnabled === null) {
      const { autoMemoryEnabled: _off, ...rest } = next
      next = rest
    } else {
      next.autoMemoryEnabled = recorded.autoMemoryEnabled
    }
    settings = { autoMemoryEnabled: recorded.autoMemoryEnabled }
  }
  const permissions = isObject(config.permissions) ? config.permissions : undefined
  const allow = (permissions?.allow as ReadonlyArray<string> | undefined) ?? []
  const removed = (recorded.allow ?? []).filter((rule) => allow.includes(rule))
  if (permissions !== undefined && removed.length > 0) {
    const kept = allow.filter((rule) => !removed.includes(rule))
    const { allow: _allow, ...others } = permissions
    // what install created and left empty goes; otherwise `allow` keeps its place among the permission keys
    const nextPermissions = kept.length === 0 && recorded.created !== undefined
      ? others
      : { ...permissions, allow: kept }
    if (recorded.created === "permissions" && Object.keys(nextPermissions).length === 0) {
      const { permissions: _permissions, ...rest } = next
      next = rest
    } else {
      next.permissions = nextPermissions
    }
    settings = { ...settings, allow: removed }
  }
  return { config: isEmptySettingsChange(settings) ? config : next, settings }
}

/**
 * Pure: the config with memdir's group added to each of the given `events` (`eventsFor`) that has no memdir handler
 * yet, memdir's handlers taken from the other events it answers (an earlier install's `Stop`, with automatic model
 * calls off now), and, given a Claude Code `setup`, its settings (`installSettings`).
 */
export const install = (
  config: JsonObject,
  agent: Agent,
  command: string = DEFAULT_COMMAND,
  setup?: ClaudeSetup,
  events: ReadonlyArray<string> = ALL_EVENTS
): ConfigChange => {
  const withSettings = setup === undefined || agent !== "claude"
    ? { config, settings: {} }
    : installSettings(config, setup)
  const unwanted = ALL_EVENTS.filter((event) => !events.includes(event))
  const pruned = withoutMemdir(withSettings.config, (event) => unwanted.includes(event))
  const hooks = isObject(pruned.config.hooks) ? pruned.config.hooks : {}
  const added = events.filter((event) => !groupsOf(hooks, event).some(hasMemdir))
  // memdir's handlers as an earlier install wrote them are brought up to date, nothing else changes: a SessionEnd
  // that did not yet run in the background gets `"async": true`, `memdir hook …` becomes `memdir-hook …`
  const updated = (event: string, handler: JsonObject): JsonObject => {
    const background = asyncEventsFor[agent].includes(event) && blocksTheSession(handler)
    const script = command === SCRIPT_COMMAND && typeof handler.command === "string" &&
      EARLIER_COMMAND.test(handler.command)
    if (!background && !script) return handler
    return {
      ...handler,
      ...(script ? { command: (handler.command as string).replace(EARLIER_COMMAND, `${SCRIPT_COMMAND}$1`) } : {}),
      ...(background ? { async: true } : {})
    }
  }
  const outdated = events.filter((event) =>
    groupsOf(hooks, event).some((group) => group.hooks.some((handler) => updated(event, handler) !== handler))
  )
  const removed = pruned.events
  if (added.length === 0 && outdated.length === 0) {
    return { config: pruned.config, events: [], removed, settings: withSettings.settings }
  }
  const next: Record<string, Json> = { ...hooks }
  for (const event of outdated) {
    next[event] = groupsOf(hooks, event).map((group) =>
      group.hooks.some((handler) => updated(event, handler) !== handler)
        ? { ...group, hooks: group.hooks.map((handler) => updated(event, handler)) }
        : group
    ) as unknown as Json
  }
  for (const event of added) next[event] = [...groupsOf(hooks, event), memdirGroup(agent, event, command)]
  const changed = events.filter((event) => added.includes(event) || outdated.includes(event))
  return { config: { ...pruned.config, hooks: next }, events: changed, removed, settings: withSettings.settings }
}

/** A memdir handler that does not yet run in the background (where memdir's runs there). */
const blocksTheSession = (handler: JsonObject): boolean => isMemdirCommand(handler.command) && handler.async !== true

/**
 * Pure: the config without memdir's handlers, and without what only they filled; given what install `recorded`
 * beside the hooks, that is taken back too (`uninstallSettings`).
 */
export const uninstall = (config: JsonObject, recorded: SettingsChange = {}): ConfigChange => {
  const withSettings = uninstallSettings(config, recorded)
  const hooksChange = withoutMemdir(withSettings.config, () => true)
  return { ...hooksChange, settings: withSettings.settings }
}

/** Pure: the config without memdir's handlers on the events `from` picks, and without what only they filled. */
const withoutMemdir = (
  config: JsonObject,
  from: (event: string) => boolean
): { readonly config: JsonObject; readonly events: ReadonlyArray<string> } => {
  if (!isObject(config.hooks)) return { config, events: [] }
  const removedFrom: Array<string> = []
  const next: Record<string, Json> = {}
  for (const [event, value] of Object.entries(config.hooks)) {
    const groups = value as unknown as ReadonlyArray<HookGroup>
    if (!from(event) || !groups.some(hasMemdir)) {
      next[event] = value
      continue
    }
    removedFrom.push(event)
    const kept = groups.flatMap((group): Array<HookGroup> => {
      if (!hasMemdir(group)) return [group]
      const handlers = group.hooks.filter((handler) => !isMemdirCommand(handler.command))
      return handlers.length === 0 ? [] : [{ ...group, hooks: handlers }]
    })
    if (kept.length > 0) next[event] = kept as unknown as Json
  }
  if (removedFrom.length === 0) return { config, events: [] }
  const { hooks: _hooks, ...rest } = config
  return { config: Object.keys(next).length === 0 ? rest : { ...config, hooks: next }, events: removedFrom }
}

/**
 * How memdir writes a config: JSON in the layout of the file it replaces (`previous`) — its indentation (spaces or
 * a tab; two spaces for a one-line file) and whether it ends with a newline; two spaces and a final newline for a
 * new file. An indented `JSON.stringify` layout (or `{}`) therefore comes back byte for byte after install then
 * uninstall; another layout comes back JSON-equivalent, in that indentation.
 */
export const renderConfig = (config: JsonObject, previous?: string): string => {
  if (previous === undefined || previous.trim() === "") return JSON.stringify(config, null, 2) + "\n"
  const body = previous.trimEnd()
  // a one-line file (`{}`, or minified) is opened up with two spaces: a diff of one long line would show nothing
  const indent = /\n([ \t]+)\S/.exec(body)?.[1] ?? "  "
  return JSON.stringify(config, null, indent) + previous.slice(body.length)
}

/** Pure: a unified diff of two texts (jsdiff, `context` lines around each change), for `--dry-run`. */
export const lineDiff = (path: string, before: string, after: string, context = 3): string =>
  createTwoFilesPatch(path, path, before, after, undefined, undefined, { context, headerOptions: FILE_HEADERS_ONLY })
