/**
 * Team memory: `<memdir>/team/`, memories shared with the people you work with, with its own `team/MEMORY.md`.
 * This module holds the team location (directory, switch, remote), the programs that write and list team
 * memories, and the team part of the prompt. Every path under `team/` goes through the `MemoryStore` and so
 * through `TeamGuard`; the switch itself is resolved once with the other settings (`internal/teamSwitch.ts`, by
 * `MemoryPaths`), and the contradiction check lives in `TeamContradiction.ts`.
 *
 * Every change to `team/` (writes, the team index, sync) happens under one lock, `<memdir>/.team.lock`, which
 * lives outside `team/` so it is never committed.
 */
import { FileSystem, Path } from "@effect/platform"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import {
  type IndexOverCapError,
  InvalidFrontmatterError,
  type InvalidMemoryDirError,
  type InvalidMemoryInputError,
  type LockTimeoutError,
  MemoryIoError,
  type MemoryNotFoundError,
  PathTraversalError,
  SecretDetectedError,
  type SettingsError,
  type TeamMemoryDisabledError
} from "./Errors.js"
import { parseMemoryFile } from "./Frontmatter.js"
import { toMemoryIoError } from "./internal/atomicFile.js"
import { analyze, WEAK_STEMS } from "./internal/bm25Text.js"
import { withLock } from "./internal/fileLock.js"
import { conflictOriginal } from "./internal/teamConflict.js"
import { resolveTeamSwitch, TEAM_MEMORY_ENV } from "./internal/teamSwitch.js"
import { type MemoryHeader, type MemoryScope, type ScanProblem, scopeOf, TEAM_DIR } from "./Memory.js"
import { INDEX_FILE, indexEntries, type LoadedIndex, truncateIndex } from "./MemoryIndex.js"
import { type MemoryLocation, MemoryPaths } from "./MemoryPaths.js"
import { type MemoryRoot, MemoryStore, type StoreWriteResult, TEAM_LOCK, TEAM_LOCK_OPTIONS } from "./MemoryStore.js"
import { Scanner } from "./Scanner.js"
import { findSecret } from "./SecretScan.js"
import { Settings } from "./Settings.js"
import { TeamGuard } from "./TeamGuard.js"
import {
  memoryFileName,
  memoryText,
  shortHash,
  validateWriteInput,
  writeMemory,
  type WriteMemoryInput,
  type WriteMemoryResult
} from "./Write.js"

export { type MemoryScope, scopeOf, TEAM_DIR, TEAM_LOCK, TEAM_LOCK_OPTIONS }
export {
  readTeamSettings,
  resolveTeamEnabled,
  resolveTeamRemote,
  TEAM_MEMORY_ENV,
  type TeamSettings,
  validateTeamRemote
} from "./internal/teamSwitch.js"

export interface TeamLocation {
  readonly memory: MemoryLocation
  /** `<memoryDir>team/`: absolute, ends with the path separator. */
  readonly teamDir: string
  readonly enabled: boolean
  /** Which link of the team switch decided (e.g. "env MEMDIR_TEAM_MEMORY", "user settings /…/settings.json"). */
  readonly enabledBy: string
  /** `teamRemote` from a trusted settings file, when set. */
  readonly remote?: string | undefined
  /** The file that set `remote`. */
  readonly remoteSource?: string | undefined
}

export class TeamMemory extends Context.Tag("@memdir/core/TeamMemory")<TeamMemory, {
  /** The memory location of `cwd` (MemoryPaths) and its team switch, directory and remote. */
  readonly resolve: (cwd: string) => Effect.Effect<TeamLocation, InvalidMemoryDirError | SettingsError>
  /** The team switch, directory and remote of an already resolved memory location. */
  readonly locate: (memory: MemoryLocation) => Effect.Effect<TeamLocation, SettingsError>
}>() {}

/** `<memoryDir>team/` with a trailing separator. */
export const teamDirOf = (path: Path.Path, memoryDir: string): string =>
  path.join(path.resolve(memoryDir), TEAM_DIR) + path.sep

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

export const make: Effect.Effect<
  Context.Tag.Service<TeamMemory>,
  ConfigError.ConfigError,
  MemoryPaths | Settings | Path.Path
