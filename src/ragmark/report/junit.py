"""JUnit XML of the gate conditions, which CI systems show as tests: one test case per
condition, a failed one with its message."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from ragmark.analysis.gates import Condition

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def junit_xml(conditions: Sequence[Condition], suite: str = "ragmark") -> str:
    """The conditions as a JUnit ``testsuites`` document."""
    failures = sum(1 for c in conditions if not c.passed)
    root = ET.Element("testsuites", name=suite, tests=str(len(conditions)),
                      failures=str(failures))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(conditions)),
                       failures=str(failures), errors="0", skipped="0")
    for c in conditions:
        case = ET.SubElement(ts, "testcase", classname=f"{suite}.gates", name=c.name)
        if c.passed:
            ET.SubElement(case, "system-out").text = c.message
        else:
            ET.SubElement(case, "failure", message=c.message, type="GateFailed").text = \
                c.message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def write_junit(conditions: Sequence[Condition], path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(junit_xml(conditions), encoding="utf-8")
    return p


def append_step_summary(markdown: str) -> Path | None:
    """Append to the file GitHub Actions names in ``GITHUB_STEP_SUMMARY`` (when set)."""
    target = os.environ.get(SUMMARY_ENV, "").strip()
    if not target:
        return None
    p = Path(target)
    with p.open("a", encoding="utf-8") as f:
        from ragmark.text import visible

        f.write(visible(markdown if markdown.endswith("\n") else markdown + "\n"))
    return p
