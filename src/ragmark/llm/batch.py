"""Provider batch jobs: the calls not in the cache go to the OpenAI Batch API.

With ``LLMSettings.batch`` the client hands each call that is not in the cache to a
:class:`Batcher` instead of sending it. The batcher waits until the work in flight has
queued everything it can (no task makes progress without an answer), then sends the
queue as one job: a JSONL file of requests (``custom_id`` = the call's cache key)
uploaded with ``POST /files`` (purpose ``batch``), ``POST /batches``, ``GET
/batches/{id}`` every ``batch_poll`` seconds, and the output and error files from ``GET
/files/{id}/content``. Each answer enters the call cache exactly as an interactive one
would, and the waiting calls go on; what follows them (a re-ask, faithfulness's check
of its claims) makes the next job.

A job can be left and resumed: its id is saved under ``RAGMARK_HOME/llm/batches/``,
named after the set of calls it holds, as soon as it is created. Rerunning the command
queues the same calls (none of them is cached yet), finds the saved job and waits for it
instead of submitting a second one. The file goes when the job's answers are in the
cache, or when it failed, expired or was cancelled (a rerun then sends what is left).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ragmark.home import cache_path
from ragmark.llm.protocol import ResponseError, chat_path, parse_response
from ragmark.llm.results import LLMCallFailed, LLMResult, Usage
from ragmark.llm.transport import Request

if TYPE_CHECKING:
    from ragmark.llm.client import LLMClient

QUIET_TICKS = 20
"""Event-loop turns without a new call before the queue is sent."""
DONE = ("completed", "failed", "expired", "cancelled")
_SNIPPET = 200
STATUS = logging.getLogger("ragmark.status")
"""Where a batch job's status lines go (submitted, polled, resumed): the command line
shows them on stderr unless ``--quiet``; a library caller sees them when it sets up
logging at INFO."""


def _json(data: Any) -> tuple[Any, Usage]:
    if not isinstance(data, dict):
        raise ResponseError("expected a JSON object")
    return data, Usage()


def _text(data: Any) -> tuple[str, Usage]:
    return str(data), Usage()


def status_line(job: dict[str, Any]) -> str:
    """``batch_abc: in_progress, 120 of 1,000 done (3 failed)``."""
    counts = job.get("request_counts") or {}
    total, done, failed = (int(counts.get(k) or 0) for k in ("total", "completed", "failed"))
    line = f"{job.get('id')}: {job.get('status')}"
    if total:
        line += f", {done + failed:,} of {total:,} done" + (f" ({failed} failed)" if failed
                                                          else "")
    return line


class Batcher:
    """Collects a client's uncached calls and sends them as provider batch jobs."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.pending: dict[str, tuple[dict[str, Any], asyncio.Future[LLMResult]]] = {}
        self.jobs: list[str] = []
        """Ids of the jobs this batcher submitted or resumed."""
        self.resumed = 0
        self.on_status: Callable[[str], None] = STATUS.info
        self._flusher: asyncio.Task[None] | None = None

    async def submit(self, key: str, body: dict[str, Any]) -> LLMResult:
        """The answer of one call, once the job that carries it has finished."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[LLMResult] = loop.create_future()
        self.pending[key] = (body, fut)
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush_when_quiet())
        return await fut

    async def _flush_when_quiet(self) -> None:
        seen, still = -1, 0
        while still < QUIET_TICKS:
            await asyncio.sleep(0)
            still = still + 1 if len(self.pending) == seen else 0
            seen = len(self.pending)
        jobs, self.pending = self.pending, {}
        self._flusher = None
        try:
            results = await self._run(jobs)
        except LLMCallFailed as e:
            results = {k: e for k in jobs}
        except BaseException as e:  # never leave a caller waiting
            for _, fut in jobs.values():
                if not fut.done():
                    fut.set_exception(e)
            raise
        for key, (_, fut) in jobs.items():
            if fut.done():
                continue
            got = results.get(key) or LLMCallFailed("the batch job returned no answer for "
                                                    "this call", retryable=False)
            if isinstance(got, LLMCallFailed):
                fut.set_exception(got)
            else:
                fut.set_result(got)

    # -- one job --------------------------------------------------------------------

    def _url(self) -> str:
        """The request URL the job's lines name (the path of base_url + the chat path)."""
        s = self.client.settings
        return urlsplit(s.base_url).path + chat_path(s.provider)

    def _state(self, keys: list[str]) -> Path:
        s = self.client.settings
        blob = json.dumps([s.display_url, s.model, sorted(keys)]).encode()
        return cache_path("llm", "batches", hashlib.sha256(blob).hexdigest()[:32] + ".json")

    async def _run(self, jobs: dict[str, tuple[dict[str, Any], Any]]
                   ) -> dict[str, LLMResult | LLMCallFailed]:
        state = self._state(list(jobs))
        saved = _read(state)
        if saved is not None:
            batch_id = str(saved["batch_id"])
            self.resumed += 1
            self.on_status(f"resuming provider batch {batch_id} ({len(jobs):,} calls), "
                           "submitted earlier")
        else:
            batch_id = await self._create(jobs, state)
        self.jobs.append(batch_id)
        job = await self._wait(batch_id)
        results: dict[str, LLMResult | LLMCallFailed] = {}
        for fid in (job.get("output_file_id"), job.get("error_file_id")):
            if fid:
                results.update(await self._results(str(fid), set(jobs)))
        if job["status"] != "completed":
            why = _job_error(job)
            for key in jobs:
                results.setdefault(key, LLMCallFailed(why, retryable=False))
        state.unlink(missing_ok=True)
        return results

    async def _create(self, jobs: dict[str, tuple[dict[str, Any], Any]], state: Path) -> str:
        c, url = self.client, self._url()
        lines = [json.dumps({"custom_id": k, "method": "POST", "url": url, "body": body},
                            ensure_ascii=False) for k, (body, _) in jobs.items()]
        upload = ("ragmark-batch.jsonl", ("\n".join(lines) + "\n").encode(),
                  "application/jsonl")
        got = await c.request(Request("POST", "/files", files={"file": upload},
                                      data={"purpose": "batch"}), _json, count=False)
        file_id = str(got.value.get("id") or "")
        if not file_id:
            raise LLMCallFailed("the batch file upload returned no file id", retryable=False)
        made = await c.request(Request("POST", "/batches", {
            "input_file_id": file_id, "endpoint": url, "completion_window": "24h",
            "metadata": {"created_by": "ragmark"}}), _json, count=False)
        batch_id = str(made.value.get("id") or "")
        if not batch_id:
            raise LLMCallFailed("the batch was not created (no id in the answer)",
                                retryable=False)
        state.write_text(json.dumps({"batch_id": batch_id, "input_file_id": file_id,
                                     "calls": len(jobs), "created": time.time(),
                                     "endpoint": c.settings.display_url,
                                     "model": c.settings.model}), "utf-8")
        self.on_status(f"submitted provider batch {batch_id} ({len(jobs):,} calls); the "
                       "run can be stopped and rerun to pick it up")
        return batch_id

    async def _wait(self, batch_id: str) -> dict[str, Any]:
        last = ""
        while True:
            got = await self.client.request(Request("GET", f"/batches/{batch_id}"), _json,
                                            count=False)
            job = got.value
            line = status_line(job)
            if line != last:
                self.on_status(f"provider batch {line}")
                last = line
            if job.get("status") in DONE:
                return job
            await asyncio.sleep(self.client.settings.batch_poll)

    async def _results(self, file_id: str, keys: set[str]
                       ) -> dict[str, LLMResult | LLMCallFailed]:
        c, s = self.client, self.client.settings
        got = await c.request(Request("GET", f"/files/{file_id}/content", text=True), _text,
                              count=False)
        out: dict[str, LLMResult | LLMCallFailed] = {}
        for line in got.value.splitlines():
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                key = str(item["custom_id"])
            except (ValueError, KeyError, TypeError):
                continue  # not one of ours: nothing to attach it to
            if key not in keys:
                continue
            resp = item.get("response") or {}
            status = int(resp.get("status_code") or 0)
            c.stats.calls += 1
            c.stats.batch_calls += 1
            if item.get("error") or status != 200:
                detail = json.dumps(item.get("error") or resp.get("body"))[:_SNIPPET]
                out[key] = LLMCallFailed(f"batch request failed: HTTP {status or '-'}: "
                                         f"{detail}", retryable=False)
                continue
            try:
                text, usage = parse_response(s.provider, resp.get("body"))
            except ResponseError as e:
                out[key] = LLMCallFailed(f"unreadable batch answer: {e}", retryable=False)
                continue
            c.stats.batch_prompt_tokens += usage.prompt_tokens
            c.stats.batch_completion_tokens += usage.completion_tokens
            c.stats.prompt_tokens += usage.prompt_tokens
            c.stats.completion_tokens += usage.completion_tokens
            if c.cache is not None:
                c.cache.put(key, provider=s.provider, model=s.model, text=text,
                            prompt_tokens=usage.prompt_tokens,
                            completion_tokens=usage.completion_tokens, seconds=0.0)
            out[key] = LLMResult(text, usage, cached=False, attempts=1)
        return out


def _job_error(job: dict[str, Any]) -> str:
    status = job.get("status")
    errors = (job.get("errors") or {}).get("data") or []
    first = errors[0].get("message") if errors and isinstance(errors[0], dict) else None
    if status == "expired":
        return (f"provider batch {job.get('id')} expired before this call ran; rerun to "
                "send the calls left")
    return (f"provider batch {job.get('id')} {status}"
            + (f": {first}" if first else "") + "; rerun to send the calls left")


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("batch_id") else None
