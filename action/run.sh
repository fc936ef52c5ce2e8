#!/usr/bin/env bash
# Runs one prompt headless for the GitHub Action (action.yml) and writes its outputs:
# result, cost-usd, exit-code, session-id, result-file. Inputs arrive as INPUT_*.
# The result file is in Claude Code's schema unless output-schema is rab; the outputs
# are read from either.
# Multi-value inputs (allowed-tools, disallowed-tools, args) are one item per line and
# are never split on spaces or expanded as globs: `bash(cargo test:*)` arrives whole.
#
# A pull request from a fork runs untrusted (INPUT_TRUST=auto): the checkout's hooks, MCP
# servers, allow rules and widening settings are ignored, and commands run in the
# sandbox (workspace-write). See docs/ci.md for why.
set -euo pipefail
rab="${RAB_BIN:-rab}"
prompt="${INPUT_PROMPT:?the prompt input is required}"
work="${RUNNER_TEMP:-$(mktemp -d)}"
result_file="$work/rab-result.json"

# Is this run for code from outside the repository?
from_fork() {
  case "${GITHUB_EVENT_NAME:-}" in
    pull_request|pull_request_target|pull_request_review|pull_request_review_comment) ;;
    *) return 1 ;;
  esac
  [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] || return 0
  local head
  head="$(jq -r '.pull_request.head.repo.full_name // ""' "$GITHUB_EVENT_PATH")"
  [ "$head" != "${GITHUB_REPOSITORY:-}" ]
}

trusted=false
case "${INPUT_TRUST:-auto}" in
  always) trusted=true ;;
  never) trusted=false ;;
  auto) if from_fork; then trusted=false; else trusted=true; fi ;;
  *) echo "rab: trust must be auto, always or never, not '${INPUT_TRUST}'" >&2; exit 2 ;;
esac

case "${INPUT_OUTPUT_SCHEMA:-claude}" in
  claude|rab) ;;
  *) echo "rab: output-schema must be claude or rab, not '${INPUT_OUTPUT_SCHEMA}'" >&2; exit 2 ;;
esac
args=(-p --output-format json --output-compat "${INPUT_OUTPUT_SCHEMA:-claude}"
  --permission-mode "${INPUT_PERMISSION_MODE:-accept-edits}")
[ -n "${INPUT_MODEL:-}" ] && args+=(--model "$INPUT_MODEL")
[ -n "${INPUT_PROVIDER:-}" ] && args+=(--provider "$INPUT_PROVIDER")
[ -n "${INPUT_MAX_TURNS:-}" ] && args+=(--max-turns "$INPUT_MAX_TURNS")
[ -n "${INPUT_MAX_BUDGET_USD:-}" ] && args+=(--max-budget-usd "$INPUT_MAX_BUDGET_USD")
if [ "$trusted" = true ]; then
  args+=(--trust-project)
else
  # Untrusted code: nothing of the checkout's runs, and commands stay in the sandbox.
  export RAB_TRUST_PROJECT=0
  args+=(--sandbox workspace-write)
  echo "rab: running untrusted (pull request from a fork): the checkout's hooks, MCP servers and allow rules are ignored" >&2
fi
# Each non-blank line of "$1", trimmed, as one element of the array named "$2".
lines_into() {
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    if [ -n "$line" ]; then eval "$2+=(\"\$line\")"; fi
  done <<< "$1"
}
rules=()
lines_into "${INPUT_ALLOWED_TOOLS:-}" rules
for rule in ${rules[@]+"${rules[@]}"}; do args+=(--allowed-tools "$rule"); done
rules=()
lines_into "${INPUT_DISALLOWED_TOOLS:-}" rules
for rule in ${rules[@]+"${rules[@]}"}; do args+=(--disallowed-tools "$rule"); done
extra=()
lines_into "${INPUT_ARGS:-}" extra
args+=(${extra[@]+"${extra[@]}"})

set +e
"$rab" "${args[@]}" "$prompt" < /dev/null > "$result_file"
code=$?
set -e

# rab prints a result object for every exit; should one still be missing (rab was
# killed, or is not there), write one so the outputs and the comment say what happened.
if ! { [ -s "$result_file" ] && jq -e '.type == "result"' "$result_file" > /dev/null 2>&1; }; then
  last="$(tail -n 1 "$result_file" 2>/dev/null || true)"
  if [ -n "$last" ] && printf '%s' "$last" | jq -e '.type == "result"' > /dev/null 2>&1; then
    printf '%s\n' "$last" > "$result_file"
  else
    jq -n --argjson code "$code" '{type: "result", status: "error", isError: true,
      exitCode: $code, result: "", error: ("rab printed no result (exit \($code)); see the step log"),
      sessionId: null, costUsd: 0}' > "$result_file"
  fi
fi
# Either schema: rab's (result, error, costUsd + subAgents.costUsd, sessionId) or
# Claude Code's (result, errors, total_cost_usd, session_id).
result="$(jq -r 'if (.result // "") != "" then .result
  else (.error // ((.errors // []) | join("; "))) end' "$result_file")"
if [ -z "$result" ]; then
  result="(rab exited with $code and gave no answer)"
fi
cost="$(jq -r '((.total_cost_usd // ((.costUsd // 0) + (.subAgents.costUsd // 0))) * 10000
  | round) / 10000' "$result_file")"
session="$(jq -r '.sessionId // .session_id // ""' "$result_file")"
out="${GITHUB_OUTPUT:-/dev/stdout}"
delimiter="rab_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
{
  echo "exit-code=$code"
  echo "cost-usd=$cost"
  echo "session-id=$session"
  echo "result-file=$result_file"
  echo "result<<$delimiter"
  printf '%s\n' "$result"
  echo "$delimiter"
} >> "$out"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  { echo "### rab"; echo; printf '%s\n' "$result"; echo; echo "exit $code · \$$cost"; } >> "$GITHUB_STEP_SUMMARY"
fi
if [ "$code" -ne 0 ] && [ "${INPUT_FAIL_ON_ERROR:-true}" = true ]; then
  echo "rab exited with $code (docs/stream-json.md lists the codes)" >&2
  exit "$code"
fi
