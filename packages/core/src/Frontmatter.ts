/**
 * Frontmatter: the YAML header of a memory file, read from the first 30 lines only (docs/file-format.md,
 * docs/architecture.md#how-a-recall-flows).
 *
 * Lenient where the world is messy (BOM, CRLF, `type` under a nested `metadata:` map, unknown types, a missing
 * name or description, values strict YAML rejects), strict where it matters (no opening fence, no closing fence
 * within 30 lines, binary content, a header that is not a map), and bounded on hostile input (aliases,
 * nesting, huge lines). Pure: results are `Result`s, nothing throws.
 */
import * as Result from "effect/Result"
import type { InvalidFrontmatterError } from "./Errors.js"
import { type ParsedFrontmatter, parseHeader, stripBom } from "./internal/scan/frontmatter.js"
import { yamlEntry, yamlScalar } from "./internal/scan/yaml.js"
import type { Frontmatter } from "./Memory.js"

export {
  fileStem,
  FRONTMATTER_MAX_BYTES,
  FRONTMATTER_MAX_LINES,
  type ParsedFrontmatter
} from "./internal/scan/frontmatter.js"

/**
 * Parses the header of a memory file. `text` is the file's head (more is fine: only the first 30 lines, at most
 * 64 KiB, are looked at); `path` names the file in errors and supplies the fallback name.
 */
export const parseFrontmatter = (
  text: string,
  path: string
): Result.Result<ParsedFrontmatter, InvalidFrontmatterError> =>
  Result.map(parseHeader(stripBom(text), path), ([frontmatter]) => frontmatter)

/** A whole memory file: its header and the Markdown body after the closing fence. */
export interface ParsedMemoryFile {
  readonly frontmatter: ParsedFrontmatter
  readonly body: string
}

/**
 * Parses a whole memory file (for a memory being recalled or edited; the scanner reads heads only). The body
 * starts after the closing fence; one blank line right after it (as memdir writes) is not part of the body.
 */
export const parseMemoryFile = (
  text: string,
  path: string
): Result.Result<ParsedMemoryFile, InvalidFrontmatterError> => {
  const source = stripBom(text)
  return Result.map(parseHeader(source, path), ([frontmatter, header]) => {
    const body = source.slice(header.bodyOffset)
    const blankLine = body.startsWith("\r\n") ? 2 : body.startsWith("\n") ? 1 : 0
    return { frontmatter, body: body.slice(blankLine) }
  })
}

/**
 * The text memdir writes for a memory: name, description and type first, then any extra keys, each value
 * quoted only when YAML needs it, then a blank line and the body. `parseMemoryFile` reads it back exactly.
 */
export const serializeFrontmatter = (
  frontmatter: Frontmatter & { readonly [key: string]: unknown },
  body: string
): string => {
  const lines = [
    "---",
    `name: ${yamlScalar(frontmatter.name)}`,
    `description: ${yamlScalar(frontmatter.description)}`,
    `type: ${yamlScalar(frontmatter.type)}`
  ]
  for (const key of Object.keys(frontmatter)) {
    if (key === "name" || key === "description" || key === "type") continue
    const entry = yamlEntry(key, frontmatter[key])
    if (entry !== undefined) lines.push(entry)
  }
  lines.push("---")
  return lines.join("\n") + "\n" + (body.length > 0 ? "\n" + body : "")
}
