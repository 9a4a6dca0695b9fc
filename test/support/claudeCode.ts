/**
 * The real Claude Code CLI for system tests: `@anthropic-ai/claude-code` at `CLAUDE_CODE_VERSION`, installed from the
 * npm registry into `$MEMDIR_TEST_CACHE/claude-code` (default `~/.cache/memdir-test/claude-code`) on first use. Only
 * when the registry cannot be reached is there a reason to skip (`ensureClaudeCode` returns it); any other install
 * failure throws.
 */
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { type CliRun, scratchHomeEnv, writeMemdirShim } from "./cli.js"
import { registryTool } from "./registryTool.js"

export const CLAUDE_CODE_VERSION = "2.1.332"

const claudeCode = registryTool("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, "claude-code", "claude")

export const claudeBin = claudeCode.bin

/** The CLI in the cache (installed when missing); a reason to skip only when the registry is out of reach. */
export const ensureClaudeCode = (): string | undefined => claudeCode.ensure()

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

/**
 * A scratch user `<scratch>/<name>`: HOME and MEMDIR_HOME, a git project `shop`, `memdir` on PATH (a wrapper around
 * the bundle) and the project's memory directory, made empty. `env` is the environment Claude Code runs in there.
 */
export const makeScratchUser = (scratch: string, name: string) => {
  const home = path.join(scratch, name)
  const project = path.join(home, "shop")
  const bin = path.join(home, "bin")
  fs.mkdirSync(project, { recursive: true })
  fs.mkdirSync(bin, { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: project })
  writeMemdirShim(bin)
  const memoryDir = path.join(home, ".memdir", "projects", project.replace(/[^A-Za-z0-9]/g, "-"), "memory")
  fs.mkdirSync(memoryDir, { recursive: true })
  const env = (extra: Record<string, string> = {}) => ({
    ...scratchHomeEnv(home),
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...extra
  })
  return { home, project, memoryDir, env }
}

/** `file args` in `cwd` with exactly `env` and stdin closed, within 2 minutes; never fails. */
export const run = (file: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) =>
  Effect.callback<CliRun>((resume) => {
    execFile(file, args, { cwd, env, encoding: "utf8", timeout: 120_000 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
      resume(Effect.succeed({ status, stdout, stderr }))
    }).stdin?.end()
  })
