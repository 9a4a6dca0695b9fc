/**
 * SecretScan: every pattern finds its secret; the usual look-alikes in memories (placeholders, env references,
 * documentation examples, hashes, ids, code) are left alone. Test tokens are assembled from pieces so that this
 * file itself holds no token a scanner (ours or a host's) would flag.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { ALLOW_MARKER, containsSecret, findSecret, scanSecrets, secretPatterns } from "../src/SecretScan.js"

const alnum = (n: number, seed = 7): string => {
  const chars = "AbCdEfGhJkMnPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ"
  let out = ""
  let x = seed
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648
    out += chars[x % chars.length]
  }
  return out
}
const upperDigits = (n: number): string => alnum(n * 3, 11).replace(/[^A-Z2-7]/g, "").slice(0, n).padEnd(n, "Q")
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** One realistic line per pattern id, each holding exactly that kind of secret. */
const positives: Record<string, string> = {
  "private-key": `-----BEGIN ${"OPENSSH"} PRIVATE KEY-----`,
  "aws-access-key-id": `aws_access_key_id = ${"AK" + "IA"}${upperDigits(16)}`,
  "aws-secret-access-key": `aws_secret_access_key = ${alnum(30)}/${alnum(9)}`,
  "gcp-service-account": `  "private_key": "-----BEGIN ${"PRIVATE"} KEY-----\\nMIIE..."`,
  "gcp-api-key": `maps key ${"AI" + "za"}${alnum(35)}`,
  "google-oauth-token": `Authorization: Bearer ${"ya" + "29."}${alnum(40)}`,
  "azure-storage-key": `DefaultEndpointsProtocol=https;AccountName=x;${"Account" + "Key="}${alnum(86)}==;`,
  "azure-sas-token": `https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&srt=o&sp=r&${"si" + "g="}${alnum(44)}`,
  "azure-client-secret": `AZURE_CLIENT_SECRET ${alnum(3)}8Q~${alnum(34)}`,
  "github-token": `export GH_TOKEN=${"gh" + "p_"}${alnum(36)}`,
  "gitlab-token": `token ${"gl" + "pat-"}${alnum(20)}`,
  "slack-token": `SLACK_BOT_TOKEN=${"xo" + "xb-"}1234567890-9876543210-${alnum(24)}`,
  "slack-webhook": `post to https://hooks.slack.com/services/T${upperDigits(8)}/B${upperDigits(8)}/${alnum(24)}`,
  "stripe-secret-key": `stripe key ${"sk_" + "live_"}${alnum(24)}`,
  "anthropic-api-key": `ANTHROPIC_API_KEY=${"sk-" + "ant-"}api03-${alnum(93)}AA`,
  "openai-api-key": `OPENAI_API_KEY=${"sk-" + "proj-"}${alnum(48)}`,
  "npm-token": `//registry.npmjs.org/:_authToken=${"np" + "m_"}${alnum(36)}`,
  "huggingface-token": `HF_TOKEN=${"h" + "f_"}${alnum(34)}`,
  "sendgrid-api-key": `SENDGRID=${"S" + "G."}${alnum(22)}.${alnum(43)}`,
  "jwt": `curl -H "Authorization: Bearer ${b64url({ alg: "HS256", typ: "JWT" })}.${
    b64url({ sub: "1234567890", name: "x" })
  }.${alnum(43)}"`,
  "url-credentials": `DATABASE_URL=postgres://app:${"Tr0ub4dor"}&3x@db.internal:5432/app`,
  "password-assignment": `db password = "${"hunter2"}-Xy9!q"`
}

