/**
 * The JSON API of `memdir ui` (docs/ui.md): one more door over the operations core (`@memdir/core/Operations`),
 * as `memdir mcp` is. Each route decodes its request with a Schema (unknown keys refused), runs an operation and
 * answers its result; what a write, an edit, a rename or a delete does (containment, the team rules, the index caps,
 * the version check) is decided there, once for every door. What only a person looking at memory needs is added
 * here: the browse listing (pinned, links, size, whether its index line is loaded or cut by the caps), the index as
 * the model sees it, recall with the offline selector's explanation; history, activity and health come from the
 * modules of `data/`, delete with undo from the history's backup.
 */
import { MemoryDisabledError, VersionConflictError } from "@memdir/core/Errors"
import { parseMemoryFile, serializeFrontmatter } from "@memdir/core/Frontmatter"
import { type MemoryHeader, memoryVersion } from "@memdir/core/Memory"
import { sortNewestWrittenFirst, writtenAtOf } from "@memdir/core/MemoryAge"
import { MemoryFs } from "@memdir/core/MemoryFs"
import {
  countLines,
  INDEX_FILE,
  indexEntries,
  indexKeyOf,
  MemoryIndex,
  normalizeIndexLink,
  truncateIndex,
  utf8ByteLength
} from "@memdir/core/MemoryIndex"
import { type LinkResolver, linkResolver, linksIn, resolveLinks } from "@memdir/core/MemoryLinks"
import { MEMORY_READ_MAX_BYTES, type MemoryRoot, MemoryStore } from "@memdir/core/MemoryStore"
import { Model } from "@memdir/core/Model"
import * as ModelSelector from "@memdir/core/ModelSelector"
import * as Operations from "@memdir/core/Operations"
import { isPinned, loadPinned } from "@memdir/core/Pins"
import { buildMemoryPrompt } from "@memdir/core/Prompt"
import * as Recall from "@memdir/core/Recall"
import { Scanner } from "@memdir/core/Scanner"
import { Staleness } from "@memdir/core/Staleness"
import { TEAM_DIR, type TeamLocation, teamPromptInput } from "@memdir/core/TeamMemory"
import { validateWriteInput } from "@memdir/core/Write"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"
import { locateTeam } from "../commands/teamMemory.js"
import * as Activity from "./data/activity.js"
import * as Health from "./data/health.js"
import * as History from "./data/history.js"

/**
 * The `[[link]]` targets of each memory, read once per version of its file: the listing reads only the memories
 * whose size or mtime changed since the last one (the first listing reads them all, in one synchronous batch of
 * `MemoryFs.readFileMany`: each opened without following a link, inside the memory directory's real path).
 */
const linkTargetCache = new Map<
  string,
  { readonly size: number; readonly mtime: number; readonly targets: ReadonlyArray<string> }
>()

const linkTargetsOf = (memoryDir: string, memories: ReadonlyArray<MemoryHeader>) =>
  Effect.gen(function*() {
    const fs = yield* MemoryFs
    const fresh = (m: MemoryHeader) => {
      const cached = linkTargetCache.get(m.absolutePath)
      return cached !== undefined && cached.size === m.size && cached.mtime === m.mtime ? cached.targets : undefined
    }
    const stale = memories.filter((m) => fresh(m) === undefined)
    if (stale.length > 0) {
      const within = yield* fs.realPathOfDeepestExisting(NodePath.resolve(memoryDir)).pipe(Effect.option)
      const texts = Option.isNone(within) ? [] : yield* fs.readFileMany(stale.map((m) => m.absolutePath), {
        maxBytes: MEMORY_READ_MAX_BYTES,
        within: within.value
      })
      stale.forEach((m, i) => {
        const read = texts[i]
        const targets = read !== undefined && "text" in read ? linksIn(read.text) : []
        linkTargetCache.set(m.absolutePath, {
          size: read !== undefined && "info" in read ? read.info.size : -1,
          mtime: m.mtime,
          targets
        })
      })
    }
    return memories.map((m) => fresh(m) ?? linkTargetCache.get(m.absolutePath)?.targets ?? [])
  })

