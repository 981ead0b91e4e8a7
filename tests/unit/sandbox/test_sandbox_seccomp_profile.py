"""The sandbox's seccomp profile: allows by default, refuses tracing, namespaces and the rest of
what Docker's default refuses without capabilities; Docker reads it from `security_opt`."""

from __future__ import annotations

import json

from hackaudit.sandbox.adapters.docker_backend import Limits, container_options
from hackaudit.sandbox.adapters.seccomp_profile import NAMESPACE_FLAGS, profile, security_option


def _refused(errno: int) -> set[str]:
    return {
        name
        for rule in profile()["syscalls"]
        if rule["action"] == "SCMP_ACT_ERRNO" and rule["errnoRet"] == errno and "args" not in rule
        for name in rule["names"]
    }


def test_tracing_keyring_and_namespaces_are_refused_with_eperm() -> None:
    wanted = {
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "kcmp",
        "add_key",
        "keyctl",
        "request_key",
        "userfaultfd",
        "perf_event_open",
        "bpf",
        "unshare",
        "setns",
        "mount",
    }
    assert wanted <= _refused(1)
    assert _refused(38) == {"clone3"}
    assert profile()["defaultAction"] == "SCMP_ACT_ALLOW"


def test_clone_is_refused_for_every_namespace_flag_and_only_for_them() -> None:
    rules = [r for r in profile()["syscalls"] if r["names"] == ["clone"]]
    masks = {rule["args"][0]["value"] for rule in rules}

    assert masks == set(NAMESPACE_FLAGS)
    assert all(
        rule["args"][0]["op"] == "SCMP_CMP_MASKED_EQ"
        and rule["args"][0]["value"] == rule["args"][0]["valueTwo"]
        for rule in rules
    )
    # CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD ...: threads stay allowed.
    assert not any(flag & 0x003D0F00 for flag in NAMESPACE_FLAGS)


def test_32_bit_calls_cannot_bypass_the_list() -> None:
    arches = {entry["architecture"]: entry["subArchitectures"] for entry in profile()["archMap"]}

    assert arches["SCMP_ARCH_X86_64"] == ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]
    assert arches["SCMP_ARCH_AARCH64"] == ["SCMP_ARCH_ARM"]


def test_every_container_gets_the_profile_beside_no_new_privileges() -> None:
    options = container_options(
        "image", Limits(256, 64, 1.0, 1 << 20), "owner", ("sleep", "1"), "1000:1000"
    )
    security = options["security_opt"]

    assert "no-new-privileges" in security
    seccomp = [o for o in security if o.startswith("seccomp=")]
    assert seccomp == [security_option()]
    assert json.loads(seccomp[0].removeprefix("seccomp=")) == profile()
