/**
 * The progress line a run writes to stderr: overall count, per variant how many trials are done and how many
 * passed, and an estimate of the time left from the pace so far.
 */
import { formatMs } from "./Report.js"
import type { TrialProgress } from "./Runner.js"

export interface ProgressState {
  /** When the current round started (`--until-ci-width` runs rounds, each counted from 1). */
  startedAtMs: number
  /** Variant → trials done and passed, in the order first seen. */
  readonly byVariant: Map<string, { done: number; passed: number }>
}

export const makeProgressState = (startedAtMs: number): ProgressState => ({ startedAtMs, byVariant: new Map() })

/** "1m 20s", "45 s", "2h 05m". */
export const formatDuration = (ms: number): string => {
  if (ms < 60_000) return formatMs(ms)
  const s = Math.round(ms / 1000)
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
}

/** Records a finished trial and returns the line to show (mutates `state`: one per run, owned by the CLI). */
export const progressLine = (state: ProgressState, progress: TrialProgress, nowMs: number): string => {
  const { done, perVariant, result, total } = progress
  if (done === 1 && state.byVariant.size > 0) {
    state.byVariant.clear()
    state.startedAtMs = nowMs - result.latencyMs
  }
  const counts = state.byVariant.get(result.variant) ?? { done: 0, passed: 0 }
  counts.done++
  if (result.error === undefined && result.passed) counts.passed++
  state.byVariant.set(result.variant, counts)
  const elapsed = nowMs - state.startedAtMs
  const eta = done >= total ? "done" : done === 0 ? "ETA ?" : `ETA ${formatDuration((elapsed / done) * (total - done))}`
  const variants = [...state.byVariant].map(([name, c]) => `${name} ${c.done}/${perVariant} (${c.passed} pass)`)
  return `[${done}/${total}] ${variants.join(" · ")} · ${formatDuration(elapsed)} elapsed, ${eta}`
}