> = Effect.gen(function*() {
  const paths = yield* MemoryPaths
  const settings = yield* Settings
  const path = yield* Path.Path
  const envValue = Option.getOrUndefined(yield* Config.option(Config.string(TEAM_MEMORY_ENV)))

  const locate = Effect.fn("TeamMemory.locate")(function*(memory: MemoryLocation) {
    // A location resolved by MemoryPaths carries its team switch (settings read once); one built by hand does not.
    const team = memory.team ??
      (yield* resolveTeamSwitch(memory, envValue, (yield* settings.load(memory.root.root)).sources))
    const location: TeamLocation = { memory, teamDir: teamDirOf(path, memory.memoryDir), ...team }
    return location
  })

  const resolve = Effect.fn("TeamMemory.resolve")(function*(cwd: string) {
    return yield* locate(yield* paths.locate(cwd))
  })

  return TeamMemory.of({ resolve, locate })
})

export const layer: Layer.Layer<TeamMemory, ConfigError.ConfigError, MemoryPaths | Settings | Path.Path> = Layer
  .effect(TeamMemory, make)

/** Always answers `team` (its `memory` is used whatever the cwd; `locate` keeps the given memory location). */
export const layerTest = (team: TeamLocation): Layer.Layer<TeamMemory> =>
  Layer.succeed(
    TeamMemory,
    TeamMemory.of({
      resolve: () => Effect.succeed(team),
      locate: (memory) => Effect.succeed({ ...team, memory })
    })
  )

// ---------------------------------------------------------------------------------------------------------------
// The team directory and its index
// ---------------------------------------------------------------------------------------------------------------

/**
 * Creates `team/` (0700) if needed and checks it is a real directory of the memory directory: a `team` that is a
 * symlink (say to `/etc`) would make every guarded key "inside" the wrong tree. Returns the team directory.
 */
export const ensureTeamDir = Effect.fn("TeamMemory.ensureTeamDir")(function*(memoryDir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = path.resolve(memoryDir)
  const teamDir = teamDirOf(path, root)
  yield* fs.makeDirectory(teamDir, { recursive: true, mode: 0o700 }).pipe(
    Effect.mapError(toMemoryIoError("create directory", teamDir))
  )
  const realRoot = yield* fs.realPath(root).pipe(Effect.mapError(toMemoryIoError("resolve", root)))
  const realTeam = yield* fs.realPath(teamDir).pipe(Effect.mapError(toMemoryIoError("resolve", teamDir)))
  if (realTeam !== path.join(realRoot, TEAM_DIR)) {
    return yield* new PathTraversalError({
      key: TEAM_DIR,
      reason: "symlink-escape",
      detail: `the team directory resolves to ${realTeam}, not inside ${realRoot}`
    })
  }
  const info = yield* fs.stat(teamDir).pipe(Effect.mapError(toMemoryIoError("stat", teamDir)))
  if (info.type !== "Directory") {
    return yield* new MemoryIoError({ op: "stat", path: teamDir, detail: "the team directory is not a directory" })
  }
  return teamDir
})

/** Run `effect` holding the team lock of `memoryDir` (the directory must exist). */
export const withTeamLock = <A, E, R>(memoryDir: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    return yield* withLock(path.join(path.resolve(memoryDir), TEAM_LOCK), effect, TEAM_LOCK_OPTIONS)
  })

/** A team file's text through the guard, or `undefined` when it does not exist. */
const readTeamText = (teamDir: string, key: string) =>
  Effect.gen(function*() {
    const guard = yield* TeamGuard
    return yield* guard.read(teamDir, key).pipe(
      Effect.map((text): string | undefined => text),
      Effect.catchTag("MemoryNotFoundError", () => Effect.succeed(undefined))
    )
  })

/** `team/MEMORY.md` loaded under the same caps as the private index (200 lines / 25,000 bytes), via the guard. */
export const loadTeamIndex = Effect.fn("TeamMemory.loadTeamIndex")(function*(teamDir: string) {
  const path = yield* Path.Path
  const text = yield* readTeamText(teamDir, INDEX_FILE)
  const truncated = truncateIndex(text ?? "")
  const loaded: LoadedIndex = {
    path: path.join(teamDir, INDEX_FILE),
    exists: text !== undefined,
    content: truncated.content,
    lines: truncated.lines,
    bytes: truncated.bytes,
    truncatedByLines: truncated.truncatedByLines,
    truncatedByBytes: truncated.truncatedByBytes,
    warning: truncated.warning,
    entries: indexEntries(text ?? "").map(({ file, hook, title }) => ({ title, file, hook }))
  }
  return loaded
})

