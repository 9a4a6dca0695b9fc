/**
 * What the benchmarks share to measure: the median, rounding for reports, and a sampler of the process's peak RSS
 * that runs on another thread (a synchronous scan cannot hide its peak from it).
 */
import { Worker } from "node:worker_threads"

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits

/** Samples the process's RSS every millisecond from another thread; `stop` gives the peak seen. */
export const startRssSampler = () => {
  const worker = new Worker(
    `const { parentPort } = require("node:worker_threads")
    let peak = process.memoryUsage.rss()
    const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()) }, 1)
    parentPort.once("message", () => { clearInterval(timer); parentPort.postMessage(peak) })`,
    { eval: true }
  )
  return {
    stop: () =>
      new Promise<number>((resolve) => {
        worker.once("message", (peak: number) => {
          void worker.terminate()
          resolve(peak)
        })
        worker.postMessage("stop")
      })
  }
}
