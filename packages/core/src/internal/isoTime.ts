/**
 * `new Date(ms).toISOString()`, fast: listings print a time per memory (`ls --json`, the agent tools'
 * `memory_list`, the manifest a model reads), and a `Date` and its formatting per call cost more than the rest of
 * the line.
 */
const DAY_MS = 86_400_000
/** The last millisecond `toISOString` writes with a four-digit year (9999-12-31T23:59:59.999Z). */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999
/** Each day's `YYYY-MM-DDT`, by day number: a listing's memories fall on a few hundred days. */
const dayPrefixes = new Map<number, string>()
/** Days remembered at most: a long-lived process listing times far apart never holds more. */
const MAX_DAYS = 4096
const pad2 = (n: number): string => (n < 10 ? "0" : "") + n
const pad3 = (n: number): string => (n < 10 ? "00" : n < 100 ? "0" : "") + n

/**
 * `new Date(ms).toISOString()`, without a `Date` per call (the cost of a listing's 20k times, in a process that has
 * just started): the day's prefix from a cache, the time of day by arithmetic. Times before 1970 or past year 9999
 * (and NaN) go to `toISOString` itself.
 */
export const isoTime = (ms: number): string => {
  if (!(ms >= 0 && ms < LAST_FOUR_DIGIT_YEAR_MS + 1)) return new Date(ms).toISOString()
  // a Date keeps whole milliseconds, truncated (stat's mtimeMs has a fraction)
  const time = Math.floor(ms)
  const day = Math.floor(time / DAY_MS)
  let prefix = dayPrefixes.get(day)
  if (prefix === undefined) {
    if (dayPrefixes.size >= MAX_DAYS) dayPrefixes.clear()
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11)
    dayPrefixes.set(day, prefix)
  }
  let rest = time - day * DAY_MS
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  return `${prefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`
}
