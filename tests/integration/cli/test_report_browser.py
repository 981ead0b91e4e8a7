"""report.html as a browser shows it: headless Chromium, no network, renders the page (not a blank
one: the verdict colours are on screen) and its DOM holds the verdict table."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from hackaudit.cli.report import write_report
from hackaudit.cli.report_store import latest_per_task
from tests.reportdata import sample_states

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEEP_GREEN = (0x2E, 0x7D, 0x32)
DROP_RED = (0xC6, 0x28, 0x28)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium (scripts/bootstrap.sh installs it)")
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


@pytest.fixture
def report_html(tmp_path: Path) -> Path:
    out = tmp_path / "report"
    write_report(out, latest_per_task(sample_states()), missing_stages=[])
    return out / "report.html"


def test_the_page_renders_in_a_headless_browser(tmp_path: Path, report_html: Path) -> None:
    png = tmp_path / "shot.png"
    done = _chromium(
        tmp_path, f"--screenshot={png}", "--window-size=1280,2000", report_html.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(png) as image:
        assert image.size == (1280, 2000)
        pixels = image.convert("RGB")
        colours = pixels.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50, "a blank or near-blank screenshot"
    background = max(colours)[0]
    assert background < 0.97 * 1280 * 2000, "nothing drawn over the background"
    present = {colour for _, colour in colours}
    assert KEEP_GREEN in present and DROP_RED in present, "the verdict badges are not drawn"


def test_the_rendered_dom_holds_the_verdict_table(tmp_path: Path, report_html: Path) -> None:
    done = _chromium(tmp_path, "--dump-dom", report_html.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    table = re.search(r'<table class="verdict-table">.*?<tbody>(.*?)</tbody>', done.stdout, re.S)
    assert table, "no verdict table in the rendered DOM"
    rows = re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)
    verdicts = [re.search(r'class="verdict[^"]*"[^>]*>([^<]+)<', r) for r in rows]
    assert [m.group(1) for m in verdicts if m] == [
        "KEEP", "FIX", "DROP", "ERROR", "ERROR", "DROP",
    ]  # fmt: skip
    assert "calc__calc-3" in rows[2] and ">yes<" in rows[2]  # over-strict
    assert "<script" not in done.stdout.split("</title>", 1)[1]  # escaped text stayed text
    assert done.stdout.count('<circle cx="') == 4  # the scatter's dots
