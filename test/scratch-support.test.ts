/**
 * `removeScratch` (test/support/scratch.ts): a scratch tree with a process of its own still writing into it is
 * removed, the writer stopped first; a process outside the tree is left alone.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { processesIn, removeScratch } from "./support/scratch.js"

/** A Node process that keeps creating files under `dir` until it is stopped. */
const WRITER = `
const fs = require("node:fs"), path = require("node:path")
const dir = process.argv[1]
let n = 0
setInterval(() => {
  try { fs.mkdirSync(dir, { recursive: true }); fs.writeFileSync(path.join(dir, "f" + n++), "x") } catch {}
}, 1)
`

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.skipIf(!fs.existsSync("/proc/self/environ"))("removeScratch", () => {
  it("stops a writer whose HOME is in the tree, then removes the tree; leaves an outsider running", async () => {
    const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-scratch-")))
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "memdir-outside-")))
    const target = path.join(scratch, "home", ".memdir", ".runs")
    const writer = spawn(process.execPath, ["-e", WRITER, target], {
      env: { ...process.env, HOME: path.join(scratch, "home") },
      stdio: "ignore"
    })
    const outsider = spawn(process.execPath, ["-e", WRITER, path.join(outside, "w")], {
      env: { ...process.env, HOME: outside },
      stdio: "ignore"
    })
    try {
      while (!fs.existsSync(path.join(target, "f3"))) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.include(processesIn(scratch), writer.pid!)
      assert.notInclude(processesIn(scratch), outsider.pid!)

      await removeScratch(scratch)
      // a writer left running would have made the tree again by now (it writes every millisecond)
      await new Promise((resolve) => setTimeout(resolve, 100))

      assert.isFalse(fs.existsSync(scratch))
      assert.isFalse(alive(writer.pid!) && processesIn(scratch).includes(writer.pid!))
      assert.isTrue(alive(outsider.pid!), "a process outside the tree is not signalled")
    } finally {
      writer.kill("SIGKILL")
      outsider.kill("SIGKILL")
      fs.rmSync(scratch, { recursive: true, force: true, maxRetries: 10 })
      await new Promise((resolve) => setTimeout(resolve, 100))
      fs.rmSync(outside, { recursive: true, force: true, maxRetries: 10 })
    }
  })
})