/** Link targets resolved to memories (the memory's own path left out), and those that name none. */
const resolvedLinks = (targets: ReadonlyArray<string>, resolve: LinkResolver, self: string) => {
  const linked: Array<string> = []
  const dead: Array<string> = []
  for (const target of targets) {
    const path = resolve(target)
    if (path === undefined) dead.push(target)
    else if (path !== self && !linked.includes(path)) linked.push(path)
  }
  return { linked, dead }
}

// ---------------------------------------------------------------------------------------------------------------
// Shared steps
// ---------------------------------------------------------------------------------------------------------------

/** The project's memory location and team switch, refusing when memory is off (as the MCP tools do). */
export const enabledLocation = Effect.fn("UiApi.enabledLocation")(function*(cwd: Option.Option<string>) {
  const team = yield* locateTeam(cwd)
  if (!team.memory.enabled) return yield* new MemoryDisabledError({ source: team.memory.enabledBy })
  return team
})

const rootOf = (team: TeamLocation): MemoryRoot => ({ memoryDir: team.memory.memoryDir, teamEnabled: team.enabled })

/** An index file's text, empty when there is none. */
const indexText = (root: MemoryRoot, key: string) =>
  MemoryStore.pipe(
    Effect.flatMap((store) => store.read(root, key)),
    Effect.map((stored) => stored.text),
    Effect.catchTag("MemoryNotFoundError", () => Effect.succeed(""))
  )

/** Where each memory's line is in an index: loaded (within the caps) or cut; keyed by the memory's path. */
const indexPlacement = (text: string, prefix: string): Map<string, { line: number; cut: boolean }> => {
  const keptLines = countLines(truncateIndex(text).kept)
  const placed = new Map<string, { line: number; cut: boolean }>()
  for (const entry of indexEntries(text)) {
    const file = normalizeIndexLink(entry.file)
    if (file === undefined || placed.has(prefix + file)) continue
    placed.set(prefix + file, { line: entry.line, cut: entry.line > keptLines })
  }
  return placed
}

/** An index as the model gets it: what the caps keep and what they cut. */
const indexSection = (text: string, exists: boolean) => {
  const truncated = truncateIndex(text)
  return {
    exists,
    lines: truncated.lines,
    bytes: truncated.bytes,
    keptLines: countLines(truncated.kept),
    keptBytes: utf8ByteLength(truncated.kept),
    truncatedByLines: truncated.truncatedByLines,
    truncatedByBytes: truncated.truncatedByBytes,
    warning: truncated.warning ?? null,
    kept: truncated.kept,
    cut: text.slice(truncated.kept.length)
  }
}

/**
 * The memory at `path` as it is now, only while it is still the version the page loaded: else
 * `VersionConflictError` with the text on disk, so the page shows it (a person changes what they saw).
 */
const unchangedSince = (root: MemoryRoot, path: string, ifVersion: string) =>
  Effect.gen(function*() {
    const current = yield* (yield* MemoryStore).read(root, path)
    const version = memoryVersion(current.text)
    if (version !== ifVersion) {
      return yield* new VersionConflictError({
        path: current.key,
        expected: ifVersion,
        current: version,
        content: current.text,
        operation: "edit"
      })
    }
    return current
  })

// ---------------------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------------------

const MemoryPath = Operations.MemoryPath

export const SearchRequest = Schema.Struct({
  query: Schema.String,
  limit: Schema.optionalKey(Schema.NumberFromString),
  scope: Schema.optionalKey(Operations.BrowseScope),
  type: Schema.optionalKey(Operations.MemoryTypeField)
})

export const RecallRequest = Schema.Struct({
  query: Schema.String,
  selector: Schema.optionalKey(Schema.Literals(["offline", "model"]))
})

