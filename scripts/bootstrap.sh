#!/usr/bin/env bash
# Everything hackaudit needs on a fresh Debian machine, idempotent: uv and the locked venv, a Docker
# engine (installed and started when none answers), the locally built base image, and a headless
# Chromium for the report tests. Exits non-zero with a clear message when something cannot be made
# available.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  if [ -z "${_apt_updated:-}" ]; then as_root apt-get update -qq; _apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# 1. Python environment from the lock file.
if ! command -v uv >/dev/null 2>&1; then
  say "installing uv"
  python3 -m pip install --quiet uv || die "could not install uv with pip"
fi
say "syncing .venv from uv.lock"
uv sync --frozen --quiet || die "uv sync failed"

# 2. A Docker engine. Containers run with --network none, so the engine needs no bridge.
if ! docker info >/dev/null 2>&1; then
  if ! command -v dockerd >/dev/null 2>&1; then
    say "installing docker.io"
    apt_install docker.io || die "could not install docker.io"
  fi
  if ! docker info >/dev/null 2>&1; then
    say "starting dockerd (--bridge=none --iptables=false)"
    mkdir -p /var/log
    nohup dockerd --bridge=none --iptables=false >/var/log/hackaudit-dockerd.log 2>&1 &
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  fi
  docker info >/dev/null 2>&1 \
    || die "no Docker engine answers; see /var/log/hackaudit-dockerd.log"
fi
# The deploy tests check deploy/compose.yaml with docker-compose (Debian ships v1; it needs no
# network bridge to validate a file).
if ! command -v docker-compose >/dev/null 2>&1; then
  say "installing docker-compose"
  apt_install docker-compose || die "could not install docker-compose"
fi

# 3. The base image, built from Debian packages (no registry can be reached).
if ! command -v debootstrap >/dev/null 2>&1; then
  say "installing debootstrap"
  apt_install debootstrap || die "could not install debootstrap"
fi
base=$(bash scripts/base-image.sh) || die "the base image could not be built"
say "base image $base ready"

# 4. A headless browser: the tests render report.html in it (screenshot and DOM).
if ! command -v chromium >/dev/null 2>&1; then
  say "installing chromium"
  apt_install chromium || die "could not install chromium"
fi
