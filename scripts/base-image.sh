#!/usr/bin/env bash
# Builds the base image every task image starts from, without any container registry:
# debootstrap a minimal Debian into a folder, add a non-root user, and `docker import` it.
# The tag is a hash of this recipe, so a changed recipe builds a new image and an unchanged one
# is never rebuilt. Prints the tag on stdout.
# HACKAUDIT_BASE_COMPILER=1 builds the base for repositories that compile extensions when they are
# installed (C sources, Cython): the same packages plus a C compiler and the Python headers.
# It is its own image (tag `<suite>-compiler-<hash>`), built only when such a task needs it.
set -euo pipefail

suite="${HACKAUDIT_BASE_SUITE:-bookworm}"
packages="python3,python3-venv,python3-pip,git,patch,ca-certificates,procps"
variant=""
if [ "${HACKAUDIT_BASE_COMPILER:-0}" = "1" ]; then
  packages="$packages,gcc,libc6-dev,python3-dev"
  variant="-compiler"
fi
recipe_hash=$( { cat "$0"; echo "$suite $packages"; } | sha256sum | cut -c1-12)
tag="hackaudit/base:${suite}${variant}-${recipe_hash}"

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi

# The Debian mirror this machine's apt already uses (no host is named here).
mirror=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
           /etc/apt/sources.list.d/*.list 2>/dev/null \
         | grep -v -- '-security' | head -n 1 | sed -E 's/^URIs: *//; s/^deb (\[[^]]*\] )?//; s/ .*//' || true)
[ -n "$mirror" ] || { echo "base-image: no Debian mirror found in apt's sources" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "base-image: debootstrap is not installed" >&2; exit 1; }

work=$(mktemp -d /var/tmp/hackaudit-rootfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "base-image: debootstrap $suite into $work (a few minutes)" >&2
debootstrap --variant=minbase --include="$packages" "$suite" "$work/rootfs" "$mirror" >"$work/log" 2>&1 \
  || { tail -n 30 "$work/log" >&2; echo "base-image: debootstrap failed" >&2; exit 1; }
chroot "$work/rootfs" useradd --create-home --uid 1000 --shell /bin/bash runner
chroot "$work/rootfs" apt-get clean
rm -rf "$work/rootfs/var/lib/apt/lists/"*
tar -C "$work/rootfs" -c . | docker import \
  --change 'ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PIP_NO_INDEX=1' \
  --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "$tag"
