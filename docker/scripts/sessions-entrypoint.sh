#!/bin/sh
# Replica k of the sessions StatefulSet is shard k. Kubernetes names its pods <name>-<ordinal>, so the
# shard is the number after the last dash of the pod name, unless SHARD_INDEX is set explicitly
# (docker compose, or the chart's downward-API label on clusters that have it).
set -eu
if [ -z "${SHARD_INDEX:-}" ]; then
  pod="${POD_NAME:-$(hostname)}"
  ordinal="${pod##*-}"
  case "$ordinal" in
    ''|*[!0-9]*)
      echo "sessions: cannot derive SHARD_INDEX from pod name \"$pod\" (expected <name>-<ordinal>); set SHARD_INDEX" >&2
      exit 1
      ;;
  esac
  SHARD_INDEX="$ordinal"
  export SHARD_INDEX
fi
exec "$@"