export const ReadRequest = Schema.Struct({ path: MemoryPath })

export const SaveRequest = Schema.Struct({
  path: MemoryPath,
  ifVersion: Schema.String,
  name: Schema.String,
  description: Schema.String,
  type: Operations.MemoryTypeField,
  body: Schema.String
})

export const RenameRequest = Schema.Struct({ path: MemoryPath, newPath: Schema.String, ifVersion: Schema.String })

export const DeleteRequest = Schema.Struct({ path: MemoryPath, ifVersion: Schema.String })

export const RestoreRequest = Schema.Struct({
  path: MemoryPath,
  id: Schema.String,
  ifVersion: Schema.optionalKey(Schema.String)
})

export const FixRequest = Schema.Struct({ id: Schema.String })

// ---------------------------------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------------------------------

/** What the page shows in its header: the project, the memory directory, the switches. */
export const state = Effect.fn("UiApi.state")(function*(cwd: Option.Option<string>, readOnly: boolean) {
  const team = yield* locateTeam(cwd)
  const model = yield* Model
  return {
    memoryDir: team.memory.memoryDir,
    enabled: team.memory.enabled,
    enabledBy: team.memory.enabledBy,
    teamEnabled: team.enabled,
    readOnly,
    modelAvailable: model.available
  }
})

/** One memory of the browse listing. */
export interface BrowsedMemory {
  readonly path: string
  readonly scope: "private" | "team"
  readonly name: string
  readonly description: string
  readonly type: string
  readonly written: string
  readonly writtenFrom: string
  readonly ageDays: number
  readonly age: string
  readonly stale: boolean
  readonly pinned: boolean
  readonly size: number
  readonly links: ReadonlyArray<string>
  readonly deadLinks: ReadonlyArray<string>
  /** Its line in the index: loaded into context, cut by the caps, or missing. */
  readonly index: "loaded" | "cut" | "missing"
  readonly warning: string | null
}

/** Every memory with what a person checks about it, newest written first, and the files that could not be read. */
export const browse = Effect.fn("UiApi.browse")(function*(cwd: Option.Option<string>) {
  const team = yield* enabledLocation(cwd)
  const root = rootOf(team)
  const scan = yield* (yield* Scanner).scan(root.memoryDir, { skipDirs: team.enabled ? [] : [TEAM_DIR] })
  const memories: ReadonlyArray<MemoryHeader> = sortNewestWrittenFirst(scan.memories)
  const ages = yield* (yield* Staleness).ages(memories.map(writtenAtOf))
  const placed = indexPlacement(yield* indexText(root, INDEX_FILE), "")
  if (team.enabled) {
    for (const [key, at] of indexPlacement(yield* indexText(root, `${TEAM_DIR}/${INDEX_FILE}`), `${TEAM_DIR}/`)) {
      placed.set(key, at)
    }
  }
  const resolve = linkResolver(memories)
  const targets = yield* linkTargetsOf(root.memoryDir, memories)
  const listed: Array<BrowsedMemory> = memories.map((m, i) => {
    const age = ages[i]!
    const links = resolvedLinks(targets[i]!, resolve, m.path)
    const team = m.path.startsWith(`${TEAM_DIR}/`)
    const at = placed.get(team ? `${TEAM_DIR}/${indexKeyOf(m.path.slice(TEAM_DIR.length + 1))}` : indexKeyOf(m.path))
    return {
      path: m.path,
      scope: team ? "team" : "private",
      name: m.name,
      description: m.description,
      type: m.type,
      written: new Date(writtenAtOf(m)).toISOString(),
      writtenFrom: m.writtenFrom ?? "mtime",
      ageDays: age.ageDays,
      age: age.age,
      stale: age.caveat !== null,
      pinned: isPinned(m.extra),
      size: m.size ?? 0,
      links: links.linked,
      deadLinks: links.dead,
      index: at === undefined ? "missing" : at.cut ? "cut" : "loaded",
      warning: m.warning ?? null
    }
  })
  return {
    memoryDir: root.memoryDir,
    teamEnabled: team.enabled,
    memories: listed,
    problems: scan.problems.map((p) => ({ path: p.path, code: p.code, message: p.message }))
  }
})