describe("SecretScan", () => {
  it("has a positive example for every pattern, and each finds exactly its kind", () => {
    assert.deepStrictEqual(Object.keys(positives).sort(), secretPatterns.map((p) => p.id).sort())
    for (const [id, line] of Object.entries(positives)) {
      const found = scanSecrets(`some context\n${line}\nmore`)
      assert.deepStrictEqual(found.map((f) => f.pattern), [id], `${id}: ${line}`)
      assert.strictEqual(found[0]!.line, 2)
    }
  })

  it("names the line and column, and never repeats the secret in its excerpt", () => {
    const token = `${"gh" + "p_"}${alnum(36)}`
    const [finding] = scanSecrets(`# notes\n\nuse ${token} for CI`)
    assert.strictEqual(finding!.line, 3)
    assert.strictEqual(finding!.column, 5)
    assert.strictEqual(finding!.excerpt, "ghp_…")
    assert.notInclude(JSON.stringify(finding), token.slice(4))
  })

  it("findSecret returns the first finding; containsSecret says whether there is one", () => {
    assert.isUndefined(findSecret("nothing here"))
    assert.isFalse(containsSecret("nothing here"))
    const text = `a\n${positives["stripe-secret-key"]}\n${positives["private-key"]}`
    assert.strictEqual(findSecret(text)!.pattern, "stripe-secret-key")
    assert.isTrue(containsSecret(text))
  })

  it(`a line marked ${ALLOW_MARKER} is skipped`, () => {
    assert.deepStrictEqual(scanSecrets(`${positives["github-token"]} <!-- ${ALLOW_MARKER} -->`), [])
  })

  it("leaves alone what memories usually hold", () => {
    const harmless = [
      "The AWS docs use AKIAIOSFODNN7EXAMPLE and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY as examples",
      "password: <your password>",
      "password = ${DB_PASSWORD}",
      "password: $PGPASSWORD",
      "api_key = process.env.API_KEY",
      "apiKey: Config.redacted(\"API_KEY\")",
      "secret: os.environ[\"SECRET\"]",
      "token: required",
      "password: see 1Password, vault item 'staging db'",
      "The password is rotated every 90 days; ask #infra.",
      "password: ********",
      "password=changeme",
      "api_key: your_api_key_here",
      "privateKey: NonSharedBuffer",
      "readonly privateKey: Redacted.Redacted<Uint8Array>",
      "pbkdf2(password: Uint8Array, salt: Uint8Array)",
      "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
      "request id 123e4567-e89b-12d3-a456-426614174000",
      "run `npm run task-list` and sk-learn for the model",
      "eyJhbGciOiJIUzI1NiJ9 alone is just a base64 header",
      `not a JWT: eyJ${alnum(20)}.eyJ${alnum(20)}.${alnum(30)}`,
      "postgres://app@db.internal:5432/app (password from the pgpass file)",
      "https://user:password@example.com is the form, with your own values",
      "pk_live_ keys are publishable, not secret",
      "-----BEGIN PUBLIC KEY-----",
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx3dGx3dGx3dGx3dGx3dGx3dGx3dGx3dGx3 alex@laptop"
    ]
    for (const line of harmless) assert.deepStrictEqual(scanSecrets(line), [], line)
  })

  it("token-like strings need their exact shape (length, prefix), not just a prefix", () => {
    assert.deepStrictEqual(scanSecrets(`${"gh" + "p_"}short`), [])
    assert.deepStrictEqual(scanSecrets(`${"AK" + "IA"}TOOSHORT`), [])
    assert.deepStrictEqual(scanSecrets(`${"sk_" + "live_"}abc`), [])
    assert.deepStrictEqual(scanSecrets(`${"xo" + "xb-"}notdigits`), [])
  })

  it("never throws, and an excerpt never holds more than 4 characters of the match", () => {
    FastCheck.assert(FastCheck.property(FastCheck.string({ unit: "binary", maxLength: 400 }), (text) => {
      for (const f of scanSecrets(text)) {
        assert.isAtMost(f.excerpt.replace("…", "").length, 4)
        assert.isAtLeast(f.line, 1)
      }
    }))
  })

  it("finds a generated GitHub token wherever it is embedded in prose", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.stringMatching(/^[A-Za-z0-9]{36}$/),
        FastCheck.array(FastCheck.constantFrom("the", "token", "is", "for", "CI", "—", ":", "`"), { maxLength: 6 }),
        (body, words) => {
          const line = [...words, `${"gh" + "p_"}${body}`, ...words].join(" ")
          assert.include(scanSecrets(line).map((f) => f.pattern), "github-token")
        }
      )
    )
  })
})
