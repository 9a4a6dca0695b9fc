/**
 * Removing a scratch tree that memdir's own detached processes may still be writing into: a `Stop` / `SessionEnd`
 * hook's background job appending its `end` line to `.runs/`, a hook daemon lingering after its last session. A
 * plain `rm -r` racing with them fails with ENOTEMPTY (a file created in a directory after it was listed).
 *
 * `removeScratch` first stops every process of this user that belongs to the scratch tree (its working directory,
 * `HOME` or `MEMDIR_HOME` inside it; read from `/proc`), waits for them to exit (SIGTERM, then SIGKILL), and only
 * then removes the tree. Only processes whose environment points into a fresh `mkdtemp` directory are touched, so
 * nothing outside the test is ever signalled. Without `/proc` (not Linux) it falls back to removing with retries.
 */
import * as fs from "node:fs"
import * as path from "node:path"

const readProc = (pid: string, file: string): string | undefined => {
  try {
    return file === "cwd" ? fs.readlinkSync(`/proc/${pid}/cwd`) : fs.readFileSync(`/proc/${pid}/${file}`, "latin1")
  } catch {
    return undefined // gone, or not ours to read
  }
}

const inside = (dir: string, candidate: string) => candidate === dir || candidate.startsWith(dir + path.sep)

/** The pids (other than this process) whose working directory, HOME or MEMDIR_HOME lies inside `dir`. */
export const processesIn = (dir: string): ReadonlyArray<number> => {
  let entries: ReadonlyArray<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const pids: Array<number> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    const cwd = readProc(entry, "cwd")
    const environ = readProc(entry, "environ")?.split("\0") ?? []
    const homes = environ.filter((line) => line.startsWith("HOME=") || line.startsWith("MEMDIR_HOME="))
      .map((line) => line.slice(line.indexOf("=") + 1))
    if ((cwd !== undefined && inside(dir, cwd)) || homes.some((home) => inside(dir, home))) pids.push(Number(entry))
  }
  return pids
}

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name)
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Stops what still runs inside `dir` (SIGTERM, then SIGKILL after `graceMs`), then removes `dir`. */
export const removeScratch = async (dir: string | undefined, graceMs = 5_000): Promise<void> => {
  if (dir === undefined || dir === "") return
  const started = Date.now()
  let living = processesIn(dir)
  for (const pid of living) signal(pid, "SIGTERM")
  while (living.length > 0 && Date.now() - started < graceMs) {
    await sleep(50)
    living = processesIn(dir)
  }
  for (const pid of living) signal(pid, "SIGKILL")
  while (processesIn(dir).length > 0 && Date.now() - started < graceMs + 2_000) await sleep(50)
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })
}
