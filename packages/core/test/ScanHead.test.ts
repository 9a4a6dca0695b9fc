/**
 * The scanner's head reader (`internal/scan/head.ts`: fences found on the raw bytes, only the block decoded) against
 * the string parser (`parseFrontmatter`): the same header, or the same error, on every Markdown file of the test
 * fixtures, whole or cut to the bytes a scan reads.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { FRONTMATTER_MAX_BYTES, parseFrontmatter } from "../src/Frontmatter.js"
import { readHead } from "../src/internal/scan/head.js"

const fixtures = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "fixtures")

/** Every Markdown file under the test fixtures. */
const fixtureFiles = (): Array<string> => {
  const files: Array<string> = []
  const visit = (dir: string) => {
    for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
      const path = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) visit(path)
      else if (entry.name.endsWith(".md")) files.push(path)
    }
  }
  visit(fixtures)
  return files
}

/** `readHead` over `bytes` as a file: reads fill the buffer from the same offset, as `MemoryFs` does. */
const readHeadOf = (bytes: Buffer, path: string) => {
  const buffer = Buffer.alloc(FRONTMATTER_MAX_BYTES + 1)
  return readHead(
    buffer,
    (offset, length) => bytes.copy(buffer, offset, offset, Math.min(bytes.length, offset + length)),
    path
  )
}

describe("the scanner's head reader", () => {
  it("gives the string parser's header or error on every fixture, and on heads with CRLF, a BOM or no header", () => {
    const files = fixtureFiles()
    // Measured: over 200 memory files (memdir's layout, the reference agent's, selector sets, broken ones).
    assert.isAbove(files.length, 150)
    for (const file of files) {
      const text = NodeFs.readFileSync(file, "utf8")
      for (const variant of [text, "\uFEFF" + text.replace(/\n/g, "\r\n"), "# no header\n" + text]) {
        assert.deepStrictEqual(readHeadOf(Buffer.from(variant, "utf8"), file), parseFrontmatter(variant, file), file)
      }
    }
  })
})
