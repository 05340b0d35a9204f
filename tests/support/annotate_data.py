"""A run's results file with a dozen judged answers, one of them hostile HTML: the
items `ragmark annotate` tests label."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RESULTS = Path(__file__).parents[1] / "unit" / "inspection" / "run_results.json"
HOSTILE = "<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">"


def results_file(tmp: Path, n: int = 12) -> Path:
    """A run's results with ``n`` judged answers (the fixture's, repeated under new ids);
    the third's answer and first context are hostile HTML."""
    data = json.loads(RESULTS.read_text())
    judged = [q for q in data["queries"] if isinstance(q["metrics"].get("faithfulness"), dict)
              and q["metrics"]["faithfulness"].get("value") is not None]
    queries = []
    for i in range(n):
        q = json.loads(json.dumps(judged[i % len(judged)]))
        q["id"], q["question"] = f"item{i:02d}", f"Question {i}: {q['question']}"
        if i == 2:
            q["answer"], q["contexts"] = f"Hostile {HOSTILE}", [HOSTILE, *q["contexts"][1:]]
        queries.append(q)
    data["queries"] = queries
    path = tmp / "run.json"
    path.write_text(json.dumps(data))
    return path


@contextmanager
def serving(plan) -> Iterator[str]:
    """``ragmark annotate``'s plan served in a thread (its ``listen`` a free loopback
    port): the server's address, stopped after."""
    from ragmark.plan.annotate import execute_annotate

    ready = threading.Event()
    got = {}

    def on_ready(server, new):
        got["server"] = server
        ready.set()

    thread = threading.Thread(target=execute_annotate, args=(plan, on_ready), daemon=True)
    thread.start()
    assert ready.wait(20)
    host, port = got["server"].server_address
    try:
        yield f"http://{host}:{port}"
    finally:
        got["server"].shutdown()
        thread.join(10)
