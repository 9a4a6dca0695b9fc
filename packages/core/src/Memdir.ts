/**
 * The whole of memdir as one layer: every live service, composed, needing only `FileSystem` and `Path`
 * (from `@effect/platform-node`'s `NodeContext.layer`). An agent runtime provides it once per session:
 *
 *   const MemdirLive = Memdir.layer().pipe(Layer.provide(NodeContext.layer))
 *
 * Swap single services for their `layerTest` (or `@memdir/testing`) in CI.
 */
import type { FileSystem, Path } from "@effect/platform"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import type * as Containment from "./Containment.js"
import * as DreamLock from "./DreamLock.js"
import type * as GitAges from "./GitAges.js"
import * as GitRoot from "./GitRoot.js"
import * as MemoryFs from "./MemoryFs.js"
import * as MemoryIndex from "./MemoryIndex.js"
import * as MemoryPaths from "./MemoryPaths.js"
import * as MemoryStore from "./MemoryStore.js"
import * as MemoryToolBackend from "./MemoryToolBackend.js"
import * as Model from "./Model.js"
import * as ModelSelector from "./ModelSelector.js"
import * as Recall from "./Recall.js"
import * as Scanner from "./Scanner.js"
import * as Selector from "./Selector.js"
import * as Settings from "./Settings.js"
import * as Staleness from "./Staleness.js"
import * as TeamGuard from "./TeamGuard.js"
import * as TeamMemory from "./TeamMemory.js"

/** Every service memdir's programs need. */
export type MemdirServices =
  | DreamLock.DreamLock
  | GitRoot.GitRoot
  | Settings.Settings
  | MemoryPaths.MemoryPaths
  | MemoryIndex.MemoryIndex
  | MemoryFs.MemoryFs
  | Containment.Containment
  | MemoryStore.MemoryStore
  | MemoryToolBackend.MemoryToolBackend
  | Model.Model
  | Scanner.Scanner
  | Selector.Selector
  | Staleness.Staleness
  | Recall.RecallSession
  | TeamGuard.TeamGuard
  | TeamMemory.TeamMemory

export interface MemdirLayerOptions<R = never> {
  /** The `--memory-dir` flag: a trusted source of the directory (the env override still wins). */
  readonly flagMemoryDir?: string | undefined
  /**
   * Which selector recall uses: "offline" (the default here: no key, no network), "model" (the LLM selector,
   * degrading to offline per turn on any model failure), "auto" (model when a key is configured — the CLI's
   * default), or your own layer (it may use the `Model`).
   */
  readonly selector?:
    | ModelSelector.SelectorChoice
    | Layer.Layer<Selector.Selector, ConfigError.ConfigError, Model.Model>
    | undefined
  /** The model (default: `Model.layer`, from `Config`: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, MEMDIR_MODEL_*). */
  readonly model?: Layer.Layer<Model.Model, ConfigError.ConfigError> | undefined
  /**
   * Commit times for memory directories git tracks (`GitAges.layerLive`, which runs git when HEAD moved: it needs a
   * `CommandExecutor`). Absent: ages come from `modified:` and mtimes only.
   */
  readonly gitAges?: Layer.Layer<GitAges.GitAges, never, R> | undefined
}

/** The live services. Environment comes from `Config` (MEMDIR_HOME, MEMDIR_MEMORY_DIR, …). */
export const layer = <R = never>(
  options: MemdirLayerOptions<R> = {}
): Layer.Layer<MemdirServices, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path | R> => {
  const settings = options.flagMemoryDir === undefined ?
    Settings.layer :
    Settings.layerWith({ flagMemoryDir: options.flagMemoryDir })
  const base = Layer.mergeAll(
    Layer.provideMerge(
      options.gitAges === undefined ? Scanner.layer : Scanner.layer.pipe(Layer.provide(options.gitAges)),
      MemoryFs.layer
    ),
    DreamLock.layer,
    GitRoot.layer,
    settings,
    MemoryIndex.layerConfig,
    Staleness.layer,
    TeamGuard.layer,
    Layer.provideMerge(
      typeof options.selector === "string" ?
        ModelSelector.layerFor(options.selector) :
        options.selector ?? Selector.layer,
      options.model ?? Model.layer
    )
  )
  // The one door to memory files, over the base (file system, index, team guard).
  const store = Layer.provideMerge(MemoryStore.layerWithContainment, base)
  const derived = Layer.mergeAll(MemoryPaths.layer, Recall.layer, MemoryToolBackend.layer)
  // TeamMemory needs MemoryPaths: one more step.
  const services = Layer.provideMerge(TeamMemory.layer, Layer.provideMerge(derived, store))
  // GitAges too (built once, shared with the scanner), so `show` counts from the same commit times.
  return options.gitAges === undefined ? services : Layer.merge(services, options.gitAges)
}
