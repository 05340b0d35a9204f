"""The OpenAI Batch API on the scripted server: ``POST /files`` (multipart upload),
``POST /batches``, ``GET /batches/{id}``, ``GET /files/{id}/content``.

A job moves one state per status request along ``plan`` (default validating ->
in_progress -> completed; ``hold`` keeps it in in_progress until cleared). When it ends
``completed`` or ``expired`` its lines are answered by the server's chat logic (queue,
rule, default answer): 200s go to the output file, other statuses to the error file; an
``expired`` job answers only its first ``expire_after`` lines, a ``failed`` one none.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any


@dataclass
class Job:
    id: str
    input_file_id: str
    endpoint: str
    lines: list[dict[str, Any]]
    plan: list[str]
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    polls: int = 0
    body: dict[str, Any] = field(default_factory=dict)


def multipart_fields(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The parts of a multipart/form-data body by field name."""
    msg = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    out: dict[str, bytes] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        out[str(name)] = part.get_payload(decode=True) or b""
    return out


class FakeBatches:
    """The server's files and batch jobs (see the module docstring)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, Job] = {}
        self.created: list[str] = []
        self.plan = ["validating", "in_progress", "completed"]
        self.hold = False
        self.expire_after = 0
        self.errors: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def upload(self, content_type: str, raw: bytes) -> tuple[int, Any]:
        parts = multipart_fields(content_type, raw)
        if parts.get("purpose") != b"batch" or "file" not in parts:
            return 400, {"error": {"message": "purpose must be batch, with a file"}}
        with self._lock:
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = parts["file"]
        return 200, {"id": fid, "object": "file", "purpose": "batch",
                     "bytes": len(parts["file"])}

    def create(self, body: dict[str, Any]) -> tuple[int, Any]:
        raw = self.files.get(body.get("input_file_id", ""))
        if raw is None or body.get("completion_window") != "24h":
            return 400, {"error": {"message": "unknown input_file_id or window"}}
        lines = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
        with self._lock:
            bid = f"batch_{len(self.jobs) + 1}"
            self.jobs[bid] = Job(bid, body["input_file_id"], body["endpoint"], lines,
                                 list(self.plan))
            self.created.append(bid)
        return 200, self.view(self.jobs[bid])

    def get(self, bid: str) -> tuple[int, Any]:
        job = self.jobs.get(bid)
        if job is None:
            return 404, {"error": {"message": "no such batch"}}
        with self._lock:
            job.polls += 1
            if not (self.hold and job.status == "in_progress") and job.plan:
                job.status = job.plan.pop(0)
                if job.status in ("completed", "expired", "failed"):
                    self._finish(job)
        return 200, self.view(job)

    def content(self, fid: str) -> tuple[int, str]:
        raw = self.files.get(fid)
        return (404, '{"error": "no such file"}') if raw is None else (200, raw.decode())

    def _finish(self, job: Job) -> None:
        if job.status == "failed":
            return
        lines = job.lines[: self.expire_after] if job.status == "expired" else job.lines
        out, err = [], []
        for i, line in enumerate(lines):
            reply = self.server._pick(line["body"])
            body = (self.server.default_answer(line["body"], line["url"])
                    if reply.body is None else reply.body)
            entry = {"id": f"req_{i}", "custom_id": line["custom_id"],
                     "response": {"status_code": reply.status, "request_id": f"r{i}",
                                  "body": body}, "error": None}
            (out if reply.status == 200 else err).append(json.dumps(entry))
        if out:
            job.output_file_id = f"file-out-{job.id}"
            self.files[job.output_file_id] = ("\n".join(out) + "\n").encode()
        if err:
            job.error_file_id = f"file-err-{job.id}"
            self.files[job.error_file_id] = ("\n".join(err) + "\n").encode()

    def view(self, job: Job) -> dict[str, Any]:
        done = job.status in ("completed", "expired")
        answered = (len(job.lines) if job.status == "completed"
                    else min(self.expire_after, len(job.lines)) if job.status == "expired"
                    else 0)
        failed = 0
        if done and job.error_file_id:
            failed = len(self.files[job.error_file_id].decode().splitlines())
        return {"id": job.id, "object": "batch", "endpoint": job.endpoint,
                "input_file_id": job.input_file_id, "completion_window": "24h",
                "status": job.status, "output_file_id": job.output_file_id,
                "error_file_id": job.error_file_id,
                "errors": {"data": self.errors} if job.status == "failed" else None,
                "request_counts": {"total": len(job.lines), "completed": answered - failed,
                                   "failed": failed}}
