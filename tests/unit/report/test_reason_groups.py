"""Issue 25 item 8 (part): reasons that differ only in their numbers (an HTTP 400 that
quotes each prompt's token count) make one footnote and one gate reason, not 48."""

from __future__ import annotations

from ragmark.analysis.gates import top_reasons
from ragmark.report.console import ReasonKeys
from ragmark.results.model import Aggregate


def test_reasons_that_differ_only_in_numbers_are_one_footnote():
    reasons = {f"HTTP 400: the prompt needs {1000 + i} tokens, the window is 2048": 1
               for i in range(48)}
    reasons["judge gave no verdict"] = 2
    agg = Aggregate(None, 0, 50, reasons)
    keys = ReasonKeys()
    assert keys.cell(agg) == "50 [1][2]"
    assert keys.footnotes() == [
        "[1] HTTP 400: the prompt needs 1000 tokens, the window is 2048 [and 47 more reasons "
        "that differ only in their numbers] (48 questions)",
        "[2] judge gave no verdict (2 questions)"]
    assert top_reasons(agg).startswith("HTTP 400: the prompt needs 1000 tokens, the window "
                                       "is 2048 [and 47 more reasons that differ only in "
                                       "their numbers] (48 questions); judge gave no verdict")
    one = Aggregate(None, 0, 2, {"needs 5 tokens": 1, "needs 6 tokens": 1})
    assert top_reasons(one) == ("needs 5 tokens [and 1 more reason that differs only in its "
                                "numbers] (2 questions)")
