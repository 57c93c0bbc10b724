#!/usr/bin/env bash
# What the shared-state tests need, installed once: the Debian package
# redis-server (the tests start their own on 127.0.0.1 with an OS-picked port,
# never the system service), and the Redis client a user adds to their profile
# (@redis/client, from the committed lockfile under e2e/redis), cached outside
# the clone under a key made of that lockfile. Prints the client's directory
# (its node_modules holds @redis/client).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "ensure-redis: $*" >&2; }

if ! command -v redis-server >/dev/null; then
  log "installing redis-server"
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >&2
fi

cache=${DSH_RESILIENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsh-resilience}
key=$(cat "$root/e2e/redis/package.json" "$root/e2e/redis/package-lock.json" | sha256sum | cut -c1-16)
dir="$cache/redis-client-$key"
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi
mkdir -p "$cache"
exec 9>"$dir.lock"
flock 9 # one install at a time (see ensure-host.sh)
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi
tmp="$dir.partial.$$"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp "$root/e2e/redis/package.json" "$root/e2e/redis/package-lock.json" "$tmp/"
(cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >&2)
touch "$tmp/.complete"
rm -rf "$dir"; mv "$tmp" "$dir"; trap - EXIT
echo "$dir"
