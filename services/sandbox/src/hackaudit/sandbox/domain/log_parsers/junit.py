"""pytest's JUnit XML report, used to corroborate the statuses read from its text output.

The text of a test run can hold anything the candidate's code prints, including a complete,
well-formed imitation of pytest's summary printed after pytest's own (from an `atexit` hook). The
XML report is written by pytest itself, to a file, when the session ends; printing cannot change
it. So when a report is available, a favourable status read from the text (passed, expected
failure, skipped) stands only if the report agrees; a test the report does not know, or reports
worse, takes the report's status (failed when absent). The report never improves a status.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

from hackaudit.sandbox.domain.log_parsers.statuses import SEVERITY, StatusMap, worse
from hackaudit.shared.contracts import TestStatus

FAVOURABLE = frozenset({TestStatus.PASSED, TestStatus.XFAIL, TestStatus.SKIPPED})
_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


@dataclass(frozen=True)
class JunitCase:
    classname: str
    name: str
    status: TestStatus


def parse_junit(xml_text: str) -> list[JunitCase] | None:
    """The test cases of a JUnit XML report, or None when it is not a readable report."""
    if not xml_text.strip() or _DTD.search(xml_text):
        return None
    try:
        # Input is size-capped and DTDs (hence entity expansion) are refused above.
        root = ElementTree.fromstring(xml_text)  # noqa: S314
    except ElementTree.ParseError:
        return None
    cases = []
    for case in root.iter("testcase"):
        cases.append(
            JunitCase(
                classname=case.get("classname", ""),
                name=case.get("name", ""),
                status=_case_status(case),
            )
        )
    return cases


def _case_status(case: ElementTree.Element) -> TestStatus:
    status = TestStatus.PASSED
    for child in case:
        if child.tag == "failure":
            status = worse(status, TestStatus.FAILED)
        elif child.tag == "error":
            status = worse(status, TestStatus.ERROR)
        elif child.tag == "skipped":
            xfail = child.get("type", "") == "pytest.xfail"
            status = worse(status, TestStatus.XFAIL if xfail else TestStatus.SKIPPED)
    return status


def junit_address(nodeid: str) -> tuple[str, str]:
    """(classname, name) pytest's JUnit report gives the test with this node id."""
    path, bracket, params = nodeid.partition("[")
    names = [part for part in path.split("::") if part != "()"]
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def _matching(nodeid: str, by_class: dict[str, list[JunitCase]]) -> list[JunitCase]:
    classname, name = junit_address(nodeid)
    cases = by_class.get(classname, [])
    exact = [case for case in cases if case.name == name]
    if exact or name.count("[") <= name.count("]"):
        return exact
    # The id was cut at a space inside its parameters (see log_parsers.pytest).
    return [case for case in cases if case.name.startswith(name + " ")]


def corroborate(statuses: StatusMap, cases: list[JunitCase] | None) -> StatusMap:
    """`statuses` with every favourable status the JUnit report does not back made worse.

    With no report at all (`cases` None), no favourable status is backed.
    """
    by_class: dict[str, list[JunitCase]] = {}
    for case in cases or []:
        by_class.setdefault(case.classname, []).append(case)
    checked: StatusMap = {}
    for test, status in statuses.items():
        if status not in FAVOURABLE:
            checked[test] = status
            continue
        matches = _matching(test, by_class) if "::" in test else []
        if not matches:
            checked[test] = TestStatus.FAILED if "::" in test else status
            continue
        reported = max((case.status for case in matches), key=SEVERITY.__getitem__)
        checked[test] = worse(status, reported)
    return checked
