/// <reference lib="dom" />
/**
 * `memdir ui` page-load benchmark (docs/ui.md): how long the browse page takes to show every memory of a directory of
 * 2,000 (the budget: 300 ms), in Debian's Chromium (playwright-core), against the bundled CLI's server.
 *
 * Each round loads the page afresh (a new document, the session cookie already set) and reads the page's own marks
 * (User Timing, from the navigation's start): the frame after the first screenful of rows went in (the page usable)
 * and the frame after the last of the 2,000 did: the HTML, the script, the listing request (scan, ages, index
 * placement, links of every memory) and the rendering. Beside it,
 * the listing request alone (`GET /api/memories` from Node) and the server's start (spawn to URL printed). The first
 * load after the server started is reported on its own (cold); then medians of the rounds and the ratio to the
 * budget, and the ratio to the same page over 20 memories (loaded in the same rounds: the page's own machinery, so a
 * busy machine slows both alike). Ratios and medians only, never timed assertions. Writes `.bench/ui.json`.
 *
 *   tsx apps/cli/bench/ui.bench.ts
 *   MEMDIR_BENCH_ROUNDS=15             rounds (default 9)
 *   MEMDIR_BENCH_UI_SIZE=5000          memories (default 2000)
 *   MEMDIR_BENCH_CLI=path/to/memdir.js another bundle
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { BrowserContext } from "playwright-core"

/** What this bench uses of test/support/browser.ts (the ui tests' Chromium: same binary, same options). */
interface BrowserSupport {
  readonly launchBrowser: () => Promise<{ readonly context: BrowserContext; readonly close: () => Promise<void> }>
}
// loaded by path: this package's type-check covers apps/cli only, and test/ is a project of its own
const support = "../../../test/support/browser.js"
const { launchBrowser }: BrowserSupport = await import(support)

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "../../..")
const cli = path.resolve(process.env.MEMDIR_BENCH_CLI ?? path.join(repoRoot, "apps/cli/dist/memdir.js"))
const benchDir = path.join(repoRoot, ".bench")
const SIZE = Number(process.env.MEMDIR_BENCH_UI_SIZE ?? 2000)
const ROUNDS = Number(process.env.MEMDIR_BENCH_ROUNDS ?? 9)
const BUDGET_MS = 300
const GENERATOR_VERSION = 1

const types = ["user", "feedback", "project", "reference"] as const
const words = ["database", "pool", "migration", "deploy", "oncall", "review", "testing", "cache", "latency", "auth"]
const sentence = "Body text a person reads on the memory's page. "

/** `size` memories (some linking others) and their index, deterministic, reused while the marker matches. */
const corpus = (size: number): string => {
  const root = path.join(benchDir, `ui-${size}`)
  const memoryDir = path.join(root, "memory")
  const marker = path.join(root, ".generated")
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === `${GENERATOR_VERSION}:${size}\n`) return memoryDir
  fs.rmSync(root, { recursive: true, force: true })
  fs.mkdirSync(memoryDir, { recursive: true })
  let seed = 11
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const now = Date.now() / 1000
  const index: Array<string> = []
  const names: Array<string> = []
  for (let i = 0; i < size; i++) {
    const type = types[next() % 4]!
    const topic = `${words[next() % 10]} ${words[next() % 10]} ${i}`
    names.push(topic)
    const file = `${type}_${topic.replace(/ /g, "_")}.md`
    const description = `Notes about ${topic} for the team`
    const link = i > 0 && next() % 3 === 0 ? `\n\nSee [[${names[next() % i]}]].` : ""
    const absolute = path.join(memoryDir, file)
    fs.writeFileSync(
      absolute,
      `---\nname: ${topic}\ndescription: ${description}\ntype: ${type}\n---\n\n${
        sentence.repeat(2 + (next() % 30))
      }${link}\n`
    )
    const mtime = now - (next() % (90 * 86_400))
    fs.utimesSync(absolute, mtime, mtime)
    // more lines than the 200-line cap: the listing shows which are cut
    if (index.length < 260) index.push(`- [${topic}](${file}) — ${description}`)
  }
  fs.writeFileSync(path.join(memoryDir, "MEMORY.md"), `${index.join("\n")}\n`)
  fs.writeFileSync(marker, `${GENERATOR_VERSION}:${size}\n`)
  return memoryDir
}

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const fixed = (ms: number) => `${ms.toFixed(0)} ms`

/** Starts `memdir ui --no-open` on the corpus; resolves with its URL and how long it took to print it. */
const startUi = (memoryDir: string, home: string) =>
  new Promise<{ url: string; startMs: number; stop: () => Promise<void> }>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [cli, "ui", "--no-open", "--memory-dir", memoryDir], {
      cwd: home,
      env: { ...process.env, HOME: home, MEMDIR_HOME: path.join(home, ".memdir") },
      stdio: ["ignore", "pipe", "ignore"]
    })
    let out = ""
    const exited = new Promise<void>((done) => child.on("exit", () => done()))
    child.on("exit", (code) => reject(new Error(`memdir ui exited ${code}`)))
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      if (out.includes("\n")) {
        resolve({
          url: out.split("\n")[0]!,
          startMs: performance.now() - started,
          stop: () => {
            child.kill("SIGTERM")
            return exited
          }
        })
      }
    })
  })

const listingMs = (url: URL, cookie: string) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    http.get({ host: "127.0.0.1", port: url.port, path: "/api/memories", headers: { Cookie: cookie } }, (res) => {
      res.resume()
      res.on("end", () => resolve(performance.now() - started))
    }).on("error", reject)
  })

