/**
 * The bundle `pnpm evals` runs (docs/evals.md, "How the command starts"): the root scripts start run.mjs, which runs
 * the entry's bundle dist/ENTRY.js in its own process; build.mjs's stamp makes a bundle stale once an input changed
 * or an output is gone, and `ensureBundle` then builds it again.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
// @ts-expect-error build.mjs is plain JavaScript without declarations
import { build, ensureBundle, ENTRIES, isUpToDate } from "../build.mjs"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const runMjs = fileURLToPath(new URL("../run.mjs", import.meta.url))

describe("the evals bundle", () => {
  it("pnpm evals and evals:generalize run their bundle through run.mjs, not tsx", () => {
    const { scripts } = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"))
    assert.deepStrictEqual(ENTRIES, ["main", "generalize"])
    assert.strictEqual(scripts.evals, "node apps/evals/run.mjs main")
    assert.strictEqual(scripts["evals:generalize"], "node apps/evals/run.mjs generalize")
  })

  it("is stale once an input changed or an output is gone, and ensureBundle builds it again", async () => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-evals-bundle-"))
    try {
      await build(outdir)
      const stampFile = path.join(outdir, "build-stamp.json")
      const stamp = JSON.parse(fs.readFileSync(stampFile, "utf8"))
      for (const entry of ["main", "generalize"]) assert.include(stamp.outputs, `${entry}.js`)
      for (const input of ["apps/evals/src/main.ts", "apps/evals/src/generalize.ts", "pnpm-lock.yaml"]) {
        assert.include(stamp.inputs, input)
      }
      assert.isTrue(stamp.inputs.some((input: string) => input.startsWith("packages/core/src/")), "core is inside")
      // the glossary the core reads beside its module, at run time: beside the entries that hold the module
      assert.include(stamp.outputs, "glossary.data.txt")
      assert.include(stamp.inputs, "packages/core/src/internal/text/glossary.data.txt")
      assert.strictEqual(
        fs.readFileSync(path.join(outdir, "glossary.data.txt"), "utf8"),
        fs.readFileSync(path.join(repoRoot, "packages/core/src/internal/text/glossary.data.txt"), "utf8")
      )
      assert.isFalse(stamp.inputs.some((input: string) => input.includes("node_modules")), "the lockfile covers them")
      assert.isTrue(isUpToDate(outdir))
      assert.isFalse(await ensureBundle(outdir), "up to date: no build")

      // as after an edit of one of the inputs, which changes their digest
      fs.writeFileSync(stampFile, JSON.stringify({ ...stamp, digest: "0".repeat(64) }))
      assert.isFalse(isUpToDate(outdir), "an input changed")
      fs.writeFileSync(stampFile, JSON.stringify(stamp))
      assert.isTrue(isUpToDate(outdir))
      fs.rmSync(path.join(outdir, "generalize.js"))
      assert.isFalse(isUpToDate(outdir), "an output is gone")

      assert.isTrue(await ensureBundle(outdir), "stale: built again")
      // (not isUpToDate: an edit elsewhere in the checkout while it bundled rightly leaves it stale)
      assert.isTrue(fs.existsSync(path.join(outdir, "generalize.js")))
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(stampFile, "utf8")).outputs, stamp.outputs)
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true })
    }
  })

  it("run.mjs names its entries when given none or another, and exits 64", () => {
    for (const args of [[], ["list"]]) {
      const result = spawnSync(process.execPath, [runMjs, ...args], { cwd: repoRoot, encoding: "utf8" })
      assert.strictEqual(result.status, 64, result.stderr)
      assert.strictEqual(result.stdout, "")
      assert.include(result.stderr, "node apps/evals/run.mjs main|generalize [ARGS…]")
    }
  })
})
