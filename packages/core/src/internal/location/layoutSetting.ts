/**
 * The `memoryLayout` setting's values (docs/configuration.md#memory-layout), apart from the layout code in
 * `MemoryLayout.ts`: resolving where memory lives (`MemoryPaths`) checks the setting without loading YAML.
 */

/** `nested`: `type` (and `modified`) under `metadata:`; `flat`: at the top level. */
export type Layout = "nested" | "flat"
/** The `memoryLayout` setting: `auto` follows the directory (docs/configuration.md#memory-layout). */
export type LayoutSetting = "auto" | Layout
export const layoutSettings: ReadonlyArray<LayoutSetting> = ["auto", "nested", "flat"]
