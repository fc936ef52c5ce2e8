#!/usr/bin/env bash
# Posts rab's answer (RESULT_FILE) as a comment on pull request PR_NUMBER.
set -euo pipefail
# The file is in rab's schema or Claude Code's (action.yml, output-schema).
if [ ! -s "${RESULT_FILE:-}" ] || [ -z "$(jq -r '(.result // "") + (.error // "") + ((.errors // []) | join("; "))' "$RESULT_FILE" 2>/dev/null)" ]; then
  echo "rab: nothing to post (no answer and no error in ${RESULT_FILE:-the result file}); no comment"
  exit 0
fi
: "${GITHUB_TOKEN:?a token with pull-requests: write is needed to comment}"
: "${PR_NUMBER:?not a pull request}"
: "${GITHUB_REPOSITORY:?}"
api="${GITHUB_API_URL:-https://api.github.com}"
body="$(jq --arg code "${EXIT_CODE:-}" '{body: ("**rab**\n\n"
  + (if (.result // "") != "" then .result
     else ("rab stopped: " + (.error // ((.errors // []) | join("; ")))) end)
  + "\n\n<sub>exit " + ((.exitCode // $code) | tostring) + " · $"
  + ((((.total_cost_usd // ((.costUsd // 0) + (.subAgents.costUsd // 0))) * 10000 | round) / 10000)
     | tostring) + "</sub>")}' "${RESULT_FILE:?}")"
curl --fail --silent --show-error \
  -X POST "$api/repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" \
  -H "Authorization: Bearer $GITHUB_TOKEN" \
  -H "Accept: application/vnd.github+json" \
  -H "Content-Type: application/json" \
  --data "$body" > /dev/null
echo "rab: commented on #$PR_NUMBER"
