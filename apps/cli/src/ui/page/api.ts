/// <reference lib="dom" />
/**
 * The page's calls to its server (apps/cli/src/ui/UiApi.ts): reads are GET with query parameters, changes POST with
 * a JSON body (the server refuses any other kind); the session cookie goes along by itself (same origin).
 */

/** A failed call: the server's `{ error: { _tag, message, … } }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly tag: string,
    message: string,
    readonly fields: Readonly<Record<string, unknown>>
  ) {
    super(message)
  }
}

const answer = async <A>(response: Response): Promise<A> => {
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new ApiError(response.status, "BadResponse", text.trim() || `HTTP ${response.status}`, {})
  }
  if (response.ok) return body as A
  const error = (body as { error?: Record<string, unknown> }).error ?? {}
  throw new ApiError(
    response.status,
    String(error._tag ?? "Error"),
    String(error.message ?? `HTTP ${response.status}`),
    error
  )
}

export const get = async <A>(path: string, params: Readonly<Record<string, string>> = {}): Promise<A> => {
  const query = new URLSearchParams(params).toString()
  return answer<A>(await fetch(query === "" ? path : `${path}?${query}`, { credentials: "same-origin" }))
}

let changedAt = 0

/** When the page last sent a change (its own change shows up on the event stream too). */
export const lastChangeAt = (): number => changedAt

export const post = async <A>(path: string, body: unknown): Promise<A> => {
  changedAt = Date.now()
  return answer<A>(
    await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    })
  )
}
