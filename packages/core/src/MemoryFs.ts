/**
 * MemoryFs: the file system as memdir needs it, and nothing more. Every file memdir opens is opened without
 * following a link in its last component and without blocking (a FIFO or a device never hangs a command), is
 * checked to be a regular file, and is read with a size bound. Writes are atomic (temp file created exclusively
 * without following links, fsync, rename, directory fsync) with 0600 files and 0700 directories.
 *
 * Failures are one typed error, `MemoryFsError`, whose `reason` is mapped once from the errno code (in the live
 * implementation) and which keeps the original failure as its `cause`.
 *
 * Two implementations: `layer` over `node:fs` (`internal/memoryFsNode.ts`, the only core module that imports it
 * for memory files) and `layerMemory`, a complete in-memory file system (directories, files, symbolic links,
 * FIFOs) for tests; `layerMemoryWorld` adds a platform `FileSystem` over the same tree, for an in-memory memdir
 * world.
 */
import { FileSystem } from "@effect/platform"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { MemoryFs } from "./internal/memoryFsCore.js"
import { makeMemoryFsInMemory, type MemoryFsSeed } from "./internal/memoryFsMemory.js"
import { makeMemoryFsNode } from "./internal/memoryFsNode.js"
import { makeFileSystemInMemory } from "./internal/memoryFsPlatform.js"
import { makeMemoryTree } from "./internal/memoryTree.js"

export * from "./internal/memoryFsCore.js"

/** The real file system (`node:fs`). */
export const layer: Layer.Layer<MemoryFs> = Layer.sync(MemoryFs, () => makeMemoryFsNode())

/**
 * A complete in-memory file system: absolute paths, `/`-separated. `seed` maps absolute paths to file contents
 * (parents are created); `{ symlink: target }` plants a link, `{ fifo: true }` a FIFO.
 */
export const layerMemory = (seed: MemoryFsSeed = {}): Layer.Layer<MemoryFs> =>
  Layer.sync(MemoryFs, () => makeMemoryFsInMemory(seed))

/**
 * One in-memory world: the in-memory `MemoryFs` and an `@effect/platform` `FileSystem` over the same tree
 * (`internal/memoryFsPlatform.ts`), so services on either see each other's files. Seeded like `layerMemory`.
 */
export const layerMemoryWorld = (seed: MemoryFsSeed = {}): Layer.Layer<MemoryFs | FileSystem.FileSystem> =>
  Layer.syncContext(() => {
    const tree = makeMemoryTree()
    return Context.make(MemoryFs, makeMemoryFsInMemory(seed, tree)).pipe(
      Context.add(FileSystem.FileSystem, makeFileSystemInMemory(tree))
    )
  })

export type { MemoryFsSeed }
