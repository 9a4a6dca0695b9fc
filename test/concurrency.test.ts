/**
 * Concurrent writers in REAL separate processes on one memory directory (docs/file-format.md: "the index update must
 * not lose concurrent writers' lines"), and a writer SIGKILLed while it holds the index lock.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { parseMemoryFile } from "@memdir/core/Frontmatter"
import { TEMP_FILE_PATTERN } from "@memdir/core/internal/fs/leftovers"
import { formatIndexEntry, parseIndexLine } from "@memdir/core/Memory"
import { INDEX_FILE, INDEX_LOCK } from "@memdir/core/MemoryIndex"
import * as Result from "effect/Result"
import { build } from "esbuild"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SHARED_NAME, workerMemory } from "./fixtures/memdir-worker.js"
import { repoRoot } from "./support/cli.js"

const workerSource = path.join(repoRoot, "test/fixtures/memdir-worker.ts")

const WORKERS = 8
/** 8 × 24 own memories + 1 shared = 193 index lines: under the 200-line cap. */
const WRITES_PER_WORKER = 24

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const start = (args: ReadonlyArray<string>): { child: ChildProcess; finished: Promise<Finished> } => {
  const child = spawn(process.execPath, [worker, ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => (stdout += chunk))
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  const finished = new Promise<Finished>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  )
  return { child, finished }
}

/** Resolves once the child printed `line` on stdout (rejects if it exits first). */
const waitForLine = (child: ChildProcess, line: string) =>
  new Promise<void>((resolve, reject) => {
    let seen = ""
    child.stdout!.on("data", (chunk) => {
      seen += chunk
      if (seen.split("\n").includes(line)) resolve()
    })
    child.on("close", (code) => reject(new Error(`worker exited (${code}) before printing ${line}`)))
  })

const walk = (dir: string): Array<string> =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).map((p) => p.split(path.sep).join("/")).sort()

let scratch: string
let worker: string
beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-concurrency-"))
  // One bundled file per worker start (~0.3 s) instead of `node --import tsx` (~2 s of transpiling and loading
  // each): eight of them must start together on a 2-core machine.
  worker = path.join(scratch, "memdir-worker.mjs")
  await build({
    entryPoints: [workerSource],
    outfile: worker,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    // CommonJS dependencies inside an ESM bundle still call require().
    banner: {
      js:
        "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
    }
  })
})
afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("concurrent writers (real processes)", () => {
  it("8 processes × 24 writes at once: every file present and parseable, every line exactly once, nothing left over", async () => {
    const memoryDir = path.join(scratch, "storm", "memory")
    const runs = Array.from(
      { length: WORKERS },
      (_, id) => start(["write", memoryDir, String(id), String(WRITES_PER_WORKER)])
    )
    const results = await Promise.all(runs.map((run) => run.finished))
    results.forEach((result, id) => {
      assert.strictEqual(result.code, 0, `worker ${id} failed: ${result.stderr}`)
      assert.strictEqual(result.stdout.trim(), `done ${id}`)
    })

    const index = fs.readFileSync(path.join(memoryDir, INDEX_FILE), "utf8")
    assert.isTrue(index.endsWith("\n"))
    const lines = index.slice(0, -1).split("\n")
    // No torn or merged lines: each one is a whole entry.
    for (const line of lines) assert.isDefined(parseIndexLine(line), `torn line: ${JSON.stringify(line)}`)
    assert.strictEqual(lines.length, WORKERS * WRITES_PER_WORKER + 1)

    for (let id = 0; id < WORKERS; id++) {
      for (let i = 0; i < WRITES_PER_WORKER; i++) {
        const expected = workerMemory(id, i)
        const file = `${expected.type}_worker_${id}_memory_${i}.md`
        const line = formatIndexEntry({ title: expected.name, file, hook: expected.description })
        assert.strictEqual(lines.filter((l) => l === line).length, 1, line)
        const text = fs.readFileSync(path.join(memoryDir, file), "utf8")
        const parsed = Result.getOrThrow(parseMemoryFile(text, file))
        assert.deepStrictEqual(
          [parsed.frontmatter.name, parsed.frontmatter.description, parsed.frontmatter.type, parsed.body],
          [expected.name, expected.description, expected.type, expected.body]
        )
      }
    }

    // The memory every worker updated is one file and one line, whoever wrote last.
    const shared = lines.filter((l) => l.startsWith(`- [${SHARED_NAME}](feedback_shared_policy.md) — last updated by`))
    assert.strictEqual(shared.length, 1)
    const sharedFile = Result.getOrThrow(
      parseMemoryFile(fs.readFileSync(path.join(memoryDir, "feedback_shared_policy.md"), "utf8"), "shared")
    )
    assert.include(shared[0]!, sharedFile.frontmatter.description)

    const files = walk(memoryDir)
    assert.strictEqual(files.length, WORKERS * WRITES_PER_WORKER + 2)
    assert.deepStrictEqual(files.filter((f) => TEMP_FILE_PATTERN.test(path.basename(f))), [])
    assert.deepStrictEqual(files.filter((f) => f.includes(INDEX_LOCK)), [])
  })

  it("a writer SIGKILLed while holding the index lock: the next writer (another process) takes over", async () => {
    const memoryDir = path.join(scratch, "killed", "memory")
    fs.mkdirSync(memoryDir, { recursive: true, mode: 0o700 })
    const holder = start(["hold", memoryDir])
    await waitForLine(holder.child, "locked")
    const lockDir = path.join(memoryDir, INDEX_LOCK)
    assert.deepStrictEqual(fs.readdirSync(lockDir).length, 1)
    const owner = JSON.parse(fs.readFileSync(path.join(lockDir, fs.readdirSync(lockDir)[0]!), "utf8"))
    assert.strictEqual(owner.pid, holder.child.pid)

    holder.child.kill("SIGKILL")
    const killed = await holder.finished
    assert.strictEqual(killed.signal, "SIGKILL")
    // The dead holder's lock is still there: nobody cleaned it up.
    assert.isTrue(fs.existsSync(lockDir))

    const next = await start(["write", memoryDir, "7", "1"]).finished
    assert.strictEqual(next.code, 0, next.stderr)
    const expected = workerMemory(7, 0)
    const file = `${expected.type}_worker_7_memory_0.md`
    assert.isTrue(fs.existsSync(path.join(memoryDir, file)))
    assert.include(fs.readFileSync(path.join(memoryDir, INDEX_FILE), "utf8"), `(${file})`)
    assert.isFalse(fs.existsSync(lockDir))
    assert.deepStrictEqual(walk(memoryDir).filter((f) => f.includes(INDEX_LOCK)), [])
  })
})
