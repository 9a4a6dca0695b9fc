/**
 * MemoryFs: the file system as memdir needs it, and nothing more. Every file memdir opens is opened without
 * following a link in its last component and without blocking (a FIFO or a device never hangs a command), is
 * checked to be a regular file, and is read with a size bound. Writes are atomic (temp file created exclusively
 * without following links, fsync, rename, directory fsync) with 0600 files and 0700 directories.
 *
 * Failures are one typed error, `MemoryFsError`, whose `reason` is mapped once from the errno code (in the live
 * implementation) and which keeps the original failure as its `cause`.
 *
 * It is memdir's one door to the disk: memories, indexes, logs, cursors, locks, snapshots, backups, settings and git's
 * files are all read and written through it. Two implementations: `layer` over `node:fs` (`internal/fs/node.ts`,
 * the only core module that imports it) and `layerMemory`, a complete in-memory file system (directories, files,
 * symbolic links, FIFOs): with it, every live service makes an in-memory memdir world (`@memdir/testing`).
 */
import * as Layer from "effect/Layer"
import { MemoryFs } from "./internal/fs/core.js"
import { makeMemoryFsInMemory, type MemoryFsSeed } from "./internal/fs/memory.js"
import { makeMemoryFsNode } from "./internal/fs/node.js"

export * from "./internal/fs/core.js"

/** The real file system (`node:fs`). */
export const layer: Layer.Layer<MemoryFs> = Layer.sync(MemoryFs, () => makeMemoryFsNode())

/**
 * A complete in-memory file system: absolute paths, `/`-separated. `seed` maps absolute paths to file contents
 * (parents are created); `{ symlink: target }` plants a link, `{ fifo: true }` a FIFO.
 */
export const layerMemory = (seed: MemoryFsSeed = {}): Layer.Layer<MemoryFs> =>
  Layer.sync(MemoryFs, () => makeMemoryFsInMemory(seed))

export type { MemoryFsSeed }
