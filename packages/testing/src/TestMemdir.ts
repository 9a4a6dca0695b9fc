/**
 * memdir with no disk, no git and no clock of its own: the live services over one in-memory world, holding
 * memories you declare in code. A write through any service (the store, the index, `MemoryFs` itself) is seen by
 * recall, doctor and dream. For CI pipelines and unit tests of an agent loop that uses
 * memdir. The example in docs/library.md#test-layers runs as a test (test/docs/test-layers.test.ts):
 *
 *   it.effect("recalls", () => Effect.gen(function*() { … }).pipe(Effect.provide(TestMemdir.layer({ memories }))))
 *
 * Ages and mtimes come from `Clock`: under `@effect/vitest`'s `it.effect` that is the `TestClock`, so
 * `TestClock.setTime(…)` decides what "today" is. No git and no model are in it: for the team sync, dream commits
 * and anything that must touch real files, use `Fixtures` (real temp directories and git repos) instead.
 */
import type * as Containment from "@memdir/core/Containment"
import * as DreamLock from "@memdir/core/DreamLock"
import { serializeFrontmatter } from "@memdir/core/Frontmatter"
import * as GitRoot from "@memdir/core/GitRoot"
import type { MemoryType } from "@memdir/core/Memory"
import * as MemoryFs from "@memdir/core/MemoryFs"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryPaths from "@memdir/core/MemoryPaths"
import * as MemoryStore from "@memdir/core/MemoryStore"
import * as Recall from "@memdir/core/Recall"
import * as Scanner from "@memdir/core/Scanner"
import * as Selector from "@memdir/core/Selector"
import * as Settings from "@memdir/core/Settings"
import * as Staleness from "@memdir/core/Staleness"
import * as TeamGuard from "@memdir/core/TeamGuard"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"

export const DEFAULT_ROOT = "/work/test-project"
export const DEFAULT_MEMORY_DIR = "/memdir-test/projects/-work-test-project/memory/"

const DAY = 86_400_000

/** One declared memory. `ageDays` is measured from `now` (default 0); `path` defaults to `<type>_<slug>.md`. */
export interface TestMemory {
  readonly type: MemoryType
  readonly name: string
  readonly description: string
  readonly body?: string
  readonly ageDays?: number
  readonly path?: string
}

export interface TestMemdirOptions {
  readonly memories?: ReadonlyArray<TestMemory>
  /** Raw files (relative path → content), e.g. broken frontmatter; mtime = now − ageDays. */
  readonly rawFiles?: Readonly<Record<string, { readonly content: string; readonly ageDays?: number }>>
  /** MEMORY.md text (default: one line per declared memory). */
  readonly index?: string
  /** What "now" is for computing mtimes from `ageDays` (epoch ms; default 0, the TestClock's start). */
  readonly now?: number
  /** A scripted selector instead of the offline one. */
  readonly selector?: Selector.SelectorScript
  readonly memoryDir?: string
  readonly enabled?: boolean
}

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "") || "memory"

export const memoryPath = (m: TestMemory): string => m.path ?? `${m.type}_${slug(m.name)}.md`

/** The files (relative path → content + mtime) a set of declared memories stands for. */
export const files = (options: TestMemdirOptions): Record<string, Recall.RecallTestFile> => {
  const now = options.now ?? 0
  const out: Record<string, Recall.RecallTestFile> = {}
  for (const m of options.memories ?? []) {
    const content = serializeFrontmatter({ name: m.name, description: m.description, type: m.type }, m.body ?? "")
    out[memoryPath(m)] = { content, mtime: now - (m.ageDays ?? 0) * DAY }
  }
  for (const [path, raw] of Object.entries(options.rawFiles ?? {})) {
    out[path] = { content: raw.content, mtime: now - (raw.ageDays ?? 0) * DAY }
  }
  return out
}

/** The MEMORY.md a set of declared memories would have. */
export const indexText = (memories: ReadonlyArray<TestMemory>): string =>
  memories.map((m) => `- [${m.name}](${memoryPath(m)}) — ${m.description}`.slice(0, 150)).join("\n") +
  (memories.length > 0 ? "\n" : "")

/** What `TestMemdir.layer` provides: the live services, the in-memory file system they share, and `Path`. */
export type TestMemdirServices =
  | MemoryFs.MemoryFs
  | Path.Path
  | GitRoot.GitRoot
  | Settings.Settings
  | MemoryPaths.MemoryPaths
  | Scanner.Scanner
  | MemoryIndex.MemoryIndex
  | Containment.Containment
  | TeamGuard.TeamGuard
  | MemoryStore.MemoryStore
  | DreamLock.DreamLock
  | Staleness.Staleness
  | Selector.Selector
  | Recall.RecallSession

/** Writes the declared files into the world, each with its age as its mtime. */
const seed = (memoryDir: string, fileMap: Record<string, Recall.RecallTestFile>, index: string) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const fs = yield* MemoryFs.MemoryFs
      const path = yield* Path.Path
      yield* fs.makeDirectory(memoryDir)
      yield* fs.writeFileAtomic(path.join(memoryDir, MemoryIndex.INDEX_FILE), index)
      for (const [relative, file] of Object.entries(fileMap)) {
        const absolute = path.join(memoryDir, relative)
        yield* fs.writeFileAtomic(absolute, file.content)
        yield* fs.setModified(absolute, file.mtime)
      }
    }).pipe(Effect.orDie)
  )

/**
 * memdir in memory: the live scanner, index, store, recall, team guard and dream lock over one in-memory world
 * (`MemoryFs.layerMemory`: every service reads and writes through the one in-memory `MemoryFs`), holding the
 * declared memories. A write through any service is seen by every other one; nothing touches the disk.
 */
export const layer = (options: TestMemdirOptions = {}): Layer.Layer<TestMemdirServices> => {
  const memoryDir = options.memoryDir ?? DEFAULT_MEMORY_DIR
  const location: MemoryPaths.MemoryLocation = {
    root: { root: DEFAULT_ROOT, kind: "repository", commonDir: `${DEFAULT_ROOT}/.git` },
    memoryDir,
    source: "default",
    enabled: options.enabled ?? true,
    enabledBy: options.enabled === false ? "test" : "default"
  }
  const world = Layer.merge(MemoryFs.layerMemory(), Path.layer)
  const seeded = Layer.provideMerge(
    seed(memoryDir, files(options), options.index ?? indexText(options.memories ?? [])),
    world
  )
  const base = Layer.mergeAll(
    GitRoot.layerTest({ [DEFAULT_ROOT]: location.root }),
    Settings.layerTest(),
    MemoryPaths.layerTest(location),
    Scanner.layer,
    MemoryIndex.layerOver,
    TeamGuard.layerOver,
    DreamLock.layer,
    Staleness.layer,
    options.selector === undefined ? Selector.layer : Selector.layerTest(options.selector)
  )
  const store = Layer.provideMerge(MemoryStore.layerWithContainment, base)
  return Layer.provideMerge(Recall.layer, store).pipe(Layer.provideMerge(seeded))
}
