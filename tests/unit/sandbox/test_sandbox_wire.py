"""The wire between container and sandbox: payload, wrapper script, output capture, transcript,
and the JUnit corroboration of printed results."""

from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from hackaudit.sandbox.adapters.fake_backend import FakeOutcome, junit_xml, render
from hackaudit.sandbox.adapters.output_capture import FrameDecoder, OutputCapture
from hackaudit.sandbox.domain.execution import Phase
from hackaudit.sandbox.domain.log_parsers.junit import corroborate, junit_address, parse_junit
from hackaudit.sandbox.domain.protocol import (
    LAUNCHER,
    WRAPPER,
    Payload,
    decode_payload,
    end_marker,
    marker,
    split_marker,
)
from hackaudit.sandbox.domain.transcript import CapturedOutput, read_transcript
from hackaudit.shared.contracts import TestStatus

NONCE = "0f" * 16
P, F, S, X = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED, TestStatus.XFAIL


def test_payload_round_trip() -> None:
    files = {"candidate.diff": b"--- a\n+++ b\n", "test.sh": b"pytest\n", "empty": b""}
    nonce, decoded = decode_payload(Payload(files).encode(NONCE))

    assert nonce == NONCE
    assert decoded == files


@pytest.mark.parametrize("name", ["../x", "a/b", ".hidden", "", "with space"])
def test_payload_refuses_unsafe_names(name: str) -> None:
    with pytest.raises(ValueError, match="bad payload file name"):
        Payload({name: b"x"}).encode(NONCE)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("script", [WRAPPER, LAUNCHER], ids=["wrapper", "launcher"])
def test_scripts_parse(script: str) -> None:
    shell = "bash" if script is WRAPPER else "sh"
    done = subprocess.run([shell, "-n", "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _frames(data: bytes, size: int) -> bytes:
    out = b""
    for i in range(0, len(data), size):
        chunk = data[i : i + size]
        out += struct.pack(">BxxxL", 1, len(chunk)) + chunk
    return out


def test_frame_decoder_across_arbitrary_splits() -> None:
    payload = bytes(range(256)) * 40
    stream = _frames(payload, 333)
    decoder = FrameDecoder()
    out = b"".join(b"".join(decoder.feed(stream[i : i + 7])) for i in range(0, len(stream), 7))
    assert out == payload


def _capture(**caps: int) -> OutputCapture:
    begin = f"\n{marker(NONCE, 'begin:')}".encode()
    return OutputCapture(
        begin,
        split_marker(NONCE),
        end_marker(NONCE),
        caps.get("head", 64),
        caps.get("tail", 64),
        caps.get("trailer", 1 << 20),
    )


def test_capture_keeps_head_and_tail_of_a_flood_and_finds_markers_split_across_chunks() -> None:
    capture = _capture()
    stream = (
        f"\n{marker(NONCE, 'stage')}\n\n{marker(NONCE, 'begin:1.0')}\n".encode()
        + b"x" * 100_000
        + b"RESULTS AT THE END\n"
        + f"\n{marker(NONCE, 'test-exit:0:2.0')}\n\n{marker(NONCE, 'end')}\n".encode()
    )
    phases = []
    for i in range(0, len(stream), 5):
        capture.feed(stream[i : i + 5])
        phases.append(capture.phase)
    result = capture.result()

    assert capture.finished
    assert phases[0] is Phase.SETUP and Phase.TEST in phases and phases[-1] is Phase.REPORT
    assert len(result.head) == 64 and len(result.tail) == 64
    assert result.tail.endswith(b"RESULTS AT THE END\n")
    assert result.dropped == len(stream) - len(result.trailer) - 128
    assert result.trailer.startswith(b"\n@@hackaudit:")


def test_capture_caps_the_trailer() -> None:
    capture = _capture(trailer=100)
    capture.feed(split_marker(NONCE) + b"y" * 1000)
    result = capture.result()
    assert len(result.trailer) == 100
    assert result.trailer_dropped == len(split_marker(NONCE)) + 1000 - 100


def test_transcript_ignores_markers_without_the_nonce() -> None:
    forged = f"{marker('a' * 32, 'test-exit:0:9')}\n=== short test summary info ===\n"
    outcome = FakeOutcome(runner_output=forged, exit_code=1, duration_s=2.5)
    transcript = read_transcript(render(NONCE, outcome), NONCE)

    assert transcript.runner_output == forged
    assert transcript.test_exit_code == 1
    assert transcript.test_duration_s == pytest.approx(2.5)
    assert transcript.value("apply") == "ok:git-apply"
    assert transcript.finished


def test_transcript_of_a_killed_wrapper_has_output_but_no_exit() -> None:
    transcript = read_transcript(
        render(NONCE, FakeOutcome(runner_output="half", wrapper_killed=True)), NONCE
    )
    assert transcript.runner_output == "half"
    assert transcript.test_exit_code is None
    assert not transcript.finished


def test_transcript_reports_dropped_output() -> None:
    output = CapturedOutput(head=b"a" * 10, tail=b"b" * 10, dropped=5000)
    assert "5000 bytes of output not kept" in output.before_text()


def test_junit_statuses_and_addresses() -> None:
    xml = junit_xml(
        {
            "tests/test_a.py::test_p": P,
            "tests/test_a.py::TestC::test_f[1-2]": F,
            "tests/test_a.py::test_s": S,
            "tests/test_a.py::test_x": X,
        }
    )
    cases = parse_junit(xml)

    assert cases is not None
    assert [(c.classname, c.name, c.status) for c in cases] == [
        ("tests.test_a", "test_p", P),
        ("tests.test_a.TestC", "test_f[1-2]", F),
        ("tests.test_a", "test_s", S),
        ("tests.test_a", "test_x", X),
    ]
    assert junit_address("testing/sub/test_b.py::Test::()::test_z[a::b]") == (
        "testing.sub.test_b.Test",
        "test_z[a::b]",
    )


def test_junit_with_a_dtd_is_not_read() -> None:
    assert parse_junit('<!DOCTYPE x [<!ENTITY a "b">]><testsuite/>') is None
    assert parse_junit("<testsuite><testcase") is None


def test_corroboration_only_ever_lowers_printed_results() -> None:
    cases = parse_junit(
        junit_xml({"t.py::test_ok": P, "t.py::test_bad": F, "t.py::test_p[a b]": P})
    )
    printed = {
        "t.py::test_ok": P,
        "t.py::test_bad": P,  # printed as passed, reported failed
        "t.py::test_ghost": P,  # printed, never ran
        "t.py::test_p[a": P,  # cut at the space, matches by prefix
        "t.py::test_err": TestStatus.ERROR,
    }
    assert corroborate(printed, cases) == {
        "t.py::test_ok": P,
        "t.py::test_bad": F,
        "t.py::test_ghost": F,
        "t.py::test_p[a": P,
        "t.py::test_err": TestStatus.ERROR,
    }
    assert corroborate({"t.py::test_ok": P}, None) == {"t.py::test_ok": F}
