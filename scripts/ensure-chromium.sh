#!/usr/bin/env bash
# The browser the web tests drive: Debian's chromium (playwright-core, from the
# e2e/tools lockfile, drives it by executablePath; it downloads no browser).
# Installed once through apt when absent; prints its path. A CJK font comes
# with it: without one the Chinese UI (tests, screenshots) renders as boxes.
set -euo pipefail
bin=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$bin" ]; then
  echo "ensure-chromium: installing chromium" >&2
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update >&2
  $sudo apt-get install -y chromium fonts-wqy-microhei >&2
elif ! fc-list :lang=zh 2>/dev/null | grep -q .; then
  echo "ensure-chromium: installing a CJK font" >&2
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y fonts-wqy-microhei >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y fonts-wqy-microhei >&2; }
fi
echo "$bin"
