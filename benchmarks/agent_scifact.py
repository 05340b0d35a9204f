"""An agent that searches, tried as a user would (issue 50): LangChain's ReAct agent
(``create_agent``, a LangGraph graph) whose model is the 1.5B instruct model of MODELS.md
behind llama.cpp's server (tool calling through ``chatml-function-calling``), with a
BM25 search tool over SciFact (bm25s) and a calculator, traced by
``openinference-instrumentation-langchain``; ragmark reads the traces and scores the
trajectories, and LangChain's agentevals scores the same trajectories as the anchor.

    python benchmarks/agent_scifact.py --gguf QWEN.gguf [--questions 5] [--force-search]

``--force-search`` makes the model's first turn a call of the search tool (the request's
``tool_choice`` names it, through a LangChain middleware, until a tool has answered): what
the search finds is measured even where the model would answer without searching.

SciFact: BEIR's copy (CC BY-NC 2.0 per its dataset card), ../shared/data/scifact. The
model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (MODELS.md says how to assemble it; not committed).

Reported: per question, the calls the agent made, each search call's recall@5 (ragmark's
hops; by SciFact's qrels), the answer and the failure kinds ``inspect --failures``
names; over the questions, the agent metrics; and agentevals' superset and unordered
match on the same trajectories (messages rebuilt from the trace) against ragmark's, as
the share of questions on which they agree.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import (  # noqa: E402
    DEFAULT_DATA,
    RESULTS,
    header_lines,
    load_average,
    machine_info,
    md_table,
    warm_up,
    write_results,
)
from support.llama import MISSING, WHY_MISSING, llama_server  # noqa: E402

SYSTEM = ("You check scientific claims against a database of abstracts. First call the search "
          "tool with a short query about the claim (always search before answering), read "
          "the abstracts, then answer in one "
          "sentence whether the abstracts support the claim.")


class _NullContentToEmpty(httpx.HTTPTransport):
    """llama-cpp-python's server refuses an assistant message whose content is null (its
    schema wants a string), which is how LangChain sends a turn that only calls tools:
    such a content is sent as an empty string."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            body = json.loads(request.content)
            for m in body.get("messages") or []:
                if m.get("role") == "assistant" and m.get("content") is None:
                    m["content"] = ""
            content = json.dumps(body).encode()
            headers = {k: v for k, v in request.headers.items()
                       if k.lower() != "content-length"}
            request = httpx.Request(request.method, request.url, headers=headers,
                                    content=content)
        return super().handle_request(request)


def _first_call_searches() -> Any:
    """A LangChain middleware: a model call before any tool has answered must call the
    search tool (``tool_choice``); later calls choose freely."""
    from langchain.agents.middleware import wrap_model_call
    from langchain_core.messages import ToolMessage

    @wrap_model_call  # type: ignore[arg-type]
    def first_call_searches(request: Any, handler: Any) -> Any:
        if not any(isinstance(m, ToolMessage) for m in request.messages):
            request = request.override(tool_choice="search")
        return handler(request)

    return first_call_searches


