/**
 * No module of the library is a thenable. A module that exports `then` makes its namespace one: `await import()`
 * of it calls that `then` and never settles, so a program (or vitest, which loads every module so) that imports it
 * hangs. A step of `internal/layers/inOrder.ts` was once named `then`, and every test file importing `Memdir` hung
 * in collection. Each module is imported here dynamically and raced against a timer, so a thenable fails the test
 * instead of hanging it.
 */
import { assert, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src")

const modules = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return modules(file)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [file] : []
  })

/** How long an import may take before it counts as never settling (imports of a warm worker take milliseconds). */
const SETTLE_MS = 30_000

it("every module under src/ imports to its namespace, none of them a thenable", async () => {
  const files = modules(src)
  assert.isAbove(files.length, 50)
  const unsettled = await Promise.all(files.map(async (file) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<"unsettled">((resolve) => {
      timer = setTimeout(() => resolve("unsettled"), SETTLE_MS)
    })
    const settled = await Promise.race([import(pathToFileURL(file).href).then(() => "settled" as const), timeout])
    clearTimeout(timer)
    return settled === "unsettled" ? [path.relative(src, file)] : []
  }))
  assert.deepStrictEqual(unsettled.flat(), [])
}, 60_000)
