/**
 * memdir with no disk, no git and no clock of its own: every service as its test layer, over memories you
 * declare in code. For CI pipelines and unit tests of an agent loop that uses memdir.
 *
 *   const TestLayer = TestMemdir.layer({ memories: [TestMemdir.memory({ type: "feedback", name: "…", … })] })
 *   it.effect("recalls", () => Effect.gen(function*() { … }).pipe(Effect.provide(TestLayer)))
 *
 * Ages come from `Clock`: under `@effect/vitest`'s `it.effect` that is the `TestClock`, so
 * `TestClock.setTime(…)` decides what "today" is. For the write program and anything that must touch real
 * files, use `Fixtures` (real temp directories and git repos) instead.
 */
import { Path } from "@effect/platform"
import { serializeFrontmatter } from "@memdir/core/Frontmatter"
import * as GitRoot from "@memdir/core/GitRoot"
import type { MemoryType } from "@memdir/core/Memory"
import * as MemoryIndex from "@memdir/core/MemoryIndex"
import * as MemoryPaths from "@memdir/core/MemoryPaths"
import * as Recall from "@memdir/core/Recall"
import * as Scanner from "@memdir/core/Scanner"
import * as Selector from "@memdir/core/Selector"
import * as Settings from "@memdir/core/Settings"
import * as Staleness from "@memdir/core/Staleness"
import * as Layer from "effect/Layer"

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

/** Every memdir service as a deterministic in-memory test layer. */
export const layer = (options: TestMemdirOptions = {}) => {
  const memoryDir = options.memoryDir ?? DEFAULT_MEMORY_DIR
  const fileMap = files(options)
  const location: MemoryPaths.MemoryLocation = {
    root: { root: DEFAULT_ROOT, kind: "repository", commonDir: `${DEFAULT_ROOT}/.git` },
    memoryDir,
    source: "default",
    enabled: options.enabled ?? true,
    enabledBy: options.enabled === false ? "test" : "default"
  }
  const index = Layer.effect(
    MemoryIndex.MemoryIndex,
    MemoryIndex.makeTest({ [memoryDir]: options.index ?? indexText(options.memories ?? []) })
  )
  return Layer.mergeAll(
    GitRoot.layerTest({ [DEFAULT_ROOT]: location.root }),
    Settings.layerTest(),
    MemoryPaths.layerTest(location),
    Scanner.layerTest(fileMap),
    index,
    Staleness.layer,
    options.selector === undefined ? Selector.layer : Selector.layerTest(options.selector),
    Recall.layerTest(fileMap, options.selector === undefined ? {} : { script: options.selector })
  ).pipe(Layer.provide(Path.layer))
}
