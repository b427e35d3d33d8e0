#!/usr/bin/env bash
# Set up (scripts/setup.sh), start a throwaway PostgreSQL on loopback for the scale tests, check
# lint and formatting, and run the test suite. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

export LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true LANGSMITH_TRACING=false
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

pg_pid_file=""
cleanup() { [[ -n "$pg_pid_file" && -f scripts/start_postgres.sh ]] && bash scripts/start_postgres.sh --stop >/dev/null 2>&1 || true; }
trap cleanup EXIT
if [[ -z "${REFGATE_TEST_POSTGRES_URL:-}" && -f scripts/start_postgres.sh ]]; then
  if url=$(bash scripts/start_postgres.sh); then
    export REFGATE_TEST_POSTGRES_URL="$url"; pg_pid_file=started
  else
    echo "[test] PostgreSQL could not start; the Postgres tests will be skipped" >&2
  fi
fi

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -ra "$@"
