/**
 * @memdir/core — file-based memory for AI agents as Effect services and programs.
 *
 * Each module is also importable on its own: `import * as Recall from "@memdir/core/Recall"`.
 */
export * as DailyLog from "./DailyLog.js"
export * as Doctor from "./Doctor.js"
export * as Dream from "./Dream.js"
export * as DreamLock from "./DreamLock.js"
export * from "./Errors.js"
export * as Frontmatter from "./Frontmatter.js"
export * as GitRoot from "./GitRoot.js"
export * as Memdir from "./Memdir.js"
export * as Memory from "./Memory.js"
export * as MemoryIndex from "./MemoryIndex.js"
export * as MemoryPaths from "./MemoryPaths.js"
export * as Model from "./Model.js"
export * as ModelSelector from "./ModelSelector.js"
export * as Prompt from "./Prompt.js"
export * as Recall from "./Recall.js"
export * as Scanner from "./Scanner.js"
export * as SecretScan from "./SecretScan.js"
export * as Selector from "./Selector.js"
export * as Settings from "./Settings.js"
export * as Staleness from "./Staleness.js"
export * as TeamGuard from "./TeamGuard.js"
export * as TeamMemory from "./TeamMemory.js"
export * as TeamSync from "./TeamSync.js"
export * as Write from "./Write.js"
