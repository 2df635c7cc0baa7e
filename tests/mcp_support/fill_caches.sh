#!/usr/bin/env bash
# Fills the package managers' caches that tests/mcp_readme.rs starts MCP
# servers from, the way the servers' READMEs say (`npx -y PKG`, `uvx PKG`),
# so those tests run offline (`npm_config_offline`, `UV_OFFLINE`) in a fresh
# HOME: target/mcp-servers/npm-cache (npx), target/mcp-servers/uv-cache
# (uvx) and uv itself (PyPI) in target/mcp-servers/uv. Needs the registries
# once; called by tests/setup.sh and by the tests on first use.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck disable=SC1091
. tests/mcp_support/servers.env
dir="$PWD/target/mcp-servers"
mkdir -p "$dir"
if [ ! -x "$dir/uv/bin/uvx" ]; then
  [ -x "$dir/uv/bin/pip" ] || python3 -m venv "$dir/uv"
  "$dir/uv/bin/pip" install -q "$UV_PKG"
fi
for pkg in "$FS_PKG" "$EVERYTHING_PKG"; do
  mark="$dir/npm-cache/.filled-$(printf '%s' "$pkg" | tr '/@' '__')"
  if [ ! -f "$mark" ]; then
    # The server starts, sees stdin closed and exits 0.
    npm_config_cache="$dir/npm-cache" npm_config_update_notifier=false \
      npx -y "$pkg" </dev/null >/dev/null
    touch "$mark"
  fi
done
mark="$dir/uv-cache/.filled-$TIME_PKG"
if [ ! -f "$mark" ]; then
  UV_CACHE_DIR="$dir/uv-cache" UV_PYTHON_DOWNLOADS=never \
    "$dir/uv/bin/uvx" "mcp-server-time@${TIME_PKG#*==}" --help >/dev/null
  touch "$mark"
fi
