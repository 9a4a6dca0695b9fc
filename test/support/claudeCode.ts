/**
 * The real Claude Code CLI for system tests: `@anthropic-ai/claude-code` at `CLAUDE_CODE_VERSION`, installed from the
 * npm registry into `$MEMDIR_TEST_CACHE/claude-code` (default `~/.cache/memdir-test/claude-code`) on first use. Only
 * when the registry cannot be reached is there a reason to skip (`ensureClaudeCode` returns it); any other install
 * failure throws.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const CLAUDE_CODE_VERSION = "2.1.332"

const cache = path.join(
  process.env.MEMDIR_TEST_CACHE ?? path.join(os.homedir(), ".cache", "memdir-test"),
  "claude-code"
)

export const claudeBin = path.join(cache, "node_modules", ".bin", "claude")

const installedVersion = (): string | undefined => {
  try {
    return JSON.parse(
      fs.readFileSync(path.join(cache, "node_modules", "@anthropic-ai", "claude-code", "package.json"), "utf8")
    ).version
  } catch {
    return undefined
  }
}

/** The CLI in the cache (installed when missing); a reason to skip only when the registry is out of reach. */
export const ensureClaudeCode = (): string | undefined => {
  if (installedVersion() === CLAUDE_CODE_VERSION && fs.existsSync(claudeBin)) return undefined
  fs.mkdirSync(cache, { recursive: true })
  try {
    execFileSync(
      "npm",
      ["install", "--prefix", cache, "--no-audit", "--no-fund", `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`],
      { stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 }
    )
  } catch (error) {
    let reachable = true
    try {
      execFileSync("npm", ["ping"], { stdio: "ignore", timeout: 60_000 })
    } catch {
      reachable = false
    }
    if (!reachable) {
      return `the npm registry is unreachable, so @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} could not be ` +
        `installed into ${cache}: ${String((error as { stderr?: unknown }).stderr ?? error).slice(0, 300)}`
    }
    throw error
  }
  if (installedVersion() !== CLAUDE_CODE_VERSION) throw new Error(`npm installed no Claude Code into ${cache}`)
  return undefined
}

/** Everything of a request body the model reads as text: the system prompt and every message's text blocks. */
export const textOf = (body: any): string => {
  const texts: Array<string> = []
  const visit = (value: unknown): void => {
    if (typeof value === "string") texts.push(value)
    else if (Array.isArray(value)) value.forEach(visit)
    else if (typeof value === "object" && value !== null) {
      const block = value as { text?: unknown; content?: unknown }
      if (typeof block.text === "string") texts.push(block.text)
      else if (block.content !== undefined) visit(block.content)
    }
  }
  visit(body.system)
  for (const message of body.messages ?? []) visit(message.content)
  return texts.join("\n")
}

/** The tool results of a request body, in order: what the model reads of each (text, or a string as sent). */
export const toolResultsOf = (body: any): ReadonlyArray<{ readonly isError: boolean; readonly content: unknown }> =>
  (body?.messages ?? []).flatMap((message: any) =>
    (Array.isArray(message.content) ? message.content : [])
      .filter((block: any) => block.type === "tool_result")
      .map((block: any) => ({ isError: block.is_error === true, content: block.content }))
  )
