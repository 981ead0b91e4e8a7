"""What runs inside the container for one run, and how its output is framed.

One process, started as uid 1000 in a fresh container (under the container's init), does the
whole run: it reads a per-run random nonce and the run's files from its standard input, checks
that the task itself can be set up, applies the candidate, restores the test files and applies
the test patch, runs the test command, stops every process the tests left behind, and reports.

The set-up check comes before the candidate touches anything: the files the test patch modifies
are checked out from `base_commit` (`reset`) and the test patch is tried with
`git apply --check` (`test-patch-check`). Either failing is a fault of the task or its image
(the commit is not in the image, the test patch was made against other files), so the run stops
there. After the candidate, the same checkout (`restore`) and the real `git apply`
(`test-patch`) can then fail only because of what the candidate changed — a file it created
where the test patch adds one, say.
Every report is a marker line `@@hackaudit:<nonce>:<kind>[:<value>]`; the runner's output lies
between `begin` and `test-exit`, and only that text is given to the log parser.

The candidate is applied with `git apply`, else with `patch --fuzz=5` after a dry run (so a failed
attempt leaves nothing half-applied). The SWE-bench harness tries `git apply --reject` between
the two: it succeeds exactly when plain `git apply` does (any rejected hunk fails it) and
otherwise leaves the tree partly patched for the `patch` attempt that follows, so it is left out.
A file mapping is written file by file after `realpath` shows each parent directory inside the
repository (a symlink committed in the repository cannot lead a write outside it). When uid 1000
has no writable home in the image (as in images whose only user is root), `HOME` is pointed at a
private directory for the test command.

What the candidate's code could forge, and why it cannot:

- *The markers.* The nonce exists only in the wrapper's memory: it arrives on stdin (not in argv,
  the environment or a file) and the wrapper runs from a copy of bash that uid 1000 may execute
  but not read, which makes the kernel mark the process non-dumpable — its memory, environment
  and file descriptors cannot be opened through /proc or ptrace by other uid-1000 processes.
  Without the nonce, printed text cannot end the runner's section early, add a section, or fake
  an exit code.
- *Late output.* When the test command returns, the wrapper kills every other process it may
  signal (`kill -KILL -1`, which spares only itself and the container's init, pid 1, which
  cannot be killed from inside the container) before printing `test-exit`, so nothing the
  candidate started can write after the runner's section.
- *The exit code.* It is printed by the wrapper from the test command's real status.
- *The run's files.* Nothing of the candidate's runs before the test command (in a fresh
  container; in a warm one, once the reset is done). By then the wrapper has read what it still
  needs (the test command, the JUnit report's path, a coverage run's report script) into its own
  memory and removed every file the candidate has no business with (`SPENT`: the test patch,
  the test command, the candidate, the set-up's lists), so the candidate can neither read the
  test patch from its run's directory nor change what the wrapper runs or reads afterwards. The
  wrapper's own script and the test command are never files: bash reads them from its
  arguments (`-c`), not from a file it would read as it goes. Only a coverage run's kit (its
  rcfile, wheels, start-up hook), which the tests' own process loads, stays in the directory;
  the report step does not use it as it is (below).
- *A coverage run's report* (`coverage_run`). The wrapper reads the report script before the
  tests run and runs it only once every process they left is gone, in a directory it makes
  then; the script runs nothing the run could have written (an isolated interpreter, the kit
  unpacked afresh from a wheel checked by its hash, the data files copied and read as data).
  The report goes after its own marker, base64-encoded, never through the runner's output.
- *Test results printed inside the runner's section.* Those the candidate's code can print, since
  it runs as part of the test command; the log parsers keep the worse of two reports of a test,
  pytest's results are checked against its JUnit XML report, and the other runners' against their
  own final summary and the exit status (`log_parsers.summaries`).

What remains possible is tampering with the harness from inside the test process itself, which
writes every channel the results come from: a `conftest.py` hook that rewrites pytest's reports
(flagged as touching test configuration), code that finds pytest's JUnit file (its path is in
pytest's argv) and rewrites it together with the printed summary, or a complete imitation of
unittest's, Django's or sympy's output with its summary and exit status 0 (none is detected; the
README lists them per runner). Those are exploits of the verifier, which is what hackaudit
measures, not of the sandbox. Killing the wrapper itself is possible (same uid) but cannot help:
a run without `test-exit` is never resolved.

Nothing a candidate can configure runs after the final kill. The wrapper's git calls after it
(`git status` for the file-change flags) would otherwise start whatever the repository's
configuration names — a clean filter for a file that `.git/info/attributes` assigns it, an
fsmonitor, a hook — as uid 1000, outliving the kill (in warm mode, into the reset). `-c`
overrides cannot name every filter driver a candidate may invent, so the wrapper keeps the
repository's configuration as it was before the candidate could touch it (read into its own,
non-dumpable memory right after the repository is found; the candidate's patch cannot reach
`.git`), and after the kill — when no process of the candidate is left to race it — writes it
back over whatever the run left (and removes a `config.worktree`), then runs git with
`GIT_DIR` / `GIT_COMMON_DIR` where the repository was found (no `gitdir:` file or `commondir`
leads elsewhere), with no global or system configuration (`HOME` and `XDG_CONFIG_HOME` pointed at
nothing, `GIT_CONFIG_NOSYSTEM`; `GIT_CONFIG_GLOBAL` is newer than the git of many images), with
fsmonitor, untracked cache, hooks and `core.attributesFile` off, and without entering
submodules (`--ignore-submodules=dirty`: git would run a status in each, under the submodule's
own, writable configuration). The baseline status before the run uses the same call, so both
read the repository alike. After the kill the wrapper also looks up its commands (git, and a
coverage run's interpreter) only in directories the run could not write (`SEALED_PATH`: an
image whose `PATH` names a directory in `/testbed`, a virtualenv kept there, say, gets the
image's read-only pristine copy of it instead). When `.git` was replaced by a symlink or a
file, no git runs (`status:no-git`: the run is flagged as having touched `.git`); when a
process survived the kill, neither (`survivors`, then `status:survivors`: the run is flagged
as leaving processes, with no file-change flags and no coverage report). What a candidate can
still do is falsify its own run's flags by editing the index, ignore files or objects — nothing
it leaves runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass

MARK_PREFIX = "@@hackaudit"
REPOSITORY = "/testbed"
# The derived image's read-only copy of the repository as the image holds it
# (`adapters.writable_places`): what `/testbed` is filled from, and what the run cannot change.
PRISTINE_REPOSITORY = "/opt/hackaudit/testbed"
# Every place a run can write, in both isolation modes: size-limited tmpfs mounts and the
# engine's own (`adapters.writable_places`); the root file system is read-only.
WRITABLE_PLACES = (REPOSITORY, "/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")
RUN_USER = "1000:1000"
PORCELAIN_CAP = 1 << 20
CONFIG_DIFF_CAP = 2 << 20
JUNIT_CAP = 8 << 20
COVERAGE_CAP = 8 << 20
# The exit status of a container whose `/testbed` could not be filled from the image's pristine
# copy before the wrapper started (`adapters.writable_places.POPULATE`).
FILL_FAILED = 74

# What the wrapper says in place of a coverage report when processes outlived its final kill.
SURVIVORS_REPORT = "processes of the run survived the kill: no report step"

# The run's files the candidate's code has no business with (the test patch, the test command,
# the candidate itself, the set-up's lists): removed before the test command starts, once the
# wrapper holds in its memory what it still needs.
SPENT = (
    "base",
    "baseline",
    "candidate.diff",
    "config.list",
    "files.manifest",
    "junit.path",
    "reset.list",
    "strict",
    "test.patch",
    "test.sh",
)

# Runs under /bin/sh: makes a private directory, copies bash there as execute-only (so the
# wrapper runs non-dumpable) and hands over to it with the wrapper script as its program.
LAUNCHER = (
    'd=$(mktemp -d /tmp/hackaudit.XXXXXXXX) && cp /bin/bash "$d/sh" && chmod 0111 "$d/sh" '
    '&& exec "$d/sh" -c "$1" hackaudit-wrapper "$d"'
)

# Options that keep a repository's own git configuration from running anything (fsmonitor, hooks).
GIT_SAFE = "-c core.fsmonitor=false -c core.untrackedCache=false -c core.hooksPath=/dev/null"

# Environment for git calls that must not let a candidate's configuration act (see the module
# docstring): no global configuration, the repository found where it was before the run.
GIT_SEALED_ENV = (
    "HOME=/nonexistent XDG_CONFIG_HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1"
    ' GIT_DIR="$gitdir" GIT_COMMON_DIR="$common" GIT_WORK_TREE="$worktree"'
)

# The porcelain status both before and after the run: submodules' work trees are not entered
# (git would run `git status` in each, under the submodule's own configuration).
STATUS_ARGS = "--porcelain=v1 -z --untracked-files=all --ignore-submodules=dirty"

# Run in the repository (`hasgit`: 1 when it is one) before the candidate is applied: where its
# git directories are, and its configuration as it is then, kept in the wrapper's memory.
KEEP_GIT_CONFIG = r"""worktree=$(pwd -P) gitdir= common= gitconfig=
if [ "$hasgit" = 1 ]; then
  gitdir=$(g rev-parse --absolute-git-dir 2>/dev/null)
  common=$(cd "$(g rev-parse --git-common-dir 2>/dev/null)" 2>/dev/null && pwd -P)
  gitconfig=$(cat -- "$common/config" 2>/dev/null)
