#!/usr/bin/env bash
# Starts the machine's PostgreSQL (Debian's packaging) and makes sure the test role and
# database exist. Idempotent. Prints the URL the tests use.
set -euo pipefail

PG_PORT=${SLICEHUB_PG_PORT:-5432}
URL="postgres://slicehub:slicehub@127.0.0.1:${PG_PORT}/slicehub_test"

as_postgres() { if [[ $(id -un) == postgres ]]; then "$@"; else runuser -u postgres -- "$@"; fi; }

version=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n1)
[[ -n "$version" ]] || { echo "pg.sh: PostgreSQL is not installed (scripts/setup.sh --test installs it)" >&2; exit 1; }

if ! pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -qx "$version main"; then
  pg_createcluster "$version" main --port "$PG_PORT" >/dev/null
fi
if ! pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $4}' | grep -qx online; then
  pg_ctlcluster "$version" main start
fi
for _ in $(seq 1 50); do
  as_postgres pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
  sleep 0.2
done

as_postgres psql -q -p "$PG_PORT" -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'slicehub') THEN
    CREATE ROLE slicehub LOGIN CREATEDB PASSWORD 'slicehub';
  END IF;
END $$;
SQL
if ! as_postgres psql -p "$PG_PORT" -tAc "SELECT 1 FROM pg_database WHERE datname = 'slicehub_test'" | grep -q 1; then
  as_postgres createdb -p "$PG_PORT" -O slicehub slicehub_test
fi
# Databases the store tests created in earlier runs.
for db in $(as_postgres psql -p "$PG_PORT" -tAc "SELECT datname FROM pg_database WHERE datname LIKE 'slicehub\_test\_%'"); do
  # One still in use (tests running beside this) stays for the next run.
  as_postgres dropdb -p "$PG_PORT" --if-exists "$db" 2>/dev/null || true
done
echo "$URL"
