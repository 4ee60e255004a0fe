#!/usr/bin/env bash
# Prints a port for a test's TCP rendezvous (MASTER_PORT): random, and below the kernel's
# ephemeral range, so that it cannot already be the local end of one of the many connections the
# tests open (a port drawn from 20000-49999 collided with one: "Address already in use").
#   MASTER_PORT=$(bash master_port.sh)
set -euo pipefail
read -r low _ </proc/sys/net/ipv4/ip_local_port_range
floor=10000
((low > floor + 1000)) || {
  echo "master_port.sh: the ephemeral range starts at $low; expected above $((floor + 1000))" >&2
  exit 1
}
echo $((floor + RANDOM % (low - floor)))
