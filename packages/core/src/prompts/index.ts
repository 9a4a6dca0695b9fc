/**
 * memdir's prompts as data: one section type, one lookup, one render, and the catalog of every section.
 */
export * from "./Catalog.js"
export * from "./dailyLog.js"
export * from "./dream.js"
export * from "./extraction.js"
export * from "./memory.js"
export * from "./PromptSection.js"
export * from "./selector.js"
