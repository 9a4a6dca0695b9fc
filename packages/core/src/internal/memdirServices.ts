/**
 * The composition behind `Memdir.layer`: every live service over the location services, team sync over the one
 * `Git`, and a session's `Extractor` when the options ask for one. Loaded by `Memdir.layer` when the layer is
 * built, so importing `Memdir` evaluates none of these modules; the extraction code is loaded only for an
 * `Extractor`.
 */
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as DreamLock from "../DreamLock.js"
import * as Git from "../Git.js"
import type { LocationServices, MemdirLayerOptions, MemdirServices, Platform } from "../Memdir.js"
import * as MemoryIndex from "../MemoryIndex.js"
import * as MemoryStore from "../MemoryStore.js"
import * as MemoryToolBackend from "../MemoryToolBackend.js"
import * as Model from "../Model.js"
import * as ModelSelector from "../ModelSelector.js"
import * as Recall from "../Recall.js"
import * as Scanner from "../Scanner.js"
import * as Selector from "../Selector.js"
import * as Staleness from "../Staleness.js"
import * as TeamGuard from "../TeamGuard.js"
import * as TeamMemory from "../TeamMemory.js"
import * as TeamSync from "../TeamSync.js"

/** The selector layer the options name (over the model). */
const selectorOf = <R>(options: MemdirLayerOptions<R>) =>
  typeof options.selector === "string" ?
    ModelSelector.layerFor(options.selector) :
    options.selector ?? Selector.layer

/** Services over the file system, the index and the team guard, with the given location services merged in. */
const baseOf = <R>(
  options: MemdirLayerOptions<R>,
  location: Layer.Layer<LocationServices, ConfigError.ConfigError, Platform>
) =>
  Layer.mergeAll(
    options.gitAges === undefined ? Scanner.layer : Scanner.layer.pipe(Layer.provide(options.gitAges)),
    DreamLock.layer,
    MemoryIndex.layerConfig,
    Staleness.layer,
    TeamGuard.layer,
    Layer.provideMerge(selectorOf(options), options.model ?? Model.layer)
  ).pipe(Layer.provideMerge(location))

/** The services `Memdir.layer` provides, over the given location layer. */
export const servicesLayer = <R>(
  options: MemdirLayerOptions<R>,
  location: Layer.Layer<LocationServices, ConfigError.ConfigError, Platform>
): Layer.Layer<MemdirServices, ConfigError.ConfigError, Platform | R> => {
  // The one door to memory files, over the base (file system, index, team guard).
  const store = Layer.provideMerge(MemoryStore.layerWithContainment, baseOf(options, location))
  const derived = Layer.mergeAll(
    Recall.layer,
    MemoryToolBackend.layer,
    TeamMemory.layer,
    TeamSync.layerOver.pipe(Layer.provide(Git.layer))
  )
  const services = Layer.provideMerge(derived, store)
  // GitAges too (built once, shared with the scanner), so `show` counts from the same commit times.
  return options.gitAges === undefined ? services : Layer.merge(services, options.gitAges)
}

/** `servicesLayer`, plus the session's `Extractor` when the options give its input (Extract loaded only then). */
export const compose = <R>(
  options: MemdirLayerOptions<R>,
  location: Layer.Layer<LocationServices, ConfigError.ConfigError, Platform>
): Layer.Layer<MemdirServices, ConfigError.ConfigError, Platform | R> => {
  const services = servicesLayer(options, location)
  const input = options.extractor
  if (input === undefined) return services
  const extractor = Layer.unwrapEffect(
    Effect.map(Effect.promise(() => import("../Extract.js")), (Extract) => Extract.layer(input))
  )
  return Layer.provideMerge(extractor, services)
}
