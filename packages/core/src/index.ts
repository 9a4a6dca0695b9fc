export * from "./Errors.js"
