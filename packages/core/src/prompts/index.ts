/**
 * memdir's prompts as data: one section type, one lookup, one render, and the catalog of every section.
 */
export * from "./Catalog.js"
export * from "./DailyLogPrompt.js"
export * from "./DreamPrompt.js"
export * from "./ExtractionPrompt.js"
export * from "./McpPrompt.js"
export * from "./MemoryPrompt.js"
export * from "./PromptSection.js"
export * from "./SelectorPrompt.js"
