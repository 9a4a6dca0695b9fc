/**
 * Real parts for tests: scratch directories, real git repositories and worktrees, memory files with a given
 * age. Everything is scoped: the directories disappear when the scope closes.
 */
import { serializeFrontmatter } from "@memdir/core/Frontmatter"
import type { MemoryType } from "@memdir/core/Memory"
import type { TeamLocation } from "@memdir/core/TeamMemory"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import type { PlatformError } from "effect/PlatformError"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import { memoryPath, type TestMemory } from "./TestMemdir.js"

const DAY = 86_400_000

/** Run git with a fixed identity; fails with the command's stderr folded into the error. */
export const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    return yield* spawner.string(
      ChildProcess.make("git", ["-c", "user.email=test@memdir.invalid", "-c", "user.name=memdir test", ...args], {
        cwd,
        env: { GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0" },
        extendEnv: true
      })
    )
  })

/** A scratch directory, real-path'd (macOS /var → /private/var), removed with the scope. */
export const scratchDirectory: Effect.Effect<string, PlatformError, FileSystem.FileSystem | Scope.Scope> = Effect.gen(
  function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "memdir-test-" }))
  }
)

/** A git repository with one commit, in a scratch directory. */
export const gitRepository = (name = "project") =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = path.join(yield* scratchDirectory, name)
    yield* fs.makeDirectory(root, { recursive: true })
    yield* git(root, "init", "-q", "-b", "main")
    yield* fs.writeFileString(path.join(root, "README.md"), "# test project\n")
    yield* git(root, "add", ".")
    yield* git(root, "commit", "-q", "-m", "initial")
    return root
  })

/** `git worktree add` of a new branch beside the repository; returns the worktree's path. */
export const gitWorktree = (repository: string, name: string) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const worktree = path.join(path.dirname(repository), name)
    yield* git(repository, "worktree", "add", "-q", "-b", name, worktree)
    return worktree
  })

/** Write declared memories as real files (frontmatter + body) with mtimes `ageDays` before the Clock's now. */
export const writeMemoryFiles = (memoryDir: string, memories: ReadonlyArray<TestMemory>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const now = yield* Clock.currentTimeMillis
    yield* fs.makeDirectory(memoryDir, { recursive: true, mode: 0o700 })
    return yield* Effect.forEach(memories, (m) =>
      Effect.gen(function*() {
        const file = path.join(memoryDir, memoryPath(m))
        yield* fs.makeDirectory(path.dirname(file), { recursive: true })
        yield* fs.writeFileString(file, memoryFileText(m.type, m.name, m.description, m.body ?? ""))
        const mtime = new Date(now - (m.ageDays ?? 0) * DAY)
        yield* fs.utimes(file, mtime, mtime)
        return file
      }))
  })

export const memoryFileText = (type: MemoryType, name: string, description: string, body: string): string =>
  serializeFrontmatter({ name, description, type }, body)

/**
 * Run with HOME and MEMDIR_HOME pointing at `home` (and no other MEMDIR_* variable): never the real home. An empty
 * value in `env` is a value, as memdir reads the environment (`Settings.envProvider`).
 */
export const withMemdirHome = (home: string, env: Readonly<Record<string, string>> = {}) =>
  Effect.provideService(
    ConfigProvider.ConfigProvider,
    ConfigProvider.fromEnvRecord({ HOME: home, MEMDIR_HOME: `${home}/.memdir`, ...env }, { preserveEmptyStrings: true })
  )

/**
 * One teammate's side of team memory synced through the bare repository `remote`: private memory in
 * `<root>/<name>/memory/`, team memory in its `team/`, on for this test. Only the location: no directory is made.
 */
export const teammate = (root: string, name: string, remote: string): TeamLocation => {
  const memoryDir = `${root}/${name}/memory/`
  return {
    memory: {
      root: { root: `${root}/${name}/project`, kind: "none" },
      memoryDir,
      source: "default",
      enabled: true,
      enabledBy: "default"
    },
    teamDir: `${memoryDir}team/`,
    enabled: true,
    enabledBy: "test",
    remote
  }
}
