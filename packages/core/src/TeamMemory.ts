/**
 * Team memory: `<memdir>/team/`, memories shared with the people you work with, with its own `team/MEMORY.md`.
 * This module holds the team location (directory, switch, remote), the programs that write and list team
 * memories, and the team part of the prompt. Every path under `team/` goes through the `MemoryStore` and so
 * through `TeamGuard`; the switch itself is resolved once with the other settings (`internal/location/teamSwitch.ts`, by
 * `MemoryPaths`), and the contradiction check lives in `TeamContradiction.ts`.
 *
 * Every change to `team/` (writes, the team index, sync) happens under one lock, `<memdir>/.team.lock`, which
 * lives outside `team/` so it is never committed.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import {
  type IndexOverCapError,
  InvalidFrontmatterError,
  type InvalidMemoryDirError,
  type InvalidMemoryInputError,
  ioErrorOf,
  type LockTimeoutError,
  MemoryIoError,
  type MemoryNotFoundError,
  PathTraversalError,
  SecretDetectedError,
  type SettingsError,
  type TeamMemoryDisabledError
} from "./Errors.js"
import { parseMemoryFile } from "./Frontmatter.js"
import { withLock } from "./internal/fs/lock.js"
import { resolveTeamSwitch, TEAM_MEMORY_ENV } from "./internal/location/teamSwitch.js"
import { conflictOriginal } from "./internal/team/conflict.js"
import { type Frontmatter, type MemoryHeader, type MemoryScope, type ScanProblem, scopeOf, TEAM_DIR } from "./Memory.js"
import { MemoryFs } from "./MemoryFs.js"
import { INDEX_FILE, type LoadedIndex, toLoadedIndex } from "./MemoryIndex.js"
import { sameMemoryName } from "./MemoryLayout.js"
import { type MemoryLocation, MemoryPaths } from "./MemoryPaths.js"
import { type MemoryRoot, MemoryStore, type StoreWriteResult, TEAM_LOCK, TEAM_LOCK_OPTIONS } from "./MemoryStore.js"
import { Scanner, type ScanResult } from "./Scanner.js"
import { findSecret } from "./SecretScan.js"
import { Settings } from "./Settings.js"
import { checkTeamContradictions, type Contradiction } from "./TeamContradiction.js"
import { TeamGuard } from "./TeamGuard.js"
import {
  memoryFileName,
  memoryText,
  shortHash,
  validateWriteInput,
  writeLayout,
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
} from "./internal/location/teamSwitch.js"
export {
  checkTeamContradictions,
  type Contradiction,
  CONTRADICTION_MIN_SHARED,
  CONTRADICTION_MIN_SIMILARITY,
  type FeedbackText,
  findContradictions,
  isProhibition
} from "./TeamContradiction.js"

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

export class TeamMemory extends Context.Service<TeamMemory, {
  /** The memory location of `cwd` (MemoryPaths) and its team switch, directory and remote. */
  readonly resolve: (cwd: string) => Effect.Effect<TeamLocation, InvalidMemoryDirError | SettingsError>
  /** The team switch, directory and remote of an already resolved memory location. */
  readonly locate: (memory: MemoryLocation) => Effect.Effect<TeamLocation, SettingsError>
}>()("@memdir/core/TeamMemory") {}

/** `<memoryDir>team/` with a trailing separator. */
export const teamDirOf = (path: Path.Path, memoryDir: string): string =>
  path.join(path.resolve(memoryDir), TEAM_DIR) + path.sep

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

export const make: Effect.Effect<
  Context.Service.Shape<typeof TeamMemory>,
  Config.ConfigError,
  MemoryPaths | Settings | Path.Path
> = Effect.gen(function*() {
  const paths = yield* MemoryPaths
  const settings = yield* Settings
  const path = yield* Path.Path
  const envValue = Option.getOrUndefined(yield* Config.option(Config.String(TEAM_MEMORY_ENV)))

  const locate = Effect.fn("TeamMemory.locate")(function*(memory: MemoryLocation) {
    // A location resolved by MemoryPaths carries its team switch (settings read once); one built by hand does not.
    const team = memory.team ??
      (yield* Effect.fromResult(resolveTeamSwitch(memory, envValue, (yield* settings.load(memory.root.root)).sources)))
    const location: TeamLocation = { memory, teamDir: teamDirOf(path, memory.memoryDir), ...team }
    return location
  })

  const resolve = Effect.fn("TeamMemory.resolve")(function*(cwd: string) {
    return yield* locate(yield* paths.locate(cwd))
  })

  return TeamMemory.of({ resolve, locate })
})