/**
 * The team part of the memory prompt (`MemoryPromptInput.team`): undefined while team memory is off. Creates
 * `team/` (the prompt says it exists). A team index the guard refuses (a symlink, a FIFO, oversized) is not
 * loaded: the prompt then says so instead of failing.
 */
export const teamPromptInput = Effect.fn("TeamMemory.teamPromptInput")(function*(team: TeamLocation) {
  if (!team.memory.enabled || !team.enabled) return undefined
  const teamDir = yield* ensureTeamDir(team.memory.memoryDir)
  const index = yield* loadTeamIndex(teamDir).pipe(
    Effect.catchTag("PathTraversalError", (error) => {
      const note = `> team/${INDEX_FILE} was not loaded: ${error.message} Run \`memdir team audit\`.\n`
      const refused: LoadedIndex = {
        path: `${teamDir}${INDEX_FILE}`,
        exists: true,
        content: note,
        lines: 0,
        bytes: 0,
        truncatedByLines: false,
        truncatedByBytes: false,
        warning: note,
        entries: []
      }
      return Effect.succeed(refused)
    })
  )
  return { teamDir, index }
})

// ---------------------------------------------------------------------------------------------------------------
// Writing team memories (through the MemoryStore: guard, team lock, team/MEMORY.md line, secret refusal, size)
// ---------------------------------------------------------------------------------------------------------------

/** Refuses text holding a likely secret: team files are shared, so memdir never writes one there. */
export const refuseSecret = (file: string, text: string): Either.Either<void, SecretDetectedError> => {
  const found = findSecret(text)
  return found === undefined ? Either.void : Either.left(
    new SecretDetectedError({
      path: file,
      pattern: `${found.description} (${found.pattern})`,
      line: found.line,
      action: "write"
    })
  )
}

export interface TeamWriteResult extends WriteMemoryResult {
  readonly scope: "team"
  /** Path relative to the team directory (the key the guard checked). */
  readonly key: string
}

export type TeamWriteInput = WriteMemoryInput

const teamRoot = (memoryDir: string): MemoryRoot => ({ memoryDir, teamEnabled: true })

const teamResult = (written: StoreWriteResult): TeamWriteResult => ({
  path: written.path,
  file: written.key,
  key: written.key.slice(TEAM_DIR.length + 1),
  created: written.created,
  indexCreated: written.indexCreated,
  scope: "team"
})

/**
 * `memdir write --team`: a memory in team/ and its line in team/MEMORY.md, through the store (guard, team lock,
 * cap check first, secrets refused). Without `file`, a team memory with the same name and type is updated (no
 * duplicate), else `<type>_<slug>.md` is created. Every other frontmatter key of an existing file is kept.
 */
export const writeTeamMemory = Effect.fn("TeamMemory.writeTeamMemory")(function*(input: TeamWriteInput) {
  const store = yield* MemoryStore
  const scanner = yield* Scanner
  const path = yield* Path.Path
  const frontmatter = yield* validateWriteInput(input)
  let key: string
  if (input.file !== undefined) {
    key = input.file
  } else {
    const scan = yield* scanner.scan(teamDirOf(path, input.memoryDir))
    const sameName = scan.memories.find((m) =>
      m.type === frontmatter.type && m.name.trim().toLowerCase() === frontmatter.name.trim().toLowerCase()
    )
    const conventional = memoryFileName(frontmatter.type, frontmatter.name)
    const taken = scan.memories.some((m) => m.path === conventional) ||
      scan.problems.some((p) => p.path === conventional)
    key = sameName?.path ??
      (taken ? `${conventional.slice(0, -".md".length)}_${shortHash(frontmatter.name)}.md` : conventional)
  }
  const file = `${TEAM_DIR}/${key}`
  const written = yield* store.write(
    teamRoot(input.memoryDir),
    file,
    (existing) => memoryText(frontmatter, input.body, existing, file)
  )
  return teamResult(written)
})

export interface TeamFileInput {
  readonly memoryDir: string
  /** Relative to team/. */
  readonly key: string
  /** The whole file: frontmatter and body. */
  readonly content: string
}

/**
 * `memdir team write KEY`: a raw memory file (frontmatter + body) at `team/KEY`, through the store, and its line
 * in team/MEMORY.md from the file's own name and description. The frontmatter must parse; secrets are refused.
 */
