/**
 * The composition behind `Memdir.layer`: every live service over the location services, team sync over the one
 * `Git`, and a session's `Extractor` when the options ask for one. Loaded by `Memdir.layer` when the layer is
 * built, so importing `Memdir` evaluates none of these modules; the extraction code is loaded only for an
 * `Extractor`.
 *
 * The services' layers are built one after another (`internal/layers/inOrder.ts`: the types check the order).
 */
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import { pipe } from "effect/Function"
import * as Layer from "effect/Layer"
import * as DreamLock from "../../DreamLock.js"
import * as Git from "../../Git.js"
import * as HeaderCache from "../../HeaderCache.js"
import type { LocationServices, MemdirLayerOptions, MemdirServices, Platform } from "../../Memdir.js"
import * as MemoryIndex from "../../MemoryIndex.js"
import * as MemoryStore from "../../MemoryStore.js"
import * as MemoryToolBackend from "../../MemoryToolBackend.js"
import * as Model from "../../Model.js"
import * as ModelSelector from "../../ModelSelector.js"
import * as Recall from "../../Recall.js"
import * as Scanner from "../../Scanner.js"
import * as Selector from "../../Selector.js"
import * as Staleness from "../../Staleness.js"
import * as TeamGuard from "../../TeamGuard.js"
import * as TeamMemory from "../../TeamMemory.js"
import * as TeamSync from "../../TeamSync.js"
import * as TermCache from "../../TermCache.js"
import { andThen, inOrder } from "./inOrder.js"

/** The selector layer the options name (over the model). */
const selectorOf = <R>(options: MemdirLayerOptions<R>) =>
  typeof options.selector === "string" ?
    ModelSelector.layerFor(options.selector) :
    options.selector ?? Selector.layer

/** The services `Memdir.layer` provides, over the given location layer. */
export const servicesLayer = <R>(
  options: MemdirLayerOptions<R>,
  location: Layer.Layer<LocationServices, Config.ConfigError, Platform>
): Layer.Layer<MemdirServices, Config.ConfigError, Platform | R> => {
  // No git ages given: an empty layer in their place (the scanner then counts from `modified:` and mtimes).
  const gitAges = (options.gitAges ?? Layer.empty) as Layer.Layer<never, never, Platform>
  return inOrder<Platform>()((start) =>
    pipe(
      start,
      andThen(location),
      // GitAges first, so the scanner finds it; built once, shared with `show` through the context.
      andThen(gitAges),
      // what earlier scans made of unchanged heads, kept per memory directory: before the scanner, which finds it
      andThen(HeaderCache.layer),
      andThen(Scanner.layer),
      andThen(options.model ?? Model.layer),
      andThen(selectorOf(options)),
      andThen(DreamLock.layer),
      andThen(MemoryIndex.layerConfig),
      andThen(Staleness.layer),
      andThen(TeamGuard.layer),
      // The one door to memory files, over the file system, index and team guard.
      andThen(MemoryStore.layerWithContainment),
      // whole bodies' terms for the offline selector, cached per memory directory
      andThen(TermCache.layer),
      andThen(Recall.layer),
      andThen(MemoryToolBackend.layer),
      andThen(TeamMemory.layer),
      andThen(Git.layer),
      andThen(TeamSync.layerOver)
    )
  ) as Layer.Layer<MemdirServices, Config.ConfigError, Platform | R>
}

/** `servicesLayer`, plus the session's `Extractor` when the options give its input (Extract loaded only then). */
export const compose = <R>(
  options: MemdirLayerOptions<R>,
  location: Layer.Layer<LocationServices, Config.ConfigError, Platform>
): Layer.Layer<MemdirServices, Config.ConfigError, Platform | R> => {
  const services = servicesLayer(options, location)
  const input = options.extractor
  if (input === undefined) return services
  const extractor = Layer.unwrap(
    Effect.map(Effect.promise(() => import("../../Extract.js")), (Extract) => Extract.layer(input))
  )
  return Layer.provideMerge(extractor, services)
}
