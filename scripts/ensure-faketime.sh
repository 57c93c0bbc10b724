#!/usr/bin/env bash
# What the clock-step e2e test needs, installed once: Debian's faketime
# package, whose libfaketime (LD_PRELOAD) steps one host process's wall clock
# at run time while leaving its monotonic clock alone, as an NTP correction or
# a resumed VM does. Prints the library's path; prints nothing (and the test
# says it is skipped) where it cannot be installed.
set -uo pipefail
log() { echo "ensure-faketime: $*" >&2; }
find_lib() { ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -1; }

lib=$(find_lib)
if [ -z "$lib" ] && command -v apt-get >/dev/null; then
  log "installing faketime"
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq faketime; } >&2 || log "could not install faketime"
  lib=$(find_lib)
fi
echo "$lib"
