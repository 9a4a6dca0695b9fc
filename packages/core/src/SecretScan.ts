/**
 * SecretScan: finds likely secrets in text (private keys, cloud credentials, API tokens, JWTs, passwords in
 * assignments and URLs). Team memory is shared, so `memdir team audit` reports them and team sync refuses to
 * push a file that holds one.
 *
 * Tuned against false positives, because a scanner that cries wolf gets switched off: vendor tokens are matched
 * by their documented prefixes and lengths; JWTs must decode to a JSON header with `alg`; generic assignments
 * (`password = …`) need a value that is not a placeholder, not an environment reference and not a plain word.
 * A line containing `memdir:allow-secret` is skipped (for documented, deliberately public examples).
 */

/** Where a likely secret was found. `excerpt` is redacted: it never holds the secret itself. */
export interface SecretFinding {
  /** Stable id of the pattern, e.g. `aws-access-key-id`. */
  readonly pattern: string
  /** What was found, for people: "AWS access key id". */
  readonly description: string
  /** 1-based. */
  readonly line: number
  /** 1-based, in UTF-16 code units. */
  readonly column: number
  /** The match with all but its first 4 characters replaced by `…`. */
  readonly excerpt: string
}

export interface SecretPattern {
  readonly id: string
  readonly description: string
  readonly regex: RegExp
  /** Index of the capture group holding the secret value (0 = the whole match). */
  readonly group?: number
  /** Extra check on the captured value; false drops the match. */
  readonly accept?: (value: string, line: string) => boolean
}

/** Inline marker that silences the scanner for one line. */
export const ALLOW_MARKER = "memdir:allow-secret"

const PLACEHOLDER_WORDS =
  /^(?:x+|\*+|\.+|-+|_+|changeme|change_me|example|sample|placeholder|secret|password|passwd|redacted|hidden|none|null|nil|undefined|true|false|required|optional|todo|tbd|fixme|your[_-]?\w*|my[_-]?\w*|<[^>]*>|\[[^\]]*\]|\{[^}]*\})$/i

