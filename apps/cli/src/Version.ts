/** Kept equal to apps/cli/package.json "version" (a test checks it); bundled, so start-up reads no file. */
export const version = "0.1.0"