export const writeTeamFile = Effect.fn("TeamMemory.writeTeamFile")(function*(input: TeamFileInput) {
  const store = yield* MemoryStore
  const parsed = yield* parseMemoryFile(input.content, input.key)
  if (parsed.frontmatter.type === "untyped") {
    return yield* new InvalidFrontmatterError({
      path: input.key,
      reason: "invalid-type",
      detail: "a team memory needs a type: user, feedback, project or reference"
    })
  }
  const written = yield* store.write(teamRoot(input.memoryDir), `${TEAM_DIR}/${input.key}`, input.content)
  return teamResult(written)
})

// ---------------------------------------------------------------------------------------------------------------
// Listing
// ---------------------------------------------------------------------------------------------------------------

export interface TeamListing {
  readonly teamDir: string
  /** Paths relative to the memory directory (`team/…`), newest first. */
  readonly memories: ReadonlyArray<MemoryHeader>
  readonly problems: ReadonlyArray<ScanProblem>
  /** Memories two people edited at once: the original and the copy holding the other version. */
  readonly conflicts: ReadonlyArray<{ readonly path: string; readonly conflictsWith: string }>
}

const inTeam = (relative: string): string => `${TEAM_DIR}/${relative}`

/** The team memories (headers only), problems and unresolved conflicts; an absent team/ is empty. */
export const listTeamMemories = Effect.fn("TeamMemory.listTeamMemories")(function*(memoryDir: string) {
  const scanner = yield* Scanner
  const path = yield* Path.Path
  const teamDir = teamDirOf(path, memoryDir)
  const scan = yield* scanner.scan(teamDir)
  const memories = scan.memories.map((m) => ({ ...m, path: inTeam(m.path) }))
  const listing: TeamListing = {
    teamDir,
    memories,
    problems: scan.problems.map((p) => ({ ...p, path: inTeam(p.path) })),
    conflicts: memories.flatMap((m) => {
      const original = conflictOriginal(m.path)
      return original === undefined ? [] : [{ path: m.path, conflictsWith: original }]
    })
  }
  return listing
})

// ---------------------------------------------------------------------------------------------------------------
// Cross-check: private feedback against team feedback
// ---------------------------------------------------------------------------------------------------------------

/** A team feedback memory that a private feedback memory seems to contradict. */
export interface Contradiction {
  /** `team/…`. */
  readonly path: string
  readonly name: string
  readonly description: string
  /** Share of the smaller memory's topic words that the other one has too (0–1). */
  readonly similarity: number
  /** The topic words both mention (stems). */
  readonly shared: ReadonlyArray<string>
  /** Which one prohibits: "private says never/avoid…, team says to do it", or the reverse. */
  readonly reason: string
}

export interface FeedbackText {
  readonly name: string
  readonly description: string
  readonly body: string
}

