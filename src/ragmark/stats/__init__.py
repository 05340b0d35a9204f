"""Statistics over per-query metric values: bootstrap intervals, paired tests, Holm. Pure.

Per-query values are numpy arrays aligned by query; NaN marks a missing value. Paired
functions use only the queries that have a value in both arrays and report how many.
Everything random takes a seed, so the same call gives the same numbers.
"""


from ragmark.stats.baseline import (
    CORRECTIONS,
    ComparisonRow,
    compare_to_baseline,
    relative_change,
)
from ragmark.stats.kappa import cohen_kappa, kappa_of_table
from ragmark.stats.paired import (
    EXACT_MAX_N,
    TESTS,
    Interval,
    TestResult,
    bootstrap_ci,
    holm,
    least_questions,
    mean_ci,
    paired_permutation_test,
    paired_t_test,
    smallest_p,
    wilson_interval,
)

__all__ = ["CORRECTIONS", "EXACT_MAX_N", "TESTS", "ComparisonRow", "Interval",
           "TestResult", "bootstrap_ci", "cohen_kappa", "compare_to_baseline", "holm",
           "least_questions", "kappa_of_table", "mean_ci", "paired_permutation_test",
           "paired_t_test", "smallest_p", "relative_change", "wilson_interval"]
