"""The seccomp profile of every sandbox container: no process may trace or read another.

Every process of a run has the same uid (1000): the candidate's code, the run's wrapper, and in
warm mode the reset that wipes a container between runs. The kernel lets a process trace another
of its own uid (`ptrace`, `process_vm_readv` / `process_vm_writev`, `/proc/<pid>/mem`) unless the
target is non-dumpable or a Linux Security Module such as Yama says no — and Docker's default
seccomp profile allows `ptrace` on every recent kernel. A candidate process still alive when the
reset starts could then attach to it, turn its `kill(-1, SIGKILL)` into a no-op and outlive it.

Three ways were weighed:
- *another uid for the wrapper and the reset*: it needs a second user in every task image (or a
  set-uid helper, which `no-new-privileges` forbids), and file ownership in `/testbed` would have
  to follow it; a large change to every image for one property.
- *non-dumpable processes*: the wrapper and the reset run from an execute-only copy of bash, so
  the kernel refuses every same-uid access to them, `/proc/<pid>/mem` included (seccomp cannot
  filter an `open`). This is kept, but it protects only the shell itself, not the programs it
  starts (`git`, `cp`, `find`), which are dumpable again after their own `exec`.
- *this profile*: `ptrace`, `process_vm_readv`, `process_vm_writev` and `kcmp` fail with EPERM
  for every process of the container, whatever it runs. Test suites that debug their own
  children (rare: debugger tests) fail here, as they do under Docker's default profile on
  kernels before 4.8.

The profile allows every system call (`defaultAction` allow) and refuses a list, because Docker's
default profile is compiled into the engine and cannot be extended, only replaced. The list keeps
what that default refuses and what matters with all capabilities dropped: the kernel keyring,
`userfaultfd`, `perf_event_open`, `bpf`, new namespaces (`unshare`, `setns`, `clone` with a
namespace flag, and `clone3`, whose flags seccomp cannot read — it answers ENOSYS, so the C
library falls back to `clone`), `io_uring` (whose operations seccomp does not see), NUMA
policies, handles by file-system id, and — though they need a capability no sandbox process has —
mounts, modules, clocks, swap, `reboot` and the other administrative calls, so that no namespace
trick makes them reachable. A system call the engine's libseccomp does not know is skipped by the
engine, never an error. The `x86` / `x32` and `arm` sub-architectures are named so that a 32-bit
call cannot bypass the list; a call from any other architecture is killed by the filter.
"""

from __future__ import annotations

import json
from typing import Any

EPERM = 1
ENOSYS = 38

# Refused for every process of the container (see the module docstring).
DENIED = (
    # Tracing and reading another process.
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    # The kernel keyring (not namespaced).
    "add_key",
    "keyctl",
    "request_key",
    # Kernel facilities a sandbox has no use for, some reachable without capabilities.
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "lookup_dcookie",
    "get_mempolicy",
    "set_mempolicy",
    "mbind",
    "move_pages",
    "name_to_handle_at",
    "open_by_handle_at",
    "syslog",
    # Namespaces.
    "unshare",
    "setns",
    # Administrative calls (capability-gated; refused even inside a namespace).
    "acct",
    "clock_adjtime",
    "clock_settime",
    "settimeofday",
    "stime",
    "create_module",
    "init_module",
    "finit_module",
    "delete_module",
    "get_kernel_syms",
    "query_module",
    "kexec_load",
    "kexec_file_load",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "quotactl",
    "quotactl_fd",
    "reboot",
    "swapon",
    "swapoff",
    "iopl",
    "ioperm",
    "nfsservctl",
    "sysfs",
    "_sysctl",
    "uselib",
    "ustat",
    "vm86",
    "vm86old",
)

# `clone` flags that create a namespace (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
# NEWNET); the flags are `clone`'s first argument on x86 and arm.
NAMESPACE_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)

ARCH_MAP = [
    {"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]},
    {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]},
]


def profile() -> dict[str, Any]:
    """The profile as Docker's seccomp JSON (see the module docstring)."""
    clone_rules = [
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": EPERM,
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
        }
        for flag in NAMESPACE_FLAGS
    ]
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "archMap": ARCH_MAP,
        "syscalls": [
            {"names": list(DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM},
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS},
            *clone_rules,
        ],
    }


def security_option() -> str:
    """The `security_opt` entry that gives a container this profile."""
    return "seccomp=" + json.dumps(profile(), separators=(",", ":"))