export const layer: Layer.Layer<TeamMemory, Config.ConfigError, MemoryPaths | Settings | Path.Path> = Layer
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
  const memoryFs = yield* MemoryFs
  const path = yield* Path.Path
  const root = path.resolve(memoryDir)
  const teamDir = teamDirOf(path, root)
  yield* memoryFs.makeDirectory(teamDir).pipe(Effect.mapError(ioErrorOf("create directory", teamDir)))
  const realRoot = yield* memoryFs.realPath(root).pipe(Effect.mapError(ioErrorOf("resolve", root)))
  const realTeam = yield* memoryFs.realPath(teamDir).pipe(Effect.mapError(ioErrorOf("resolve", teamDir)))
  if (realTeam !== path.join(realRoot, TEAM_DIR)) {
    return yield* new PathTraversalError({
      key: TEAM_DIR,
      reason: "symlink-escape",
      detail: `the team directory resolves to ${realTeam}, not inside ${realRoot}`
    })
  }
  // `realTeam` is what `teamDir` leads to, and no link itself (a real path never ends in one)
  const info = yield* memoryFs.lstat(realTeam).pipe(Effect.mapError(ioErrorOf("stat", teamDir)))
  if (info.kind !== "Directory") {
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
  return toLoadedIndex(path.join(teamDir, INDEX_FILE), text !== undefined, text ?? "")
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
export const refuseSecret = (file: string, text: string): Result.Result<void, SecretDetectedError> => {
  const found = findSecret(text)
  return found === undefined ? Result.void : Result.fail(
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
 * Where a team memory without an explicit file goes (relative to team/): the team memory with the same name and
 * type, else `<type>_<slug>.md`, else — when that file is taken — the same name with a short hash of the name.
 */
/** The scan of team/ that a team write chooses its key and layout from. */
const scanTeam = (memoryDir: string) =>
  Effect.gen(function*() {
    const scanner = yield* Scanner
    const path = yield* Path.Path
    return yield* scanner.scan(teamDirOf(path, memoryDir))
  })

export const chooseTeamKey = Effect.fn("TeamMemory.chooseTeamKey")(
  function*(memoryDir: string, frontmatter: Frontmatter, scanned?: ScanResult) {
    const scan = scanned ?? (yield* scanTeam(memoryDir))
    const sameName = scan.memories.find((m) => m.type === frontmatter.type && sameMemoryName(m.name, frontmatter.name))
    const conventional = memoryFileName(frontmatter.type, frontmatter.name)
    const taken = scan.memories.some((m) => m.path === conventional) ||
      scan.problems.some((p) => p.path === conventional)
    return sameName?.path ??
      (taken ? `${conventional.slice(0, -".md".length)}_${shortHash(frontmatter.name)}.md` : conventional)
  }
)

/**
 * `memdir write --team`: a memory in team/ and its line in team/MEMORY.md, through the store (guard, team lock,
 * cap check first, secrets refused). Without `file`, a team memory with the same name and type is updated (no
 * duplicate), else `<type>_<slug>.md` is created. Every other frontmatter key of an existing file is kept.
 */
export const writeTeamMemory = Effect.fn("TeamMemory.writeTeamMemory")(function*(input: TeamWriteInput) {
  const store = yield* MemoryStore
  const frontmatter = yield* Effect.fromResult(validateWriteInput(input))
  // team/ has its own layout (its memories come from every teammate's agent).
  const scan = yield* scanTeam(input.memoryDir)
  const target = writeLayout(scan, input.layout)
  const key = input.file ?? (yield* chooseTeamKey(input.memoryDir, frontmatter, scan))
  const file = `${TEAM_DIR}/${key}`
  const written = yield* store.write(
    teamRoot(input.memoryDir),
    file,
    (existing) => memoryText(frontmatter, input.body, existing, file, target),
    { ifVersion: input.ifVersion }
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
  const parsed = yield* Effect.fromResult(parseMemoryFile(input.content, input.key))
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

export interface PrivateWriteResult extends WriteMemoryResult {
  /** "team" when the file named a `team/…` key while team memory is on (the same door, the team rules). */
  readonly scope: MemoryScope
  /** Team feedback the new feedback memory seems to contradict (empty unless team memory is on). */
  readonly contradictions: ReadonlyArray<Contradiction>
}

/**
 * `writeMemory` for a private memory, with the cross-check in docs/team-memory.md: before a feedback memory is saved,
 * the team feedback it seems to contradict is looked up (when `teamEnabled`) and returned beside the write result. The
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