/** The memory section of the system prompt as `memdir prompt` prints it, and each index's kept and cut parts. */
export const index = Effect.fn("UiApi.index")(function*(cwd: Option.Option<string>) {
  const team = yield* enabledLocation(cwd)
  const root = rootOf(team)
  const loaded = yield* (yield* MemoryIndex).load(root.memoryDir)
  const teamInput = yield* teamPromptInput(team)
  const pins = yield* loadPinned(root.memoryDir)
  const prompt = yield* buildMemoryPrompt({
    memoryDir: root.memoryDir,
    index: loaded,
    pinned: pins.pinned,
    team: teamInput
  })
  const teamText = team.enabled ? yield* indexText(root, `${TEAM_DIR}/${INDEX_FILE}`) : undefined
  return {
    prompt,
    private: indexSection(yield* indexText(root, INDEX_FILE), loaded.exists),
    team: teamText === undefined ? null : indexSection(teamText, true),
    pinned: pins.pinned.map((p) => p.path),
    pinnedLeftOut: pins.leftOut
  }
})

/** One memory in full (`Operations.read`), with its frontmatter's other keys and its links. */
export const read = Effect.fn("UiApi.read")(function*(cwd: Option.Option<string>, input: typeof ReadRequest.Type) {
  const team = yield* enabledLocation(cwd)
  const root = rootOf(team)
  const memory = yield* Operations.read(root, input)
  const parsed = parseMemoryFile(memory.content, memory.path)
  const extra = Result.isSuccess(parsed) ? parsed.success.frontmatter.extra : {}
  const scan = yield* (yield* Scanner).scan(root.memoryDir, { skipDirs: team.enabled ? [] : [TEAM_DIR] })
  const links = resolveLinks(memory.body, linkResolver(scan.memories), memory.path)
  return { ...memory, extra, links: links.linked, deadLinks: links.dead }
})

export const search = Effect.fn("UiApi.search")(
  function*(cwd: Option.Option<string>, input: typeof SearchRequest.Type) {
    const team = yield* enabledLocation(cwd)
    return yield* Operations.search(rootOf(team), {
      query: input.query,
      limit: Math.max(1, Math.min(50, Math.floor(input.limit ?? 50))),
      ...(input.scope === undefined ? {} : { scope: input.scope }),
      ...(input.type === undefined ? {} : { type: input.type })
    })
  }
)

/**
 * What recall would give for a request and why: a fresh recall session each time (nothing is withheld as "already
 * surfaced"), the offline selector's explanation (scores, matched terms and fields, the cut). With `model`, the model
 * selector picks (the user asked for it, so it is their call; without a key it says it degraded to offline).
 */
export const recall = (cwd: Option.Option<string>, input: typeof RecallRequest.Type) => {
  const explained = Effect.gen(function*() {
    const team = yield* enabledLocation(cwd)
    const session = yield* Recall.make
    const result = yield* session.recall({
      memoryDir: team.memory.memoryDir,
      query: input.query,
      teamEnabled: team.enabled,
      explain: true
    })
    const { considered, ...summary } = result.explain ?? { considered: [] }
    return {
      selected: result.selected.map(Recall.recalledMemoryView),
      candidates: result.candidates,
      selector: result.selector,
      degraded: result.degraded ?? null,
      skipped: result.skipped ?? null,
      explain: considered,
      explainSummary: result.explain === undefined ? null : summary
    }
  })
  return input.selector === "model" ? explained.pipe(Effect.provide(ModelSelector.layerFor("model"))) : explained
}

