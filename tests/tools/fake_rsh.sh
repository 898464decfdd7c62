#!/bin/sh
# Stands in for ssh in hooprun's tests (HOOP_RSH="/bin/sh fake_rsh.sh"): called as
# `fake_rsh.sh HOST SCRIPT`, it runs SCRIPT with a local shell, as sshd would run it in the
# login shell on HOST. FAKE_RSH_HOST tells the rank which host it was "started" on, and
# FAKE_RSH_LOG, when set, collects every command line so tests can check what ps would show.
host=$1
shift
if [ -n "$FAKE_RSH_LOG" ]; then
  printf '%s %s\n' "$host" "$*" >>"$FAKE_RSH_LOG"
fi
FAKE_RSH_HOST=$host
export FAKE_RSH_HOST
cd "${HOME:-/}" || exit 255
exec /bin/sh -c "$*"
