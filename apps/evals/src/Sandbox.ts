/**
 * A scenario's world on disk: the memory directory (files with their ages in days before the scenario's "now",
 * and MEMORY.md) and the small project, in a scratch directory that lives as long as the trial's scope.
 */
import { serializeFrontmatter } from "@memdir/core/Frontmatter"
import { formatIndexEntry } from "@memdir/core/Memory"
import type { MemoryType } from "@memdir/core/Memory"
import { INDEX_FILE } from "@memdir/core/MemoryIndex"
import { MS_PER_DAY } from "@memdir/core/Staleness"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { EvalIoError } from "./Errors.js"
import { listMarkdown, type MemoryDirFixture, type ProjectFixture } from "./Suite.js"

export interface SandboxPaths {
  /** The scratch root; every path a run may touch is under it. */
  readonly root: string
  /** With a trailing separator, as memdir names memory directories. */
  readonly memoryDir: string
  readonly projectDir: string
}

const ioError = (op: string, path: string) => (error: { readonly message: string }) =>
  new EvalIoError({ op, path, detail: error.message })

/**
 * The mtime for a file `ageDays` old at `nowMs`: an hour into that day, so the floor of the age is exactly
 * `ageDays`; `order` seconds earlier still, so files of the same age keep the fixture's order (newest first).
 */
export const mtimeFor = (nowMs: number, ageDays: number, order: number): Date =>
  new Date(nowMs - ageDays * MS_PER_DAY - 3_600_000 - order * 1000)

interface PlannedMemory {
  readonly path: string
  readonly content: string
  readonly ageDays: number
  readonly indexLine?: string | undefined
}

/** Writes the memory fixture into `memoryDir` and returns the relative paths written, in fixture order. */
export const writeMemoryFixture = Effect.fn("Sandbox.writeMemoryFixture")(function*(
  fixture: MemoryDirFixture | undefined,
  suiteDirectory: string,
  memoryDir: string,
  nowMs: number
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  yield* fs.makeDirectory(memoryDir, { recursive: true, mode: 0o700 }).pipe(
    Effect.mapError(ioError("mkdir", memoryDir))
  )
  const planned: Array<PlannedMemory> = []
  if (fixture?.dir !== undefined) {
    const source = path.join(suiteDirectory, fixture.dir)
    for (const relative of (yield* listMarkdown(source)) ?? []) {
      if (relative === INDEX_FILE) continue
      const file = path.join(source, relative)
      const content = yield* fs.readFileString(file).pipe(Effect.mapError(ioError("read", file)))
      planned.push({ path: relative, content, ageDays: fixture.ages[relative] ?? 0 })
    }
  }
  for (const file of fixture?.files ?? []) {
    const content = file.content ?? serializeFrontmatter(
      { name: file.name!, description: file.description!, type: file.type as MemoryType },
      file.body === undefined ? "" : file.body.endsWith("\n") ? file.body : file.body + "\n"
    )
    const indexLine = file.content === undefined ?
      formatIndexEntry({ title: file.name!, file: file.path, hook: file.description! }) :
      undefined
    planned.push({ path: file.path, content, ageDays: file.ageDays, indexLine })
  }
  let order = 0
  for (const memory of planned) {
    const target = path.join(memoryDir, memory.path)
    yield* fs.makeDirectory(path.dirname(target), { recursive: true, mode: 0o700 }).pipe(
      Effect.mapError(ioError("mkdir", target))
    )
    yield* fs.writeFileString(target, memory.content, { mode: 0o600 }).pipe(Effect.mapError(ioError("write", target)))
    const mtime = mtimeFor(nowMs, memory.ageDays, order++)
    yield* fs.utimes(target, mtime, mtime).pipe(Effect.mapError(ioError("utimes", target)))
  }
  const index = fixture?.index ?? planned.flatMap((m) => m.indexLine === undefined ? [] : [m.indexLine]).join("\n")
  const indexPath = path.join(memoryDir, INDEX_FILE)
  yield* fs.writeFileString(indexPath, index.length === 0 || index.endsWith("\n") ? index : index + "\n", {
    mode: 0o600
  }).pipe(Effect.mapError(ioError("write", indexPath)))
  return planned.map((m) => m.path)
})

/** Copies the project fixture (directory, then inline files) into `projectDir`. */
export const writeProjectFixture = Effect.fn("Sandbox.writeProjectFixture")(function*(
  fixture: ProjectFixture | undefined,
  suiteDirectory: string,
  projectDir: string
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  yield* fs.makeDirectory(projectDir, { recursive: true }).pipe(Effect.mapError(ioError("mkdir", projectDir)))
  if (fixture?.dir !== undefined) {
    const source = path.join(suiteDirectory, fixture.dir)
    yield* fs.copy(source, projectDir, { overwrite: true }).pipe(Effect.mapError(ioError("copy", source)))
  }
  for (const [relative, content] of Object.entries(fixture?.files ?? {})) {
    const target = path.join(projectDir, relative)
    yield* fs.makeDirectory(path.dirname(target), { recursive: true }).pipe(Effect.mapError(ioError("mkdir", target)))
    yield* fs.writeFileString(target, content).pipe(Effect.mapError(ioError("write", target)))
  }
})

/**
 * A scratch world for one trial, removed when the scope closes: `<root>/memory/` and `<root>/project/`. The root
 * is a real path (symlinks resolved) so that paths the agent sees and paths the tools check agree.
 */
export const makeSandbox = Effect.fn("Sandbox.makeSandbox")(function*(options: {
  readonly suiteDirectory: string
  readonly nowMs: number
  readonly memories?: MemoryDirFixture | undefined
  readonly project?: ProjectFixture | undefined
}) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const scratch = yield* fs.makeTempDirectoryScoped({ prefix: "memdir-eval-" }).pipe(
    Effect.mapError(ioError("mkdtemp", "temporary directory"))
  )
  const root = yield* fs.realPath(scratch).pipe(Effect.mapError(ioError("realpath", scratch)))
  const memoryDir = path.join(root, "memory") + path.sep
  const projectDir = path.join(root, "project")
  const memoryFiles = yield* writeMemoryFixture(options.memories, options.suiteDirectory, memoryDir, options.nowMs)
  yield* writeProjectFixture(options.project, options.suiteDirectory, projectDir)
  return { root, memoryDir, projectDir, memoryFiles }
})
