/**
 * The reference agent's current format end to end, on copies of real memory directories
 * (packages/core/test/fixtures/reference-memories): `[[name]]` links followed by recall and checked by doctor, and
 * pinned memories loaded in full by `memdir prompt`, reported by doctor when there are too many.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli, parseJson, repoRoot, runCli, scratchHomeEnv } from "./support/cli.js"

let scratch: string

const fixture = (name: string) => path.join(repoRoot, "packages/core/test/fixtures/reference-memories", name)

/** A writable copy of a fixture directory. */
const copy = (name: string): string => {
  const dir = path.join(scratch, `${name}-${fs.readdirSync(scratch).length}`)
  fs.cpSync(fixture(name), dir, { recursive: true })
  for (const file of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, file), 0o600)
  return dir
}

const memdir = (memoryDir: string, args: ReadonlyArray<string>) =>
  Effect.runPromise(
    runCli(args, { cwd: scratch, env: scratchHomeEnv(path.join(scratch, "home"), { MEMDIR_MEMORY_DIR: memoryDir }) })
  )

/** Adds `pinned: true` under the `metadata:` map of a nested-layout file. */
const pin = (dir: string, file: string) => {
  const at = path.join(dir, file)
  fs.writeFileSync(at, fs.readFileSync(at, "utf8").replace(/^metadata: ?\n/m, "metadata:\n  pinned: true\n"))
}

beforeAll(() => {
  buildCli()
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-refformat-")))
  fs.mkdirSync(path.join(scratch, "home"))
})

afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("[[links]] and pinned memories (copies of real directories)", () => {
  it("doctor reports the dead [[links]] of memories, never the ones a name or a file stem resolves", async () => {
    const dir = copy("koenvue")
    const run = await memdir(dir, ["doctor", "--json"])
    const findings = parseJson(run).findings.filter((f: any) => f.code === "dead-memory-link")
    // Only these two memories were not copied; [[verify-load-bearing-claims]] and [[os-dependent-accept]] resolve.
    assert.deepStrictEqual(
      findings.map((f: any) => [f.path, f.message.match(/\[\[(.*?)\]\]/)[1]]).sort(),
      [
        ["record-only-what-was-verified.md", "normative-doc-blanket-claims"],
        ["record-only-what-was-verified.md", "safety-net-verify-in-failure-state"]
      ]
    )
    assert.isTrue(findings.every((f: any) => f.line === 13 || f.line === 15))
  })

  it("doctor reports a dead [[link]] in the index too", async () => {
    const dir = copy("haautomation")
    fs.appendFileSync(path.join(dir, "MEMORY.md"), "- [[user-role]]\n- [[gone-memory]]\n")
    const findings = parseJson(await memdir(dir, ["doctor", "--json"])).findings
    const dead = findings.filter((f: any) => f.code === "dead-memory-link").map((f: any) => [f.path, f.message])
    assert.isTrue(dead.some(([p, m]: [string, string]) => p === "MEMORY.md" && m.includes("[[gone-memory]]")))
    assert.isFalse(dead.some(([, m]: [string, string]) => m.includes("[[user-role]]")))
    // name ≠ file stem: [[project-habortfeld]] is project_haautomation_scope.md's name.
    assert.isFalse(dead.some(([, m]: [string, string]) => m.includes("[[project-habortfeld]]")))
  })

  it("recall lists the paths of the memories a recalled one links to", async () => {
    const dir = copy("koenvue")
    const run = await memdir(dir, [
      "recall",
      "--json",
      "controllable tool SDK limits: verify with a cheap experiment first"
    ])
    const selected = parseJson(run).selected
    const tool = selected.find((m: any) => m.path === "tool-limit-verify-first.md")
    assert.isDefined(tool, run.stdout)
    assert.deepStrictEqual(tool.links, ["os-dependent-accept.md"])
  })

  it("prompt loads pinned memories in full (at most 4, with their age); doctor reports a fifth pin", async () => {
    const dir = copy("koenvue")
    const files = [
      "os-dependent-accept.md",
      "tool-limit-verify-first.md",
      "user_role.md",
      "verify-load-bearing-claims.md",
      "feedback_version_format.md"
    ]
    pin(dir, files[0]!)
    const one = await memdir(dir, ["prompt"])
    assert.strictEqual(one.status, 0, one.stderr)
    assert.include(one.stdout, "## Pinned memories")
    assert.include(one.stdout, "### os-dependent-accept (os-dependent-accept.md, feedback, saved today)")
    assert.include(one.stdout, "**How to apply:** 근본 원인이 OS/Win32 동작 의존으로 규명되면")
    const healthy = parseJson(await memdir(dir, ["doctor", "--json"])).findings
    assert.isFalse(healthy.some((f: any) => f.code === "too-many-pins"))

    for (const file of files.slice(1)) pin(dir, file)
    const prompt = await memdir(dir, ["prompt"])
    assert.strictEqual((prompt.stdout.match(/^### /gm) ?? []).length, 4)
    const doctor = parseJson(await memdir(dir, ["doctor", "--json"])).findings
    const tooMany = doctor.find((f: any) => f.code === "too-many-pins")
    assert.isDefined(tooMany)
    assert.include(tooMany.message, "5 memories are pinned (limit: 4)")
  })
})
