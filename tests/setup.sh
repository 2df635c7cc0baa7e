#!/usr/bin/env bash
# The test command (README.md, .ci/run): installs what the tests need, then
# runs `cargo test` with any arguments given (`tests/setup.sh --test all tui_`).
#
# The tests use real components: sshd and ssh on loopback (ssh_exec), tmux
# (the TUI end to end), python3 (code_exec), and the pinned third-party MCP
# servers from npm and PyPI (tests/mcp_support/servers.env), installed into
# target/mcp-servers, and the ACP client SDK and acpx (tests/acp/sdk.env) into
# target/acp-client and target/acpx. As root on a Debian/Ubuntu machine the system packages
# are installed with apt-get; otherwise the script says what to install and
# stops. NAVI_TEST_SETUP=skip runs `cargo test` without checking anything.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${NAVI_TEST_SETUP:-}" != skip ]; then
  need=()
  command -v tmux >/dev/null 2>&1 || need+=(tmux)
  [ -x /usr/sbin/sshd ] || need+=(openssh-server)
  { command -v ssh && command -v ssh-keygen; } >/dev/null 2>&1 || need+=(openssh-client)
  command -v python3 >/dev/null 2>&1 || need+=(python3)
  command -v node >/dev/null 2>&1 || need+=(nodejs)
  command -v npm >/dev/null 2>&1 || need+=(npm)
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends "${need[@]}"
    else
      echo "tests/setup.sh: the tests need these packages, which are missing:" >&2
      echo "  ${need[*]}" >&2
      echo "install them (Debian/Ubuntu: sudo apt-get install ${need[*]})" >&2
      echo "and run tests/setup.sh again, or run as root to install them here." >&2
      echo "(NAVI_TEST_SETUP=skip runs cargo test anyway; tests that need them fail.)" >&2
      exit 1
    fi
  fi

  # The pinned MCP servers, into a project-local cache. A registry that
  # cannot be reached is not fatal: the MCP tests then say they skip.
  # shellcheck disable=SC1091
  . tests/mcp_support/servers.env
  mcp_dir=target/mcp-servers
  mkdir -p "$mcp_dir"
  if [ ! -f "$mcp_dir/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
    npm install --no-audit --no-fund --prefix "$mcp_dir/node" "$FS_PKG" \
      || echo "warning: npm install $FS_PKG failed; MCP filesystem tests will skip" >&2
  fi
  if [ ! -f "$mcp_dir/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]; then
    npm install --no-audit --no-fund --prefix "$mcp_dir/node" "$EVERYTHING_PKG" \
      || echo "warning: npm install $EVERYTHING_PKG failed; MCP HTTP tests will skip" >&2
  fi
  if [ ! -x "$mcp_dir/py/bin/mcp-server-time" ]; then
    { [ -x "$mcp_dir/py/bin/pip" ] || python3 -m venv "$mcp_dir/py"; } \
      && "$mcp_dir/py/bin/pip" install -q "$TIME_PKG" \
      || echo "warning: pip install $TIME_PKG failed; MCP time tests will skip" >&2
  fi
  # uv, and the npx/uvx caches the README-style MCP tests start servers
  # from offline (tests/mcp_readme.rs).
  bash tests/mcp_support/fill_caches.sh \
    || echo "warning: filling the npx/uvx caches failed; the README-style MCP tests will skip" >&2
  # The pinned ACP client SDK (tests/acp.rs), the same way.
  # shellcheck disable=SC1091
  . tests/acp/sdk.env
  if [ ! -f target/acp-client/node_modules/@agentclientprotocol/sdk/package.json ]; then
    npm install --no-audit --no-fund --prefix target/acp-client "$ACP_SDK_PKG" \
      || echo "warning: npm install $ACP_SDK_PKG failed; the navi acp tests will skip" >&2
  fi
  # acpx, a real ACP client, for the end-to-end run (tests/acp_acpx.rs).
  if [ ! -x target/acpx/node_modules/.bin/acpx ]; then
    npm install --no-audit --no-fund --prefix target/acpx "$ACPX_PKG" \
      || echo "warning: npm install $ACPX_PKG failed; the acpx test will skip" >&2
  fi
fi

exec cargo test "$@"
