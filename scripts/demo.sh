#!/usr/bin/env bash
# memdir in one minute: write → prompt → recall (with staleness) → ls → doctor, on a scratch project and a
# scratch MEMDIR_HOME under a temp directory. Your real ~/.memdir is never touched.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
memdir() { node "$here/apps/cli/dist/memdir.js" "$@"; }
# bold headings on a terminal only, and never with NO_COLOR set (https://no-color.org): piped or redirected, the
# output is plain text
if [[ -t 1 && -z "${NO_COLOR:-}" ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
# an argument as you would type it: as is, or in the quotes that keep the shell from splitting or expanding it
quoted() {
  if [[ "$1" =~ ^[A-Za-z0-9_./:=,+-]+$ ]]; then printf '%s' "$1"
  elif [[ "$1" != *[\\\"\$\`!]* ]]; then printf '"%s"' "$1"
  elif [[ "$1" != *"'"* ]]; then printf "'%s'" "$1"
  else printf '%q' "$1"; fi
}
# prints `$ memdir ARGS…` (each argument quoted as typed), then a note if one follows `--`
say() {
  local line="$ memdir" note=""
  while (($#)); do
    if [[ "$1" == "--" ]]; then shift; note="   $*"; break; fi
    line+=" $(quoted "$1")"
    shift
  done
  printf '\n%s%s%s%s\n' "$bold" "$line" "$plain" "$note"
}
# says the command, then runs it
step() { say "$@"; memdir "$@"; }

scratch="$(mktemp -d "${TMPDIR:-/tmp}/memdir-demo.XXXXXX")"
export MEMDIR_HOME="$scratch/home"
unset MEMDIR_MEMORY_DIR MEMDIR_DISABLE_AUTO_MEMORY
# the demo shows the offline default: no model is called even when you have a key set
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
project="$scratch/myapp"
mkdir -p "$project/src"
git -C "$project" init -q
printf 'export const pool = createPool({ max: 10 })\n' > "$project/src/db.ts"
cd "$project"
echo "scratch project: $project   (MEMDIR_HOME=$MEMDIR_HOME)"

step path

say write --type feedback --name "Testing policy" \
  --description "Integration tests must hit a real database, never mocks" -- "(the body on stdin)"
memdir write --type feedback --name "Testing policy" \
  --description "Integration tests must hit a real database, never mocks" <<'BODY'
Integration tests run against the real Postgres in docker-compose, never a mocked client.

**Why:** in 2026-Q1 mocked tests passed while a broken migration shipped to production.

**How to apply:** whenever adding or changing a test under tests/integration/.
BODY

# pretend this one was written 40 days ago: ls shows its age and recall flags it as a hypothesis to verify
forty_days_ago="$(node -e 'console.log(new Date(Date.now() - 40 * 86400000).toISOString())')"
step write --type project --name "Connection pool size" \
  --description "DB pool is capped at 10 connections in src/db.ts:1 because of the hosting plan" \
  --body "The pool max is 10 (src/db.ts:1), chosen on ${forty_days_ago%%T*} for the Hobby plan's 20-connection limit."
# memdir counts a memory's age from the `modified:` stamp every write puts in its header (docs/file-format.md,
# "Age and staleness"), so that stamp goes back 40 days, and the file's mtime with it: the file as it would be had
# this write happened 40 days ago
node -e '
const fs = require("fs")
const [file, at] = process.argv.slice(1)
fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/^modified: .*$/m, `modified: ${at}`))
fs.utimesSync(file, new Date(at), new Date(at))' "$(memdir path)project_connection_pool_size.md" "$forty_days_ago"
echo "(backdated: its modified: stamp and the file's mtime now say ${forty_days_ago%%T*}, 40 days ago)"

step write --type reference --name "Bug tracker" \
  --description "Bugs are tracked in Linear project INGEST; on-call dashboard in Grafana 'api-latency'" \
  --body "Linear project INGEST holds pipeline bugs. Latency dashboard: grafana/d/api-latency."

step ls

say prompt -- "(the system-prompt section a runtime injects; first 25 lines)"
memdir prompt | head -n 25
echo "…"

step recall "can I raise the database connection pool size?"

step recall "should the new integration test mock the database?" --json

say recall "what's the weather like" -- "(nothing relevant: nothing returned)"
memdir recall "what's the weather like"

step doctor

echo
echo "Done. Everything above lives in $scratch — delete it with: rm -rf $scratch"
