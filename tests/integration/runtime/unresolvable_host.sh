#!/usr/bin/env bash
# Runs COMMAND on a host whose own name does not resolve, as in a minimal image or chroot whose
# /etc/hosts lacks it (scripts/demo in a fresh debootstrap'd chroot ended with "dtrain: net: cannot
# resolve vm:46647"): new UTS and mount namespaces, the host name dtrain-unresolvable-host, an
# /etc/hosts with localhost only and a name server that answers nothing. The ranks of one host
# must reach each other anyway (through the loopback: net::connectable).
#   unresolvable_host.sh COMMAND...
set -euo pipefail
name=dtrain-unresolvable-host
work=$(mktemp -d "${TMPDIR:-/tmp}/dtrain-unresolvable.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '127.0.0.1 localhost\n::1 localhost\n' >"$work/hosts"
printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$work/resolv.conf"
export DTRAIN_UNRESOLVABLE_WORK=$work DTRAIN_UNRESOLVABLE_NAME=$name
exec unshare --uts --mount --fork bash -c '
  set -euo pipefail
  hostname "$DTRAIN_UNRESOLVABLE_NAME"
  mount --bind "$DTRAIN_UNRESOLVABLE_WORK/hosts" /etc/hosts
  mount --bind "$DTRAIN_UNRESOLVABLE_WORK/resolv.conf" /etc/resolv.conf
  if getent hosts "$DTRAIN_UNRESOLVABLE_NAME" >/dev/null; then
    echo "unresolvable_host: FAIL: $DTRAIN_UNRESOLVABLE_NAME resolves; the test would prove nothing" >&2
    exit 1
  fi
  exec "$@"' unresolvable_host "$@"
