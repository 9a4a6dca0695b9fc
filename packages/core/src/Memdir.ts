/**
 * The whole of memdir as one layer: every live service, composed (team sync included, and a session's
 * `Extractor` when asked for), needing only what `@effect/platform-node`'s `NodeServices.layer` provides
 * (`Path`, and the `ChildProcessSpawner` that team sync runs git with). An agent runtime provides it
 * once per session:
 *
 *   const MemdirLive = Memdir.layer().pipe(Layer.provide(NodeServices.layer))
 *
 * Swap single services for their `layerTest` (or `@memdir/testing`) in CI.
 *
 * Importing this module is cheap: it holds the location services (`locationLayer`: settings, git root, memory
 * paths), and `layer` loads the modules of the other services when it is built (`import()`, so a bundle makes
 * them chunks of their own), the extraction code only for a layer with an `extractor`. A program that only asks
 * where the memory lives never evaluates the scanner, the selector, YAML or the team and extraction code
 * (docs/architecture.md#start-up).
 */
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import { pipe } from "effect/Function"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import type * as Containment from "./Containment.js"
import type * as DreamLock from "./DreamLock.js"
import type * as Extract from "./Extract.js"
import type * as GitAges from "./GitAges.js"
import * as GitRoot from "./GitRoot.js"
import type * as HeaderCache from "./HeaderCache.js"
import { andThen, inOrder } from "./internal/layers/inOrder.js"
import * as MemoryFs from "./MemoryFs.js"
import type * as MemoryIndex from "./MemoryIndex.js"
import * as MemoryPaths from "./MemoryPaths.js"
import type * as MemoryStore from "./MemoryStore.js"
import type * as MemoryToolBackend from "./MemoryToolBackend.js"
import type * as Model from "./Model.js"
import type * as ModelSelector from "./ModelSelector.js"
import type * as Recall from "./Recall.js"
import type * as Scanner from "./Scanner.js"
import type * as Selector from "./Selector.js"
import * as Settings from "./Settings.js"
import type * as Staleness from "./Staleness.js"
import type * as TeamGuard from "./TeamGuard.js"
import type * as TeamMemory from "./TeamMemory.js"
import type * as TeamSync from "./TeamSync.js"
import type * as TermCache from "./TermCache.js"

/** Where a project's memory lives: what `locationLayer` provides (and `layer` too). */
export type LocationServices = Settings.Settings | GitRoot.GitRoot | MemoryPaths.MemoryPaths | MemoryFs.MemoryFs

/** Every service memdir's programs need. */
export type MemdirServices =
  | LocationServices
  | DreamLock.DreamLock
  | HeaderCache.HeaderCache
  | MemoryIndex.MemoryIndex
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
  | TeamSync.TeamSync
  | TermCache.TermCache

/** The options of `locationLayer`. */
export interface LocationLayerOptions {
  /** The `--memory-dir` flag: a trusted source of the directory (the env override still wins). */
  readonly flagMemoryDir?: string | undefined
}

export interface MemdirLayerOptions<R = never> extends LocationLayerOptions {
  /**
   * Which selector recall uses: "offline" (the default here: no key, no network), "model" (the LLM selector,
   * degrading to offline per turn on any model failure), "auto" (model when a key is configured — the CLI's
   * default), or your own layer (it may use the `Model`).
   */
  readonly selector?:
    | ModelSelector.SelectorChoice
    | Layer.Layer<Selector.Selector, Config.ConfigError, Model.Model>
    | undefined
  /** The model (default: `Model.layer`, from `Config`: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, MEMDIR_MODEL_*). */
  readonly model?: Layer.Layer<Model.Model, Config.ConfigError> | undefined
  /**
   * Commit times for memory directories git tracks (`GitAges.layerLive`, which runs git when HEAD moved: it needs a
   * `ChildProcessSpawner`). Absent: ages come from `modified:` and mtimes only.
   */
  readonly gitAges?: Layer.Layer<GitAges.GitAges, never, R> | undefined
  /**
   * A background `Extractor` for this session (docs/extraction.md): the layer provides it too, living as long as
   * the layer's scope. Absent: no `Extractor` (and the extraction code is not loaded).
   */
  readonly extractor?: Extract.ExtractInput | undefined
}

/** `Extract.Extractor` when the options ask for one. */
export type ExtractorOf<O> = O extends { readonly extractor: Extract.ExtractInput } ? Extract.Extractor : never

/** What a layer with these options needs besides Node's context: what its `gitAges` layer needs. */
export type RequirementsOf<O> = O extends { readonly gitAges: Layer.Layer<GitAges.GitAges, never, infer R> } ? R
  : never

/**
 * The platform services `layer` runs on: `Path`, and the `ChildProcessSpawner` team sync runs git with; both come
 * from `NodeServices.layer`. (Files are read and written through `MemoryFs`, which the layer builds in.)
 */
export type Platform = Path.Path | ChildProcessSpawner

/** Settings (with the trusted flag, when given), git root and memory paths over the live `MemoryFs`. */
export const locationLayer = (
  options: LocationLayerOptions = {}
): Layer.Layer<LocationServices, Config.ConfigError, Path.Path> => {
  const settings = options.flagMemoryDir === undefined ?
    Settings.layer :
    Settings.layerWith({ flagMemoryDir: options.flagMemoryDir })
  return inOrder<Path.Path>()((start) =>
    pipe(start, andThen(MemoryFs.layer), andThen(settings), andThen(GitRoot.layer), andThen(MemoryPaths.layer))
  )
}

/** The live services. Environment comes from `Config` (MEMDIR_HOME, MEMDIR_MEMORY_DIR, …). */
export const layer = <const O extends MemdirLayerOptions<any> = {}>(
  options: O = {} as O
): Layer.Layer<
  MemdirServices | ExtractorOf<O>,
  Config.ConfigError,
  Platform | RequirementsOf<O>
> =>
  Layer.unwrap(
    Effect.map(
      Effect.promise(() => import("./internal/layers/memdirServices.js")),
      (services) => services.compose(options, locationLayer(options))
    )
  ) as Layer.Layer<MemdirServices | ExtractorOf<O>, Config.ConfigError, Platform | RequirementsOf<O>>