/**
 * Saves a memory's frontmatter fields and body as one edit of the whole file (`Operations.edit`): written only while
 * the memory is still the version the page loaded, else `VersionConflictError` with the text on disk.
 */
export const save = Effect.fn("UiApi.save")(function*(cwd: Option.Option<string>, input: typeof SaveRequest.Type) {
  const team = yield* enabledLocation(cwd)
  const root = rootOf(team)
  yield* Effect.fromResult(validateWriteInput(input))
  const current = yield* unchangedSince(root, input.path, input.ifVersion)
  const parsed = parseMemoryFile(current.text, current.key)
  const extra = Result.isSuccess(parsed) ? parsed.success.frontmatter.extra : {}
  const text = serializeFrontmatter(
    { ...extra, name: input.name, description: input.description, type: input.type },
    input.body
  )
  if (text === current.text) return { path: current.key, version: input.ifVersion, changed: false }
  const edited = yield* Operations.edit(root, {
    path: current.key,
    old: current.text,
    new: text,
    ifVersion: input.ifVersion
  })
  return { path: edited.path, version: edited.version, changed: true }
})

export const rename = Effect.fn("UiApi.rename")(
  function*(cwd: Option.Option<string>, input: typeof RenameRequest.Type) {
    const team = yield* enabledLocation(cwd)
    const root = rootOf(team)
    const current = yield* unchangedSince(root, input.path, input.ifVersion)
    return yield* Operations.rename(root, { path: current.key, newPath: input.newPath })
  }
)

/**
 * Deletes a memory while it is still the version the page loaded, keeping its text first (`removeKeepingBackup`:
 * `.deleted/<stamp>/<path>`); the answer's `undoId` is the history entry that puts it back (`restoreVersion`).
 */
export const remove = Effect.fn("UiApi.remove")(
  function*(cwd: Option.Option<string>, input: typeof DeleteRequest.Type) {
    const team = yield* enabledLocation(cwd)
    const root = rootOf(team)
    const current = yield* unchangedSince(root, input.path, input.ifVersion)
    return yield* History.removeKeepingBackup(root, current.key)
  }
)

/** A memory's history: git commits (team memory, a directory in git) and every backup memdir keeps of it. */
export const history = (cwd: Option.Option<string>, input: typeof ReadRequest.Type) =>
  Effect.flatMap(enabledLocation(cwd), (team) => History.memoryHistory(rootOf(team), input.path))

/**
 * Puts a version from a memory's history back (an undo of a delete included), through the store; the version it
 * replaces is kept first, and a change since the page loaded is a conflict.
 */
export const restoreVersion = (cwd: Option.Option<string>, input: typeof RestoreRequest.Type) =>
  Effect.flatMap(
    enabledLocation(cwd),
    (team) =>
      History.restore(
        rootOf(team),
        input.path,
        input.id,
        input.ifVersion === undefined ? {} : { ifVersion: input.ifVersion }
      )
  )

/** What the last dreams merged, rewrote, pruned and created. */
export const dreams = (cwd: Option.Option<string>) =>
  Effect.flatMap(enabledLocation(cwd), (team) => History.lastDreams(rootOf(team), { limit: 20 }))

/** What the hooks gave which session, what extraction saved, which background runs failed. */
export const activity = (cwd: Option.Option<string>) =>
  Effect.flatMap(enabledLocation(cwd), (team) => Activity.recentActivity(rootOf(team), { limit: 100 }))

/** `memdir doctor`'s findings, background runs and team sync state. */
export const health = (cwd: Option.Option<string>) =>
  Effect.flatMap(enabledLocation(cwd), (team) => Health.health(rootOf(team)))

/** One of doctor's safe repairs (or all of them: `Health.ALL_SAFE_FIXES`). */
export const fix = (cwd: Option.Option<string>, input: typeof FixRequest.Type) =>
  Effect.flatMap(enabledLocation(cwd), (team) => Health.applyFix(rootOf(team), input.id))