/** Words that turn a rule into a prohibition. */
const PROHIBITION =
  /\b(?:never|don'?t|do not|does not|doesn'?t|must not|mustn'?t|should not|shouldn'?t|shall not|cannot|can'?t|avoid(?:s|ed|ing)?|no longer|stop(?:ped)? (?:using|doing|adding|writing)|refrain|forbid(?:den)?|prohibit(?:ed)?|disallow(?:ed)?|not allowed|instead of)\b/i

/** The rule of a feedback memory: name, description and the body before **Why:** / **How to apply:**. */
const ruleText = (memory: FeedbackText): string => {
  const rule = memory.body.split(/\*\*(?:why|how to apply)\b/i)[0] ?? ""
  return `${memory.name}\n${memory.description}\n${rule}`
}

/** Whether a rule prohibits (never/don't/avoid/must not…) rather than prescribes. */
export const isProhibition = (memory: FeedbackText): boolean =>
  PROHIBITION.test(`${memory.description}\n${memory.body.split(/\*\*(?:why|how to apply)\b/i)[0] ?? ""}`)

/** Topic words of a rule (stemmed; stopwords, negations and weak verbs such as "use" or "make" removed). */
const topicWords = (memory: FeedbackText): ReadonlySet<string> =>
  new Set(analyze(ruleText(memory)).filter((word) => !WEAK_STEMS.has(word)))

/** Similarity at or above which two rules are about the same thing. */
export const CONTRADICTION_MIN_SIMILARITY = 0.5
/** And at least this many shared topic words (one shared word is a coincidence). */
export const CONTRADICTION_MIN_SHARED = 2

/**
 * The offline cross-check (transparent on purpose): two feedback rules contradict when they are about the same
 * thing (overlap of topic words ≥ 0.5 of the smaller rule, at least 2 words) and exactly one of them prohibits
 * (never / don't / avoid / must not …). "Never mock the DB" vs "mock the DB in unit tests" is caught; "never mock
 * the DB" vs "don't mock the database" agree. A model-backed check can replace it later.
 */
export const findContradictions = (
  candidate: FeedbackText,
  team: ReadonlyArray<FeedbackText & { readonly path: string }>
): Array<Contradiction> => {
  const words = topicWords(candidate)
  const prohibits = isProhibition(candidate)
  const found: Array<Contradiction> = []
  for (const memory of team) {
    if (isProhibition(memory) === prohibits) continue
    const theirs = topicWords(memory)
    const shared = [...words].filter((word) => theirs.has(word))
    const smaller = Math.min(words.size, theirs.size)
    const similarity = smaller === 0 ? 0 : shared.length / smaller
    if (shared.length < CONTRADICTION_MIN_SHARED || similarity < CONTRADICTION_MIN_SIMILARITY) continue
    found.push({
      path: memory.path,
      name: memory.name,
      description: memory.description,
      similarity: Math.round(similarity * 100) / 100,
      shared: shared.sort(),
      reason: prohibits
        ? "the new memory prohibits what this team memory prescribes"
        : "the new memory prescribes what this team memory prohibits"
    })
  }
  return found.sort((a, b) => b.similarity - a.similarity || (a.path < b.path ? -1 : 1))
}

/** Team feedback memories read at most: the cross-check must stay cheap on a large team directory. */
const CROSS_CHECK_MAX_MEMORIES = 200

/**
 * The team feedback memories (read through the guard) that `candidate` seems to contradict. Files the guard
 * refuses or that do not parse are skipped: the check advises, it never blocks a write.
 */
export const checkTeamContradictions = Effect.fn("TeamMemory.checkTeamContradictions")(function*(
  memoryDir: string,
  candidate: FeedbackText
) {
  const scanner = yield* Scanner
  const guard = yield* TeamGuard
  const path = yield* Path.Path
  const teamDir = teamDirOf(path, memoryDir)
  const scan = yield* scanner.scan(teamDir, { limit: CROSS_CHECK_MAX_MEMORIES })
  const feedback = scan.memories.filter((m) => m.type === "feedback")
  const team = yield* Effect.forEach(feedback, (m) =>
    guard.read(teamDir, m.path).pipe(
      Effect.map((text) =>
        Either.match(parseMemoryFile(text, m.path), {
          onLeft: () => [],
          onRight: (parsed) => [{ path: inTeam(m.path), name: m.name, description: m.description, body: parsed.body }]
        })
      ),
      Effect.orElseSucceed(() => [])
    ))
  return findContradictions(candidate, team.flat())
})

export interface PrivateWriteResult extends WriteMemoryResult {
  /** "team" when the file named a `team/…` key while team memory is on (the same door, the team rules). */
  readonly scope: MemoryScope
  /** Team feedback the new feedback memory seems to contradict (empty unless team memory is on). */
  readonly contradictions: ReadonlyArray<Contradiction>
}

/**
 * `writeMemory` for a private memory, with the cross-check of SPEC §8: before a feedback memory is saved, the team
 * feedback it seems to contradict is looked up (when `teamEnabled`) and returned beside the write result. The
 * write still happens: a private rule may rightly differ from the team's, the user decides.
 */
export const writePrivateMemory = Effect.fn("TeamMemory.writePrivateMemory")(function*(
  input: WriteMemoryInput & { readonly teamEnabled: boolean }
) {
  const contradictions = input.teamEnabled && input.type === "feedback" && scopeOf(input.file ?? "") === "private"
    ? yield* checkTeamContradictions(input.memoryDir, input)
    : []
  const written = yield* writeMemory(input)
  const result: PrivateWriteResult = { ...written, scope: scopeOf(written.file), contradictions }
  return result
})

export type TeamWriteError =
  | TeamMemoryDisabledError
  | InvalidMemoryInputError
  | InvalidFrontmatterError
  | PathTraversalError
  | IndexOverCapError
  | SecretDetectedError
  | LockTimeoutError
  | MemoryIoError
  | MemoryNotFoundError
