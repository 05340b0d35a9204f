"""Measure a judge (endpoint, model, prompt) against people's labels: ``ragmark
judge-eval``. Statistics in :mod:`.stats`, inputs in :mod:`.items`, the run in
:mod:`.run`."""

from ragmark.judge_eval.items import Item, read_items
from ragmark.judge_eval.measure import Trial, judge_eval
from ragmark.stats.agreement import evaluate

__all__ = ["Item", "Trial", "evaluate", "judge_eval", "read_items"]
