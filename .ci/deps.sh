#!/usr/bin/env bash
# System packages the suites need that a fresh machine lacks. Idempotent and quiet when all is
# there: chromium (Debian's, driven headless by playwright-core in the console and dashboard
# browser tests; Playwright's own browser download does not work on these machines) and nft
# (nftables: the chaos suite's per-peer packet drops inside network namespaces).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v nft >/dev/null 2>&1 || need+=(nftables)
if [ ${#need[@]} -gt 0 ]; then
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