def _agent(url: str, alias: str, ds: Any, force: bool
           ) -> tuple[Any, dict[str, list[str]]]:
    import bm25s
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    docs = list(ds.corpus.documents)
    index = bm25s.BM25()
    index.index(bm25s.tokenize([d.text for d in docs], stopwords="en", show_progress=False),
                show_progress=False)
    returned: dict[str, list[str]] = {}

    @tool
    def search(query: str) -> str:
        """Search the abstracts; returns the top 5 as JSON (id, text)."""
        hits, _ = index.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                 k=5, show_progress=False)
        found = [docs[int(i)] for i in hits[0]]
        returned[query] = [d.id for d in found]
        return json.dumps([{"id": d.id, "text": d.text[:240]} for d in found])

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression of integers, + - * / and parentheses."""
        if not set(expression) <= set("0123456789+-*/() "):
            raise ValueError(f"not an arithmetic expression: {expression!r}")
        return str(eval(expression))  # noqa: S307 (digits and operators only)

    model = ChatOpenAI(base_url=url, api_key="none", model=alias, temperature=0,
                       max_tokens=160, timeout=600,
                       http_client=httpx.Client(transport=_NullContentToEmpty(), timeout=600))
    middleware = [_first_call_searches()] if force else []
    return create_agent(model, [search, calculator], system_prompt=SYSTEM,
                        middleware=middleware), returned


def _ragmark(args: list[str]) -> dict[str, Any]:
    out = Path(tempfile.mkdtemp()) / "r.json"
    got = subprocess.run([sys.executable, "-m", "ragmark", *args, "--output", str(out),
                          "--include-details", "--no-history", "--quiet"],
                         capture_output=True, text=True)
    if got.returncode not in (0, 1):
        sys.exit(got.stderr)
    data = json.loads(out.read_text())
    data["_path"] = str(out)
    return data


def _messages(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A trajectory as OpenAI messages (agentevals' input)."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    for s in steps:
        if s["kind"] == "model":
            out.append({"role": "assistant", "content": s.get("content") or "",
                        "tool_calls": [{"id": c.get("id") or f"x{i}", "type": "function",
                                        "function": {"name": c["name"], "arguments":
                                                     json.dumps(c.get("arguments") or {})}}
                                       for i, c in enumerate(s["tool_calls"])] or None})
        elif s["kind"] == "tool":
            out.append({"role": "tool", "tool_call_id": s.get("id") or "",
                        "content": s.get("result") or s.get("error") or ""})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", required=True, help="The 1.5B model's GGUF (MODELS.md).")
    ap.add_argument("--alias", default="qwen")
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--force-search", action="store_true",
                    help="The first model call must call the search tool (tool_choice).")
    ap.add_argument("--data", default=str(DEFAULT_DATA / "scifact"))
    ap.add_argument("--out", default=str(RESULTS / "agent_scifact.md"))
    args = ap.parse_args()
    if MISSING:
        sys.exit(WHY_MISSING)
    from agentevals.trajectory.match import create_trajectory_match_evaluator
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from support.otlp import otlp_json

    from ragmark.data import load_dataset

    ds = load_dataset(args.data)
    samples = [s for s in ds.samples if s.truth.doc_grades][:args.questions]
    info = machine_info(["ragmark", "llama_cpp_python", "langchain", "langgraph",
                         "agentevals", "openinference-instrumentation-langchain", "bm25s"])
    info["agent model"] = f"{Path(args.gguf).name} (llama.cpp, chatml-function-calling)"
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    tmp = Path(tempfile.mkdtemp())
    walls = []
    with llama_server(tmp / "log", "--chat_format", "chatml-function-calling",
                      model=Path(args.gguf), alias=args.alias, n_ctx=4096,
                      start_timeout=300) as url:
        warm_up(url, args.alias)
        agent, returned = _agent(url, args.alias, ds, args.force_search)
        for s in samples:
            t0 = time.perf_counter()
            try:
                agent.invoke({"messages": [("user", f"Claim: {s.question}")]},
                             {"recursion_limit": 8})
            except Exception as e:  # noqa: BLE001 (a step limit hit is a result too)
                print(f"{s.id}: {type(e).__name__}: {e}", file=sys.stderr)
            walls.append(time.perf_counter() - t0)
    spans = tmp / "spans.json"
    spans.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
    agent_set = tmp / "agent_set.jsonl"  # the questions, each expecting one search
    by_id = ds.corpus.by_id()
    agent_set.write_text("\n".join(json.dumps({
        "id": s.id, "question": f"Claim: {s.question}",
        "ground_truth_contexts": [by_id[d].text[:240] for d in s.truth.doc_grades
                                  if d in by_id],
        "expected_tool_calls": [{"name": "search", "arguments": {}}],
        "tool_args_overrides": {"search": "ignore"}}) for s in samples) + "\n")
    scored = _ragmark(["run", "--traces", str(spans), "--dataset", str(agent_set),
                       "--search-tool", "search", "--metrics",
                       "recall@5,mrr@5,trajectory_superset,trajectory_unordered,tool_recall,"
                       "tool_precision,tool_calls,tool_error_rate,repeated_calls"])
    fails = subprocess.run([sys.executable, "-m", "ragmark", "inspect", scored["_path"],
                            "--failures", "--json"], capture_output=True, text=True)
    kinds: dict[str, list[str]] = {}
    for f in json.loads(fails.stdout)["failures"]:
        if f["cause"] == "agent":
            kinds.setdefault(f["id"], []).append(f["kind"])
    rows, agree = [], {"superset": 0, "unordered": 0}
    reference = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "",
                  "tool_calls": [{"id": "r", "type": "function", "function": {
                      "name": "search", "arguments": "{}"}}]}]
    for q in scored["queries"]:
        steps = q.get("trajectory") or []
        made = [c for st in steps if st["kind"] == "model" for c in st["tool_calls"]]
        for mode in agree:
            theirs = create_trajectory_match_evaluator(
                trajectory_match_mode=mode, tool_args_match_mode="ignore")(
                outputs=_messages(steps), reference_outputs=reference)["score"]
            agree[mode] += float(theirs) == q["metrics"][f"trajectory_{mode}"]
        hops = ", ".join(f"{h['recall']:.2f}" if h["recall"] is not None else "—"
                         for h in q.get("hops") or [])
        calls = "; ".join(f"{c['name']}({json.dumps(c.get('arguments'))[:60]})" for c in made)
        rows.append([q["id"], calls or "(none)", hops or "—",
                     (q["answer"] or "")[:90].replace("|", "/").replace("\n", " "),
                     ", ".join(kinds.get(q["id"], [])) or "—"])
    n = len(scored["queries"])
    m = scored["metrics"]
    lines = header_lines("An agent that searches SciFact, tried as a user would",
                         info, "python benchmarks/agent_scifact.py " + " ".join(
                             Path(a).name if a == args.gguf else a for a in sys.argv[1:]))
    lines += [
        f"{n} SciFact test claims (BEIR's copy, CC BY-NC 2.0 per its dataset card). "
        "The agent: LangChain's "
        "create_agent over a BM25 search tool (bm25s, top 5, 240 characters of each "
        "abstract) and a calculator, temperature 0, at most 8 graph steps"
        + (", its first model call made to call the search tool (tool_choice)"
           if args.force_search else ", tool choice left to the model") + ". Traced by the "
        "OpenInference LangChain instrumentor; read by `ragmark run --traces --search-tool "
        "search` against a set expecting one search per claim (its arguments ignored), "
        "whose gold passages are the qrels' abstracts.",
        "",
        *md_table(["claim", "calls made", "recall@5 per search", "answer", "failure kinds"],
                  rows),
        "",
        *md_table(["metric", "mean", "questions"],
                  [[k, "—" if v is None else f"{v:.3f}",
                    str(scored["counts"].get(k, {}).get("n", n)) if isinstance(
                        scored.get("counts"), dict) else str(n)] for k, v in m.items()]),
        "",
        f"agentevals (anchor) on the same trajectories, rebuilt as OpenAI messages: "
        f"superset agrees with ragmark on {agree['superset']} of {n} claims "
        f"(ratio {agree['superset'] / max(n, 1):.2f}), unordered on {agree['unordered']} of "
        f"{n} ({agree['unordered'] / max(n, 1):.2f}).",
        "",
        f"Wall time per claim: {', '.join(f'{w:.0f} s' for w in walls)} "
        f"(total {sum(walls):.0f} s). Load average at the end: {load_average()}.",
    ]
    write_results(Path(args.out), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
