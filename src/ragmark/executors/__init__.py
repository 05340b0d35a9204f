"""Where the CPU-bound work of a run happens: in this process (``local``, the default) or
on a Ray cluster (``ray``, the ``ragmark-eval[ray]`` extra).

An executor maps a function over items (question shards, embedding batches); the caller
decides what is a unit of work and merges the results, so both executors give the same
results. LLM calls never go through an executor: they stay on the driver's async client.
"""

from ragmark.executors.base import (
    EXECUTORS,
    Executor,
    LocalExecutor,
    active,
    create,
    using,
)

__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "active", "create", "using"]