/** `${X}`, `$X`, `%X%`, `process.env.X`, `os.environ[…]`, `env("X")`, `{{ x }}`, `<x>`: a reference, not a value. */
const isReference = (value: string): boolean =>
  /^\$\{?[A-Za-z_]/.test(value) ||
  /^%[A-Za-z_]+%$/.test(value) ||
  /^(?:process\.env|os\.environ|os\.getenv|env\(|getenv\(|ENV\[|System\.getenv|secrets\.|vault:|op:\/\/)/i.test(
    value
  ) ||
  /^\{\{.*\}\}$/.test(value) ||
  /^<.*>$/.test(value)

const shannonEntropy = (value: string): number => {
  const counts = new Map<string, number>()
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1)
  let entropy = 0
  for (const n of counts.values()) {
    const p = n / value.length
    entropy -= p * Math.log2(p)
  }
  return entropy
}

/** A value that could be a real password or key: long enough, not a placeholder or reference, not one word. */
export const looksLikeSecretValue = (raw: string): boolean => {
  const value = raw.replace(/^["'`]/, "").replace(/["'`,;:.)\]}>]+$/, "")
  if (value.length < 8 || value.length > 200) return false
  if (PLACEHOLDER_WORDS.test(value) || isReference(value)) return false
  // `<string>…`, `[redacted]…`, `{…}`, `(…)`: a placeholder or a type, not a value
  if (/^[<[{(]/.test(value)) return false
  if (/^(.)\1+$/.test(value)) return false
  // one word (also CamelCase: a type name) or a sentence fragment is prose or code, not a credential
  if (/^[A-Za-z]+(?:[ -][A-Za-z]+)*$/.test(value)) return false
  // code, not a value: `Schema.String`, `config.db.password`, `Redacted.make("x")`, `getPassword()`
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(.*\)?)?$/.test(value) && /[.(]/.test(value)) return false
  if (/^[A-Za-z_$][\w$.]*[<(]/.test(value)) return false
  if (
    /^(?:(?:Big)?(?:Ui|I)nt(?:8|16|32|64)(?:Clamped)?Array|Float(?:32|64)Array|(?:Shared)?ArrayBuffer|Buffer)$/.test(
      value
    )
  ) {
    return false
  }
  // file paths and URLs without credentials are not secrets
  if (/^(?:\.{0,2}\/|~\/|[a-z]+:\/\/)/.test(value)) return false
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((r) => r.test(value)).length
  return classes >= 2 && shannonEntropy(value) >= 2.5
}

const base64UrlJson = (segment: string): Record<string, unknown> | undefined => {
  try {
    const json = Buffer.from(segment.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8")
    const parsed: unknown = JSON.parse(json)
    return typeof parsed === "object" && parsed !== null ? parsed as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

/** The patterns, most specific first (a line reports each distinct pattern once per match). */
export const secretPatterns: ReadonlyArray<SecretPattern> = [
  {
    id: "gcp-service-account",
    description: "Google Cloud service-account private key",
    regex: /"private_key"\s*:\s*"-----BEGIN PRIVATE KEY-----/g
  },
  {
    id: "private-key",
    description: "private key block",
    regex: /-----BEGIN (?:RSA |DSA |EC |OPENSSH |ENCRYPTED |PGP |SSH2 ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----/g
  },
  {
    id: "aws-access-key-id",
    description: "AWS access key id",
    regex: /\b((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z2-7]{16})\b/g,
    group: 1,
    // AWS's own documentation example
    accept: (value) => value !== "AKIAIOSFODNN7EXAMPLE"
  },
  {
    id: "aws-secret-access-key",
    description: "AWS secret access key",
    regex: /aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    group: 1,
    accept: (value) => value !== "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
  },
  {
    id: "gcp-api-key",
    description: "Google API key",
    regex: /\b(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/g,
    group: 1
  },
  {
    id: "google-oauth-token",
    description: "Google OAuth access token",
    regex: /\b(ya29\.[0-9A-Za-z_-]{30,})/g,
    group: 1
  },
  {
    id: "azure-storage-key",
    description: "Azure storage account key",
    regex: /AccountKey=([A-Za-z0-9+/]{86}==)/g,
    group: 1
  },
  {
    id: "azure-sas-token",
    description: "Azure shared access signature",
    regex: /[?&]sv=\d{4}-\d{2}-\d{2}&[^\s]*?\bsig=([A-Za-z0-9%+/=]{40,})/g,
    group: 1
  },
  {
    id: "azure-client-secret",
    description: "Azure AD client secret",
    regex: /\b([A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])/g,
    group: 1
  },
  {
    id: "github-token",
    description: "GitHub token",
    regex: /\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})\b/g,
    group: 1
  },
  {
    id: "gitlab-token",
    description: "GitLab token",
    regex: /\b((?:glpat|gldt|glrt|glptt|glsoat|glcbt)-[A-Za-z0-9_-]{20,})(?![A-Za-z0-9_-])/g,
    group: 1
  },
  {
    id: "slack-token",
    description: "Slack token",
    regex: /\b(xox[abposre]-(?:\d+-)+[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{20,})\b/g,
    group: 1
  },
  {
    id: "slack-webhook",
    description: "Slack incoming webhook URL",
    regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/T[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]{20,}/g
  },
  {
    id: "stripe-secret-key",
    description: "Stripe secret or restricted key",
    regex: /\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,})\b/g,
    group: 1
  },
  {
    id: "anthropic-api-key",
    description: "Anthropic API key",
    regex: /\b(sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{80,})(?![A-Za-z0-9_-])/g,
    group: 1
  },
  {
    id: "openai-api-key",
    description: "OpenAI API key",
    regex:
      /\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{48})(?![A-Za-z0-9_-])/g,
    group: 1
  },
  {
    id: "npm-token",
    description: "npm access token",
    regex: /\b(npm_[A-Za-z0-9]{36})\b/g,
    group: 1
  },
  {
    id: "huggingface-token",
    description: "Hugging Face token",
    regex: /\b(hf_[A-Za-z0-9]{34,})\b/g,
    group: 1
  },
  {
    id: "sendgrid-api-key",
    description: "SendGrid API key",
    regex: /\b(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g,
    group: 1
  },
  {
    id: "jwt",
    description: "JSON Web Token",
    regex: /\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,})(?![A-Za-z0-9_-])/g,
    group: 1,
    accept: (value) => {
      const header = base64UrlJson(value.split(".")[0]!)
      return header !== undefined && typeof header["alg"] === "string"
    }
  },
  {
    id: "url-credentials",
    description: "password in a URL",
    regex: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]+:([^\s@/'"]+)@[^\s/'"]+/gi,
    group: 1,
    accept: (value) => looksLikeSecretValue(value)
  },
  {
    id: "password-assignment",
    description: "password or secret in an assignment",
    regex:
      /\b(?:password|passwd|pwd|passphrase|secret|secret[_-]?key|client[_-]?secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|private[_-]?key)\b["']?\s*(?::=|=|:)\s*("[^"\n]*"|'[^'\n]*'|`[^`\n]*`|[^\s,;]+)/gi,
    group: 1,
    accept: (value) => looksLikeSecretValue(value)
  }
]

const redact = (value: string): string => value.length <= 4 ? "…" : `${value.slice(0, 4)}…`

/** Whether a pattern matches anywhere in `text` (its global regex left at the start). */
const occursIn = (text: string) => (pattern: SecretPattern): boolean => {
  pattern.regex.lastIndex = 0
  const found = pattern.regex.test(text)
  pattern.regex.lastIndex = 0
  return found
}

/** Every likely secret in `text`, in line order; at most one finding per pattern per line. */
export const scanSecrets = (text: string): ReadonlyArray<SecretFinding> => {
  // Most texts hold no secret (an audit reads thousands): each pattern first runs once over the whole text, and
  // only the patterns found there are tried line by line. No pattern is anchored to a line's ends, so a match in a
  // line is a match in the text; a pattern absent from the text claims no span in any line.
  const present = secretPatterns.filter(occursIn(text))
  if (present.length === 0) return []
  const findings: Array<SecretFinding> = []
  const lines = text.split("\n")
  lines.forEach((line, index) => {
    if (line.includes(ALLOW_MARKER)) return
    const taken: Array<readonly [number, number]> = []
    for (const pattern of present) {
      pattern.regex.lastIndex = 0
      for (const match of line.matchAll(pattern.regex)) {
        const value = match[pattern.group ?? 0] ?? match[0]
        const start = match.index + match[0].indexOf(value)
        // a more specific pattern already claimed this span (e.g. an OpenAI key inside `api_key = …`)
        if (taken.some(([from, to]) => start < to && start + value.length > from)) continue
        if (pattern.accept !== undefined && !pattern.accept(value, line)) continue
        taken.push([start, start + value.length])
        findings.push({
          pattern: pattern.id,
          description: pattern.description,
          line: index + 1,
          column: start + 1,
          excerpt: redact(value)
        })
        break
      }
    }
  })
  return findings
}

/** True when `text` holds at least one likely secret. */
export const containsSecret = (text: string): boolean => scanSecrets(text).length > 0

/** The first likely secret in `text` (by line), if any: what a refusal names. */
export const findSecret = (text: string): SecretFinding | undefined => scanSecrets(text)[0]
