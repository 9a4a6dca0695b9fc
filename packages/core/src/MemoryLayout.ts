/**
 * MemoryLayout: the shape of a directory's memory headers, so memdir writes new memories the way the directory
 * already does (docs/file-format.md#two-layouts).
 *
 * Two layouts exist in the wild: memdir's first one (`name`, `description`, `type` at the top level) and the
 * reference agent's current one (`type` nested under a `metadata:` map, `name` a kebab-case slug, an ISO
 * `modified:`). A directory's layout is what most of its typed memories use; an existing file keeps its own; the
 * `memoryLayout` setting forces one. Every key a file has is kept on rewrite. Pure: no I/O here.
 */
import { type Layout, type LayoutSetting } from "./internal/location/layoutSetting.js"
import { yamlEntry, yamlScalar } from "./internal/scan/yaml.js"
import type { Frontmatter, MemoryHeader } from "./Memory.js"
import { MODIFIED_KEY } from "./MemoryAge.js"

export { type Layout, type LayoutSetting, layoutSettings } from "./internal/location/layoutSetting.js"

/** `kebab`: names are slugs (`testing-policy`); `text`: names are titles (`Testing policy`). */
export type NameStyle = "kebab" | "text"

export interface DirectoryLayout {
  readonly layout: Layout
  readonly nameStyle: NameStyle
}

/** memdir's own default for a directory with no typed memory yet. */
export const DEFAULT_LAYOUT: DirectoryLayout = { layout: "flat", nameStyle: "text" }

const isMap = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date)

/** The layout of one header, from its extra keys (a top-level `type` is not among them). */
export const layoutOfExtra = (extra: Readonly<Record<string, unknown>>): Layout => {
  const metadata = extra.metadata
  return isMap(metadata) && Object.hasOwn(metadata, "type") ? "nested" : "flat"
}

const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)+$/

/** Whether a name is a kebab-case slug (at least two words). */
export const isKebabName = (name: string): boolean => KEBAB.test(name)

/**
 * A name as a kebab-case slug: accents folded, lowercase ASCII letters and digits, anything else a `-`. A name with
 * no ASCII letter or digit (e.g. `테스트 정책`) has no slug: `undefined`.
 */
export const kebabName = (name: string): string | undefined => {
  const slug = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")
  return slug.length === 0 ? undefined : slug
}

/** Two names of one memory: equal ignoring case, or one is the other's kebab-case slug (`testing-policy`). */
export const sameMemoryName = (a: string, b: string): boolean => {
  const x = a.trim()
  const y = b.trim()
  if (x.toLowerCase() === y.toLowerCase()) return true
  return (isKebabName(x) && kebabName(y) === x) || (isKebabName(y) && kebabName(x) === y)
}

/** What most of a directory's typed memories use; ties and empty directories get memdir's default. */
export const detectLayout = (
  headers: ReadonlyArray<Pick<MemoryHeader, "extra" | "name" | "type" | "headerless">>
): DirectoryLayout => {
  let nested = 0
  let flat = 0
  let kebab = 0
  let named = 0
  for (const header of headers) {
    if (header.headerless === true) continue
    named++
    if (isKebabName(header.name)) kebab++
    if (header.type === "untyped") continue
    if (layoutOfExtra(header.extra) === "nested") nested++
    else flat++
  }
  return {
    layout: nested > flat ? "nested" : "flat",
    nameStyle: named > 0 && kebab * 2 > named ? "kebab" : "text"
  }
}

/** The directory's layout with the setting applied (`auto` or absent: the directory's). */
export const resolveLayout = (detected: DirectoryLayout, setting: LayoutSetting | undefined): DirectoryLayout =>
  setting === undefined || setting === "auto" ? detected : { ...detected, layout: setting }

/** The name a write records: the directory's slug style when it uses one (and the name has a slug). */
export const nameFor = (name: string, style: NameStyle): string => style === "kebab" ? kebabName(name) ?? name : name

const entries = (map: Readonly<Record<string, unknown>>): Array<[string, unknown]> =>
  Object.keys(map).map((key) => [key, map[key]])

/**
 * The text of a memory in a layout: `name` and `description` first, then (nested) the `metadata:` map with `type`
 * in it, or (flat) `type`; every other key of `extra` kept, a nested map's keys too. A key moved between the two
 * (a file rewritten in the other layout) keeps its value.
 */
