/**
 * Who may talk to `memdir ui` (docs/ui.md#security): the checks every request passes before it reaches a handler.
 * Pure, so each rule is tested on its own (test/ui-security.test.ts drives them over real HTTP).
 *
 * - The server listens on 127.0.0.1 only, and a request's `Host` must be `127.0.0.1:PORT` or `localhost:PORT`: a
 *   page of another site that points its own name at 127.0.0.1 (DNS rebinding) sends its own name, and is refused.
 * - A fresh random token per launch (32 bytes, base64url) is in the URL the command prints; the first request with
 *   it gets an HttpOnly, SameSite=Strict cookie and a redirect that takes the token out of the address bar. Every
 *   other request needs the cookie (or the token); without it, 403. Tokens are compared in constant time.
 * - A request that changes something (any method but GET and HEAD) must come from the page itself: an `Origin` of
 *   this server, `Sec-Fetch-Site: same-origin` when the browser sends it, and a JSON body (`application/json`, which
 *   a cross-site form cannot send without a preflight, and the server answers no preflight). `--read-only` refuses
 *   every such request.
 * - No response carries an `Access-Control-*` header; every response carries a strict Content-Security-Policy.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/** Bytes of randomness in a launch's token. */
export const TOKEN_BYTES = 32

/** A fresh token: 32 random bytes, base64url (43 characters). */
export const newToken = (): string => randomBytes(TOKEN_BYTES).toString("base64url")

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** `given` is the token, compared in constant time (digests of equal length, whatever was given). */
export const sameToken = (given: string | undefined, token: string): boolean =>
  given !== undefined && timingSafeEqual(digest(given), digest(token))

/** The cookie's name: per port, since cookies are shared by every port of a host (two `memdir ui` at once). */
export const cookieName = (port: number): string => `memdir-ui-${port}`

/** The `Set-Cookie` of an authenticated browser: script cannot read it, no other site's request carries it. */
export const sessionCookie = (port: number, token: string): string =>
  `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`

export const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; " +
  "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** Headers of every response (no `Access-Control-*`, ever). */
export const securityHeaders: Readonly<Record<string, string>> = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store"
}

/** The `Host` values the server answers to. */
export const allowedHosts = (port: number): ReadonlyArray<string> => [`127.0.0.1:${port}`, `localhost:${port}`]

/** The part of a request the checks read. */
export interface GuardedRequest {
  readonly method: string
  /** The request target: path and query. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

export interface Guard {
  readonly token: string
  readonly port: number
  readonly readOnly: boolean
}

export type Verdict =
  /** Let through; `redirect` when the token came in the URL: set the cookie and go to the page without the token. */
  | { readonly ok: true; readonly redirect?: { readonly location: string; readonly setCookie: string } | undefined }
  | { readonly ok: false; readonly status: 403 | 415; readonly reason: string }

const header = (request: GuardedRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/** The value of cookie `name` in a `Cookie` header. */
export const cookieValue = (cookies: string | undefined, name: string): string | undefined => {
  for (const part of (cookies ?? "").split(";")) {
    const at = part.indexOf("=")
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

const refuse = (reason: string, status: 403 | 415 = 403): Verdict => ({ ok: false, status, reason })

/** Methods that change nothing (the only ones `--read-only` lets through, the only ones needing no Origin). */
export const isSafeMethod = (method: string): boolean => method === "GET" || method === "HEAD"

/** Whether a request may be served, and how. */
export const checkRequest = (request: GuardedRequest, guard: Guard): Verdict => {
  const host = header(request, "host")?.toLowerCase()
  if (host === undefined || !allowedHosts(guard.port).includes(host)) {
    return refuse(`Host ${JSON.stringify(host ?? "")} is not this server's (127.0.0.1:${guard.port})`)
  }
  // a request target no URL parser reads (`//[`) is no request of the page's
  const url = URL.parse(request.url, `http://${host}`)
  if (url === null || !request.url.startsWith("/") || request.url.startsWith("//")) {
    return refuse(`the request target ${JSON.stringify(request.url.slice(0, 100))} is not a path of this server`)
  }
  const fromCookie = sameToken(cookieValue(header(request, "cookie"), cookieName(guard.port)), guard.token)
  const fromQuery = url.searchParams.has("token") && sameToken(url.searchParams.get("token") ?? "", guard.token)
  if (!fromCookie && !fromQuery) return refuse("no valid token: open the URL `memdir ui` printed")
  if (!isSafeMethod(request.method)) {
    if (guard.readOnly) return refuse("memdir ui runs with --read-only: nothing can be changed")
    const origin = header(request, "origin")
    if (origin !== `http://${host}`) {
      return refuse(`Origin ${JSON.stringify(origin ?? "")} is not this server's: changes come from its page only`)
    }
    const site = header(request, "sec-fetch-site")
    if (site !== undefined && site !== "same-origin") return refuse(`Sec-Fetch-Site ${site}: not this page`)
    const type = header(request, "content-type")?.split(";")[0]?.trim().toLowerCase()
    if (type !== "application/json") return refuse("a change is sent as application/json", 415)
  }
  if (fromQuery && isSafeMethod(request.method)) {
    // always to the page itself: a path such as `/.//evil.example` would make `//evil.example`, another site
    return { ok: true, redirect: { location: "/", setCookie: sessionCookie(guard.port, guard.token) } }
  }
  return { ok: true }
}
