#!/usr/bin/env bash
# Everything hackaudit needs on a fresh Debian machine, idempotent: uv and the locked venv, a Docker
# engine (installed and started when none answers), the locally built base images, and a headless
# Chromium for the report tests. Exits non-zero with a clear message when something cannot be made
# available. What is already there costs nothing: a package is installed only when its command is
# missing (all missing ones in one apt call), and a base image only when its tag is missing.
# `--tests` also builds what only the tests need (the bullseye base image).
set -euo pipefail
for_tests=""
[ "${1:-}" = "--tests" ] && for_tests=1
cd "$(dirname "$0")/.."

say() { printf '[setup %4ss] %s\n' "$SECONDS" "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  if [ -z "${_apt_updated:-}" ]; then as_root apt-get update -qq; _apt_updated=1; fi
  # needrestart (when installed) would scan every process after each install: nothing to restart here
  DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 as_root \
    apt-get install -y -qq "$@" >/dev/null
}

# 1. Python environment from the lock file.
if ! command -v uv >/dev/null 2>&1; then
  say "installing uv"
  python3 -m pip install --quiet uv || die "could not install uv with pip"
fi
say "syncing .venv from uv.lock"
uv sync --frozen --quiet || die "uv sync failed"

# 2. The Debian packages whose command is missing, in one apt call: a Docker engine (containers run
# with --network none, so it needs no bridge), docker-compose (the deploy tests check
# deploy/compose.yaml with it; Debian ships v1, which needs no network bridge to validate a file),
# debootstrap for the base images, and a headless browser (the tests render report.html in it).
missing=()
if ! docker info >/dev/null 2>&1 && ! command -v dockerd >/dev/null 2>&1; then
  missing+=(docker.io)
fi
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  apt_install "${missing[@]}" || die "could not install ${missing[*]}"
fi

# 3. A running Docker engine.
if ! docker info >/dev/null 2>&1; then
  say "starting dockerd (--bridge=none --iptables=false)"
  mkdir -p /var/log
  nohup dockerd --bridge=none --iptables=false >/var/log/hackaudit-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 \
    || die "no Docker engine answers; see /var/log/hackaudit-dockerd.log"
fi

# 4. The base images, built from Debian packages (no registry can be reached): bookworm, which
# every example task starts from, and for the tests bullseye (Python 3.9), which the tests of tasks
# on an older Python start from. A debootstrap waits mostly on the mirror, so both run at once.
if [ -n "$for_tests" ]; then
  bullseye_log=$(mktemp)
  HACKAUDIT_BASE_SUITE=bullseye bash scripts/base-image.sh >"$bullseye_log" 2>&1 &
  bullseye_pid=$!
fi
base=$(bash scripts/base-image.sh) || die "the base image could not be built"
say "base image $base ready"
if [ -n "$for_tests" ]; then
  wait "$bullseye_pid" || { cat "$bullseye_log" >&2; die "the bullseye base image could not be built"; }
  say "base image $(tail -n 1 "$bullseye_log") ready"
  rm -f "$bullseye_log"
fi