export const renderMemory = (
  frontmatter: Frontmatter,
  extra: Readonly<Record<string, unknown>>,
  body: string,
  layout: Layout
): string => {
  const rest = entries(extra).filter(([key]) => key !== "metadata" && key !== "type")
  const metadata: Record<string, unknown> = isMap(extra.metadata) ? { ...extra.metadata } : {}
  const hadMetadata = Object.hasOwn(extra, "metadata")
  const lines = ["---", `name: ${yamlScalar(frontmatter.name)}`, `description: ${yamlScalar(frontmatter.description)}`]
  if (layout === "nested") {
    metadata.type = frontmatter.type
    // A top-level `modified` moves with `type` so the two layouts never mix in one file.
    const topModified = rest.findIndex(([key]) => key === MODIFIED_KEY)
    if (topModified !== -1 && !Object.hasOwn(metadata, MODIFIED_KEY)) {
      metadata[MODIFIED_KEY] = rest[topModified]![1]
      rest.splice(topModified, 1)
    }
    lines.push(yamlEntry("metadata", metadata)!)
  } else {
    lines.push(`type: ${yamlScalar(frontmatter.type)}`)
    delete metadata.type
    if (Object.hasOwn(metadata, MODIFIED_KEY) && !rest.some(([key]) => key === MODIFIED_KEY)) {
      rest.push([MODIFIED_KEY, metadata[MODIFIED_KEY]])
      delete metadata[MODIFIED_KEY]
    }
    if (Object.keys(metadata).length > 0 || (hadMetadata && !isMap(extra.metadata))) {
      const entry = yamlEntry("metadata", isMap(extra.metadata) ? metadata : extra.metadata)
      if (entry !== undefined) lines.push(entry)
    }
  }
  for (const [key, value] of rest) {
    const entry = yamlEntry(key, value)
    if (entry !== undefined) lines.push(entry)
  }
  lines.push("---")
  return lines.join("\n") + "\n" + (body.length > 0 ? "\n" + body : "")
}

// ---------------------------------------------------------------------------------------------------------------
// `modified:` stamped into any text memdir writes
// ---------------------------------------------------------------------------------------------------------------

const FENCE = /^---\s*$/
const indentOf = (line: string): number => line.length - line.trimStart().length

/**
 * The text with its `modified:` set to `iso`, edited in place so the rest of the header stays byte for byte:
 * an existing `modified:` (top-level or under `metadata:`) is replaced; else it is added under a `metadata:` map
 * that holds `type`, else at the top level. Text without a closed header is returned as it is.
 */
export const stampModified = (text: string, iso: string): string => {
  const newline = text.includes("\r\n") ? "\r\n" : "\n"
  const bom = text.charCodeAt(0) === 0xFEFF ? "\uFEFF" : ""
  const lines = text.slice(bom.length).split(newline)
  if (!FENCE.test(lines[0] ?? "")) return text
  const close = lines.findIndex((line, i) => i > 0 && FENCE.test(line))
  if (close === -1) return text
  const header = lines.slice(1, close)
  /** The lines of the value starting at `at` (continuation lines are more indented than it). */
  const valueEnd = (at: number): number => {
    let end = at + 1
    while (end < header.length && (header[end]!.trim() === "" || indentOf(header[end]!) > indentOf(header[at]!))) end++
    return end
  }
  const replace = (at: number, line: string) => header.splice(at, valueEnd(at) - at, line)
  const top = header.findIndex((line) => /^modified\s*:/.test(line))
  const metadataAt = header.findIndex((line) => /^metadata\s*:\s*(#.*)?$/.test(line))
  if (top !== -1) {
    replace(top, `${MODIFIED_KEY}: ${iso}`)
  } else if (metadataAt !== -1) {
    const end = valueEnd(metadataAt)
    const children = header.slice(metadataAt + 1, end)
    const first = children.find((line) => line.trim() !== "")
    const indent = first === undefined ? "  " : first.slice(0, indentOf(first))
    const child = (key: string) =>
      children.findIndex((line) =>
        line.startsWith(indent) && indentOf(line) === indent.length &&
        new RegExp(`^\\s*${key}\\s*:`).test(line)
      )
    const nestedModified = child(MODIFIED_KEY)
    if (nestedModified !== -1) replace(metadataAt + 1 + nestedModified, `${indent}${MODIFIED_KEY}: ${iso}`)
    else if (child("type") !== -1) header.splice(end, 0, `${indent}${MODIFIED_KEY}: ${iso}`)
    else header.push(`${MODIFIED_KEY}: ${iso}`)
  } else {
    header.push(`${MODIFIED_KEY}: ${iso}`)
  }
  return bom + [lines[0]!, ...header, ...lines.slice(close)].join(newline)
}
