#!/bin/sh
# One Postgres login role per service, with rights on that service's schema only.
#
# Runs (1) as the chart's hook Job before every install/upgrade with an external database, (2) from the
# bundled Postgres' /docker-entrypoint-initdb.d on its first start, (3) in docker compose. It is
# idempotent: rerunning it changes nothing but the passwords (rotation).
#
# Connection: the libpq variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE) of an
#   administrator; in the Postgres image's init phase POSTGRES_USER / POSTGRES_DB and the local socket.
# Input: BNS_DB_SERVICES   the services that own a schema (default: sessions jobs templates dashboard)
#        BNS_DB_ROLE_PREFIX role name = prefix + service (default: bns_)
#        BNS_DB_PASSWORD_<SERVICE>  each role's password (read by psql from the environment, never
#                           put on a command line where `ps` would show it)
#
# Each service runs `CREATE SCHEMA IF NOT EXISTS <schema>` at start, and Postgres checks the database's
# CREATE privilege before it looks whether the schema exists: so each role gets CREATE on the database
# (it may add schemas of its own), owns its schema, and has no right at all on the other services'
# schemas nor on `public`.
set -eu

services="${BNS_DB_SERVICES:-sessions jobs templates dashboard}"
prefix="${BNS_DB_ROLE_PREFIX:-bns_}"
export PGUSER="${PGUSER:-${POSTGRES_USER:-postgres}}"
export PGDATABASE="${PGDATABASE:-${POSTGRES_DB:-$PGUSER}}"
wait_s="${BNS_DB_WAIT_S:-300}"

waited=0
until pg_isready -q; do
  if [ "$waited" -ge "$wait_s" ]; then
    echo "db-roles: Postgres (${PGHOST:-local socket}:${PGPORT:-5432}) not ready after ${wait_s} s" >&2
    exit 1
  fi
  sleep 2
  waited=$((waited + 2))
done

for svc in $services; do
  case "$svc" in
    *[!a-z_]*|'') echo "db-roles: invalid service name \"$svc\"" >&2; exit 1 ;;
  esac
  var="BNS_DB_PASSWORD_$(echo "$svc" | tr 'a-z' 'A-Z')"
  if [ -z "$(printenv "$var" || true)" ]; then
    echo "db-roles: $var is not set" >&2
    exit 1
  fi
  psql -X -q -v ON_ERROR_STOP=1 -v role="$prefix$svc" -v schema="$svc" -v pwvar="$var" <<'SQL'
\getenv password :pwvar
SELECT current_database() AS db \gset
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec
ALTER ROLE :"role" WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'password';
ALTER ROLE :"role" IN DATABASE :"db" SET search_path = :"schema";
GRANT CONNECT, CREATE ON DATABASE :"db" TO :"role";
CREATE SCHEMA IF NOT EXISTS :"schema" AUTHORIZATION :"role";
ALTER SCHEMA :"schema" OWNER TO :"role";
REVOKE ALL ON SCHEMA :"schema" FROM PUBLIC;
SQL
  echo "db-roles: role $prefix$svc owns schema $svc"
done

# Postgres 15+ already denies this by default; older servers (and upgraded clusters) do not.
psql -X -q -v ON_ERROR_STOP=1 -c 'REVOKE CREATE ON SCHEMA public FROM PUBLIC'
echo "db-roles: done"
