/**
 * The whole of memdir as one layer: every live service, composed, each over the dependencies its own layer
 * declares, needing only `FileSystem`, `Path` and `CommandExecutor` (git, for team sync and dream commits) from
 * `@effect/platform-node`'s `NodeContext.layer`. An agent runtime provides it once per session:
 *
 *   const MemdirLive = Memdir.layer().pipe(Layer.provide(NodeContext.layer))
 *
 * With `extractor` (the session's transcript and project), the session's background `Extractor` is in it too.
 * Swap single services for their `layerTest` (or `@memdir/testing`) in CI.
 */
import type { CommandExecutor, FileSystem, Path } from "@effect/platform"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import type * as Containment from "./Containment.js"
import * as DreamLock from "./DreamLock.js"
import * as Extract from "./Extract.js"
import * as Git from "./Git.js"
import * as GitRoot from "./GitRoot.js"
import * as MemoryFs from "./MemoryFs.js"
import * as MemoryIndex from "./MemoryIndex.js"
import * as MemoryPaths from "./MemoryPaths.js"
import * as MemoryStore from "./MemoryStore.js"
import * as Model from "./Model.js"
import * as ModelSelector from "./ModelSelector.js"
import * as Recall from "./Recall.js"
import * as Scanner from "./Scanner.js"
import * as Selector from "./Selector.js"
import * as Settings from "./Settings.js"
import * as Staleness from "./Staleness.js"
import * as TeamGuard from "./TeamGuard.js"
import * as TeamMemory from "./TeamMemory.js"
import * as TeamSync from "./TeamSync.js"

/** Every service memdir's programs need (the session's `Extractor` comes on top, with `extractor`). */
export type MemdirServices =
  | DreamLock.DreamLock
  | Git.Git
  | GitRoot.GitRoot
  | Settings.Settings
  | MemoryPaths.MemoryPaths
  | MemoryIndex.MemoryIndex
  | MemoryFs.MemoryFs
  | Containment.Containment
  | MemoryStore.MemoryStore
  | Model.Model
  | Scanner.Scanner
  | Selector.Selector
  | Staleness.Staleness
  | Recall.RecallSession
  | TeamGuard.TeamGuard
  | TeamMemory.TeamMemory
  | TeamSync.TeamSync

/** What `Memdir.layer` needs from the platform. */
export type MemdirPlatform = FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor

export interface MemdirLayerOptions {
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
}

/** With `extractor`, the layer also holds the session's background `Extractor` (extraction after each turn). */
export interface MemdirSessionOptions extends MemdirLayerOptions {
  readonly extractor: Extract.ExtractInput
}

/** The services every other one builds on: file system, settings, scan, index, team guard, model, git. */
const foundation = (options: MemdirLayerOptions) => {
  const settings = options.flagMemoryDir === undefined ?
    Settings.layer :
    Settings.layerWith({ flagMemoryDir: options.flagMemoryDir })
  const selector = typeof options.selector === "string" ?
    ModelSelector.layerFor(options.selector) :
    options.selector ?? Selector.layer
  return Layer.mergeAll(
    DreamLock.layer,
    Git.layer,
    GitRoot.layer,
    settings,
    Scanner.layer,
    MemoryIndex.layerConfig,
    Staleness.layer,
    TeamGuard.layerOver,
    Layer.provideMerge(selector, options.model ?? Model.layer)
  ).pipe(Layer.provideMerge(MemoryFs.layer))
}

/** The live services. Environment comes from `Config` (MEMDIR_HOME, MEMDIR_MEMORY_DIR, …). */
export function layer(
  options?: MemdirLayerOptions
): Layer.Layer<MemdirServices, ConfigError.ConfigError, MemdirPlatform>
export function layer(
  options: MemdirSessionOptions
): Layer.Layer<MemdirServices | Extract.Extractor, ConfigError.ConfigError, MemdirPlatform>
export function layer(
  options: MemdirLayerOptions & { readonly extractor?: Extract.ExtractInput | undefined } = {}
):
  | Layer.Layer<MemdirServices, ConfigError.ConfigError, MemdirPlatform>
  | Layer.Layer<MemdirServices | Extract.Extractor, ConfigError.ConfigError, MemdirPlatform>
{
  // The one door to memory files, over the foundation (file system, index, team guard).
  const store = Layer.provideMerge(MemoryStore.layerWithContainment, foundation(options))
  const programs = Layer.provideMerge(Layer.mergeAll(MemoryPaths.layer, Recall.layer, TeamSync.layerOver), store)
  // TeamMemory resolves the team location through MemoryPaths: one more step.
  const services = Layer.provideMerge(TeamMemory.layer, programs)
  return options.extractor === undefined ? services : Layer.provideMerge(Extract.layer(options.extractor), services)
}