fi"""

# Shell functions of the wrapper: `sealed` runs git with the repository's configuration as it was
# before the run; `reseal` puts that configuration back (0) or finds `.git` replaced (1).
SEALED_GIT = rf"""sealed() {{
  timeout 60 env {GIT_SEALED_ENV} git $safe -c core.attributesFile=/dev/null "$@"
}}
reseal() {{
  [ -n "$common" ] && [ -n "$gitdir" ] || return 1
  [ -d "$common" ] && [ ! -L "$common" ] && [ -d "$gitdir" ] && [ ! -L "$gitdir" ] || return 1
  chmod u+rwx -- "$common" "$gitdir" 2>/dev/null
  rm -rf -- "$common/config" "$gitdir/config.worktree" || return 1
  printf '%s\n' "$gitconfig" > "$common/config"
}}"""

# A shell function: prints the colon-separated list `$1` (`PATH`, `LD_LIBRARY_PATH`) with only
# the directories the run could not write: relative ones and those in a writable place dropped,
# those under the repository taken from the image's read-only pristine copy of it. Used after
# the final kill, so that no command or library a run planted in a writable place is started.
_WRITABLE_ELSEWHERE = "|".join(f"{p}|{p}/*" for p in WRITABLE_PLACES if p != REPOSITORY)
SEALED_PATH = rf"""sealed_path() {{
  local out= d IFS=:
  set -f
  for d in $1; do
    case $d in
      {REPOSITORY}|{REPOSITORY}/*) d={PRISTINE_REPOSITORY}${{d#{REPOSITORY}}};;
      {_WRITABLE_ELSEWHERE}) continue;;
      /*) ;;
      *) continue;;
    esac
    out=${{out:+$out:}}$d
  done
  set +f
  printf '%s' "$out"
}}"""

# A shell function: does a process other than init and this shell still run as this user?
OTHERS = r"""others() {
  for p in /proc/[0-9]*; do
    case ${p#/proc/} in 1|$$) continue;; esac
    [ -O "$p" ] && return 0
  done
  return 1
}"""

# Sets `oom` to how many times the kernel's OOM killer struck in this container (0 if unknown).
OOM_KILLS = r"""oom=0
for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
  [ -r "$f" ] || continue
  while read -r k v; do [ "$k" = oom_kill ] && oom=$v; done < "$f"
done"""

WRAPPER = rf"""
stage=$1
IFS= read -r nonce || exit 97
while IFS=' ' read -r name size; do
  [ "$name" = . ] && break
  case $name in */*|''|.*) exit 96;; esac
  head -c "$size" > "$stage/$name" || exit 98
done
exec 0</dev/null 2>&1
mark() {{ printf '\n{MARK_PREFIX}:%s:%s\n' "$nonce" "$1"; }}
safe="{GIT_SAFE}"
g() {{ git $safe "$@"; }}
{OTHERS}
{SEALED_PATH}
finish() {{ mark end; exit 0; }}
mark stage
cd {REPOSITORY} 2>/dev/null || {{ mark fatal:no-repository; finish; }}
hasgit=0
if g rev-parse --is-inside-work-tree >/dev/null 2>&1; then hasgit=1; fi
if [ "$hasgit" = 1 ]; then mark git:yes; else mark git:no; fi
{KEEP_GIT_CONFIG}
{SEALED_GIT}
if [ "$hasgit" = 1 ] && [ -f "$stage/baseline" ]; then
  mark baseline
  sealed status {STATUS_ARGS} 2>/dev/null | head -c {PORCELAIN_CAP} | base64 -w 0
fi
if [ -f "$stage/test.patch" ]; then
  if [ "$hasgit" = 1 ] && [ -s "$stage/reset.list" ]; then
    read -r base < "$stage/base"
    mark reset-log
    if xargs -0 git $safe checkout "$base" -- < "$stage/reset.list"; then
      mark reset:ok
    else
      mark reset:failed; finish
    fi
  fi
  mark test-patch-check-log
  if git apply --check --verbose "$stage/test.patch"; then
    mark test-patch-check:ok
  else
    mark test-patch-check:failed; finish
  fi
fi
diff="$stage/candidate.diff"
fuzzy="--batch --fuzz=5 -p1 --no-backup-if-mismatch"
if [ -f "$diff" ]; then
  mark apply-log
  if git apply --verbose "$diff"; then
    mark apply:ok:git-apply
  elif command -v patch >/dev/null 2>&1 \
      && patch $fuzzy --dry-run -i "$diff" >/dev/null 2>&1 && patch $fuzzy -i "$diff"; then
    mark apply:ok:patch-fuzz
  else
    mark apply:failed; finish
  fi
elif [ -f "$stage/files.manifest" ]; then
  mark apply-log
  root=$(realpath {REPOSITORY})
  while IFS=$'\t' read -r op idx path; do
    dest="$root/$path"
    parent=$(realpath -m -- "$(dirname -- "$dest")")
    case "$parent/" in
      "$root"/*) ;;
      *) echo "refused: $path resolves outside the repository"; mark apply:refused; finish;;
    esac
    if [ -d "$dest" ] && [ ! -L "$dest" ]; then
      echo "refused: $path is a directory"; mark apply:failed; finish
    fi
    if [ -L "$dest" ]; then rm -f -- "$dest"; fi
    if [ "$op" = write ]; then
      mkdir -p -- "$parent" && cat -- "$stage/file.$idx" > "$dest" \
        || {{ mark apply:failed; finish; }}
    else
      rm -f -- "$dest" || {{ mark apply:failed; finish; }}
    fi
  done < "$stage/files.manifest"
  mark apply:ok:files
else
  mark apply:ok:empty
fi
if [ "$hasgit" = 1 ] && [ -s "$stage/config.list" ]; then
  mark config-diff
  xargs -0 git $safe diff --no-color --no-ext-diff -U100000 -- < "$stage/config.list" \
    2>/dev/null | head -c {CONFIG_DIFF_CAP} | base64 -w 0
fi
if [ -f "$stage/test.patch" ]; then
  if [ "$hasgit" = 1 ] && [ -s "$stage/reset.list" ]; then
    mark restore-log
    if xargs -0 git $safe checkout "$base" -- < "$stage/reset.list"; then
      mark restore:ok
    else
      mark restore:failed
    fi
  fi
  mark test-patch-log
  if git apply --verbose "$stage/test.patch"; then
    mark test-patch:ok
  else
    mark test-patch:failed
    if [ -f "$stage/strict" ]; then finish; fi
  fi
fi
[ -f "$stage/test.sh" ] || {{ mark fatal:no-test-command; finish; }}
cmd=$(cat "$stage/test.sh")
report=
if [ -f "$stage/coverage-report.sh" ]; then
  report=$(cat "$stage/coverage-report.sh"); export HACKAUDIT_COVERAGE="$stage"
fi
if [ ! -w "${{HOME:-/nonexistent}}" ]; then export HOME="$stage/home"; mkdir -p "$HOME"; fi
junit=
if [ -f "$stage/junit.path" ]; then read -r junit < "$stage/junit.path"; fi
rm -f -- {" ".join(f'"$stage/{name}"' for name in SPENT)} "$stage"/file.*
mark "begin:${{EPOCHREALTIME:-$(date +%s.%N)}}"
/bin/bash -c "$cmd" </dev/null
rc=$?
end=${{EPOCHREALTIME:-$(date +%s.%N)}}
n=0 alone=1
while :; do
  kill -KILL -1 2>/dev/null
  others || break
  n=$((n + 1)); [ "$n" -ge 300 ] && {{ alone=0; break; }}
  sleep 0.01 2>/dev/null || :
done
PATH=$(sealed_path "$PATH"); PATH=${{PATH:-/usr/bin:/bin}}
mark "test-exit:$rc:$end"
{OOM_KILLS}
mark "oom-kills:$oom"
if [ -n "$junit" ]; then
  if [ -f "$junit" ]; then
    mark junit; head -c {JUNIT_CAP} -- "$junit" | base64 -w 0
  else
    mark junit:missing
  fi
fi
[ "$alone" = 1 ] || mark survivors
if [ -n "$report" ]; then
  if [ "$alone" = 0 ]; then
    mark coverage-failed; echo "{SURVIVORS_REPORT}"
  elif ! out=$(mktemp -d /tmp/hackaudit-report.XXXXXXXX); then
    mark coverage-failed; echo "no directory for the report step"
  elif timeout 90 /bin/bash -c "$report" hackaudit-report "$out" >"$out/report.log" 2>&1 \
      && [ -f "$out/coverage.json" ]; then
    mark coverage; head -c {COVERAGE_CAP} -- "$out/coverage.json" | base64 -w 0
  else
    mark coverage-failed; tail -c 2000 -- "$out/report.log"
  fi
fi
if [ "$hasgit" = 1 ]; then
  if [ "$alone" = 0 ]; then
    mark status:survivors
  elif reseal && sealed rev-parse --git-dir >/dev/null 2>&1; then
    mark status
    sealed status {STATUS_ARGS} 2>/dev/null | head -c {PORCELAIN_CAP} | base64 -w 0
  else
    mark status:no-git
  fi
fi
finish
"""


def new_nonce() -> str:
    return secrets.token_hex(16)


def marker(nonce: str, kind: str) -> str:
    return f"{MARK_PREFIX}:{nonce}:{kind}"


def launcher_argv() -> tuple[str, ...]:
    return ("/bin/sh", "-c", LAUNCHER, "hackaudit", WRAPPER)


@dataclass(frozen=True)
class Payload:
    """The run's files, sent on the wrapper's stdin after the nonce."""

    files: Mapping[str, bytes]

    def encode(self, nonce: str) -> bytes:
        out = bytearray(f"{nonce}\n".encode())
        for name, body in self.files.items():
            if "/" in name or not name or name.startswith(".") or " " in name:
                raise ValueError(f"bad payload file name {name!r}")
            out += f"{name} {len(body)}\n".encode()
            out += body
        out += b". 0\n"
        return bytes(out)


def split_marker(nonce: str) -> bytes:
    """Where the runner's section ends: everything after it is the wrapper's trailer."""
    return f"\n{marker(nonce, 'test-exit:')}".encode()


def end_marker(nonce: str) -> bytes:
    return f"\n{marker(nonce, 'end')}\n".encode()


def decode_payload(stdin: bytes) -> tuple[str, dict[str, bytes]]:
    """The nonce and files of an encoded payload (the wrapper's reading, for fakes and tests)."""
    nonce, rest = stdin.split(b"\n", 1)
    files: dict[str, bytes] = {}
    while True:
        header, rest = rest.split(b"\n", 1)
        name, size = header.decode().split(" ")
        if name == ".":
            return nonce.decode(), files
        files[name], rest = rest[: int(size)], rest[int(size) :]
