/** A memory's header as the scanner gives it, for the selector's tests: under `/m/`, mtime 1, no extra keys. */
import type { MemoryHeader } from "../../src/Memory.js"

export const memoryHeader = (
  path: string,
  name: string,
  description: string,
  bodyHead = "",
  type: MemoryHeader["type"] = "project"
): MemoryHeader => ({
  path,
  absolutePath: `/m/${path}`,
  name,
  description,
  type,
  mtime: 1,
  extra: {},
  bodyHead
})