/** Rows of the floor case: the page's own machinery (HTML, script, requests) with next to no memory. */
const FLOOR_SIZE = 20

const main = async () => {
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: bundle the CLI first (cd apps/cli && node build.mjs)`)
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "memdir-ui-bench-"))
  const ui = await startUi(corpus(SIZE), home)
  const floorUi = await startUi(corpus(FLOOR_SIZE), home)
  const url = new URL(ui.url)
  const floorUrl = new URL(floorUi.url)
  const cookie = `memdir-ui-${url.port}=${url.searchParams.get("token")}`
  const { close: closeBrowser, context } = await launchBrowser()
  try {
    const page = await context.newPage()
    /**
     * One fresh load of the browse page of `size` memories: ms from navigation start to the first rows on screen
     * (the page usable), and to the last of the rows in the DOM.
     */
    const load = async (target: string, size: number): Promise<{ first: number; all: number }> => {
      await page.goto(target)
      // the page marks the frames after its rows went in (browse.ts): its own clock, not the driver's round trips
      await page.waitForFunction(() => performance.getEntriesByName("memdir:all-rows").length > 0)
      const marks = await page.evaluate(() => ({
        first: performance.getEntriesByName("memdir:first-rows")[0]!.startTime,
        all: performance.getEntriesByName("memdir:all-rows")[0]!.startTime,
        rows: document.querySelectorAll("[data-testid=memory-row]").length
      }))
      if (marks.rows !== size) throw new Error(`the page shows ${marks.rows} rows, not ${size}`)
      return marks
    }
    const cold = await load(ui.url, SIZE)
    await load(floorUi.url, FLOOR_SIZE)
    const firstMs: Array<number> = []
    const pageMs: Array<number> = []
    const floorMs: Array<number> = []
    const ratios: Array<number> = []
    const apiMs: Array<number> = []
    // each round loads both, in a rotated order: a busy machine slows both alike, and the ratio stays
    for (let round = 0; round < ROUNDS; round++) {
      const big = async () => {
        const loaded = await load(`${url.origin}/?round=${round}#/browse`, SIZE)
        firstMs.push(loaded.first)
        pageMs.push(loaded.all)
        return loaded.all
      }
      const small = async () => (await load(`${floorUrl.origin}/?round=${round}#/browse`, FLOOR_SIZE)).all
      let all: number
      let floor: number
      if (round % 2 === 0) {
        all = await big()
        floor = await small()
      } else {
        floor = await small()
        all = await big()
      }
      floorMs.push(floor)
      ratios.push(all / floor)
      apiMs.push(await listingMs(url, cookie))
    }
    const result = {
      memories: SIZE,
      rounds: ROUNDS,
      budgetMs: BUDGET_MS,
      serverStartMs: Math.round(ui.startMs),
      coldFirstRowsMs: Math.round(cold.first),
      coldPageMs: Math.round(cold.all),
      firstRowsMedianMs: Math.round(median(firstMs)),
      pageMedianMs: Math.round(median(pageMs)),
      pageMinMs: Math.round(Math.min(...pageMs)),
      pageMaxMs: Math.round(Math.max(...pageMs)),
      floorMedianMs: Math.round(median(floorMs)),
      ratioToFloor: Number(median(ratios).toFixed(2)),
      listingMedianMs: Math.round(median(apiMs)),
      ratioToBudget: Number((median(pageMs) / BUDGET_MS).toFixed(2)),
      firstRowsRatioToBudget: Number((median(firstMs) / BUDGET_MS).toFixed(2)),
      loadAverage: os.loadavg()[0]!.toFixed(2)
    }
    console.log(`memdir ui, browse page over ${SIZE} memories (${ROUNDS} rounds, Chromium headless)`)
    console.log(`  server start (spawn to URL):        ${fixed(result.serverStartMs)}`)
    console.log(
      `  first load after start (cold):      first rows ${fixed(result.coldFirstRowsMs)}, ` +
        `all rows ${fixed(result.coldPageMs)}`
    )
    console.log(
      `  first rows on screen, median:       ${fixed(result.firstRowsMedianMs)}: ` +
        `${result.firstRowsRatioToBudget}× the ${BUDGET_MS} ms budget`
    )
    console.log(
      `  all ${SIZE} rows in the DOM, median:  ${fixed(result.pageMedianMs)} ` +
        `(${result.pageMinMs}–${result.pageMaxMs} ms): ${result.ratioToBudget}× the ${BUDGET_MS} ms budget`
    )
    console.log(
      `  the same page over ${FLOOR_SIZE} memories:     ${fixed(result.floorMedianMs)}; ` +
        `${SIZE} memories cost ${result.ratioToFloor}× it (median of per-round ratios)`
    )
    console.log(
      `  GET /api/memories alone, median:    ${fixed(result.listingMedianMs)} (kept while memory is unchanged)`
    )
    console.log(`  (load average ${result.loadAverage}: figures on a busy machine are higher; the ratio holds)`)
    fs.mkdirSync(benchDir, { recursive: true })
    fs.writeFileSync(path.join(benchDir, "ui.json"), JSON.stringify(result, null, 2) + "\n")
  } finally {
    await closeBrowser()
    await Promise.all([ui.stop(), floorUi.stop()])
    fs.rmSync(home, { recursive: true, force: true })
  }
}

await main()
