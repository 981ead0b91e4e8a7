#!/usr/bin/env bash
# Builds the hackaudit services image, hackaudit/services:<hash> (also tagged :latest), from the
# local base image (scripts/base-image.sh) without any network inside the build:
#   1. on the host: `uv export` of the lock -> pinned, hashed requirements for CPython 3.11 Linux;
#   2. on the host: `pip download` of those as manylinux x86_64 wheels into a wheelhouse kept in
#      ~/.cache/hackaudit/service-wheels (only what is missing is fetched);
#   3. on the host: `uv build` of the project's own wheels (every workspace member);
#   4. `docker build --network none` of deploy/Dockerfile, which installs all of it into /opt/venv.
# <hash> covers the lock, the project's sources, the Dockerfile, these scripts and the base image,
# so an unchanged tree is never rebuilt. Prints the tag on stdout; progress goes to stderr.
#
# Environment: HACKAUDIT_PIP_PYTHON (host python3 with pip, default python3),
#              HACKAUDIT_SERVICE_WHEELS (the wheelhouse, default ~/.cache/hackaudit/service-wheels),
#              HACKAUDIT_BASE_IMAGE (a base image tag to use instead of running scripts/base-image.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
python="${HACKAUDIT_PIP_PYTHON:-python3}"
cache="${HACKAUDIT_SERVICE_WHEELS:-$HOME/.cache/hackaudit/service-wheels}"
repository="hackaudit/services"
say() { echo "build-image: $*" >&2; }
started=$SECONDS

for tool in uv docker "$python"; do
  command -v "$tool" >/dev/null || { say "$tool is not installed"; exit 1; }
done

base="${HACKAUDIT_BASE_IMAGE:-$(bash "$root/scripts/base-image.sh")}"
docker image inspect "$base" >/dev/null 2>&1 || { say "base image $base is not there"; exit 1; }

# The project's sources: each member's pyproject.toml, README.md and src/ (what its wheel holds).
source_files() {
  cd "$root"
  local pattern='^((shared|analysis|services/[^/]+)/)?(pyproject\.toml|README\.md|src/.*)$'
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # tracked and untracked files alike, minus what .gitignore excludes (caches, build output)
    git ls-files --cached --others --exclude-standard | grep -E "$pattern"
  else
    find pyproject.toml README.md src shared analysis services -type f \
      ! -path '*/__pycache__/*' ! -name '*.pyc' | grep -E "$pattern"
  fi | sort -u
}

inputs_hash=$(
  cd "$root"
  {
    echo "base $base"
    sha256sum uv.lock deploy/Dockerfile deploy/build-image.sh deploy/requirements.py
    source_files | while IFS= read -r file; do [ -f "$file" ] && sha256sum "$file"; done
  } | sha256sum | cut -c1-12
)
tag="$repository:$inputs_hash"

if docker image inspect "$tag" >/dev/null 2>&1; then
  docker tag "$tag" "$repository:latest"
  say "$tag is up to date ($((SECONDS - started))s)"
  echo "$tag"
  exit 0
fi

mkdir -p "$cache/wheels"
exec 9>"$cache/.lock"
flock 9  # one build at a time shares the wheelhouse

context=$(mktemp -d /var/tmp/hackaudit-services-image.XXXXXX)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/wheels" "$context/project"

say "exporting the lock"
(cd "$root" && uv export --frozen --all-packages --no-dev --no-emit-workspace --quiet) \
  | "$python" "$root/deploy/requirements.py" filter >"$context/requirements.txt"

# Every manylinux tag the base image's glibc (2.36) accepts, newest first, and the legacy aliases.
platforms=()
for minor in $(seq 36 -1 5); do platforms+=(--platform "manylinux_2_${minor}_x86_64"); done
platforms+=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64
            --platform manylinux1_x86_64)

stamp="$cache/.complete-$(sha256sum "$context/requirements.txt" | cut -c1-16)"
if [ -f "$stamp" ]; then
  say "wheelhouse already holds every pinned wheel"
else
  say "downloading wheels into $cache/wheels (only the missing ones)"
  "$python" -m pip download --quiet --disable-pip-version-check \
    --dest "$cache/wheels" --requirement "$context/requirements.txt" \
    --no-deps --only-binary=:all: --implementation cp --python-version 3.11 --abi cp311 \
    "${platforms[@]}" >&2
  touch "$stamp"
fi
"$python" "$root/deploy/requirements.py" select "$context/requirements.txt" "$cache/wheels" \
  | while IFS= read -r wheel; do
      ln "$wheel" "$context/wheels/" 2>/dev/null || cp "$wheel" "$context/wheels/"
    done

say "building the project's wheels"
(cd "$root" && uv build --all-packages --wheel --quiet --out-dir "$context/project") >&2

cp "$root/deploy/Dockerfile" "$context/Dockerfile"
say "docker build $tag (no network)"
docker build --quiet --network none --build-arg "BASE_IMAGE=$base" \
  --label "org.hackaudit.inputs=$inputs_hash" --label "org.hackaudit.base=$base" \
  --tag "$tag" --tag "$repository:latest" "$context" >&2
say "built $tag in $((SECONDS - started))s"
echo "$tag"
