"""``ragmark simulate`` tried as a user would (issue 64): scenarios written from a slice of
SciFact's corpus by ``ragmark testset --scenarios``, then played by an LLM as the user
against ragmark's own BM25 + LLM pipeline on that slice, every call through a counting
proxy; the simulation is killed (SIGKILL) once some turns are journaled and run again,
and the proxy's log shows whether any call was sent twice (a system turn or a simulated
user's turn asked again after the resume).

    python benchmarks/simulate_trial.py --url http://127.0.0.1:PORT/v1 --alias qwen \
        --scenarios 10 --documents 200

``--system langgraph`` plays the scenarios against a LangGraph agent instead (LangChain's
create_agent over a BM25 search tool on the same slice, with its own memory: an
InMemorySaver checkpointer, one thread a conversation); its server must take tool calls
(llama.cpp's llama-server started with --jinja).

The server is the user's (``--url``: llama.cpp's llama-server or llama-cpp-python's);
the same model writes the scenarios, plays the user, answers as the system's generator
and judges the conversations. Data: BEIR SciFact (CC BY-NC 2.0 per its dataset card;
BEIR's card lists CC BY-SA 4.0), from ../shared/data.
The table goes to benchmarks/results/simulate_trial_<alias>.md with the time, tokens,
how the conversations ended and what the small model got wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _counting_proxy import Proxy, totals  # noqa: E402
from _env import (  # noqa: E402
    DEFAULT_DATA,
    RESULTS,
    check_scifact,
    corpus_slice,
    header_lines,
    machine_info,
    md_table,
    write_results,
)


def _ragmark(args: list[str], env: dict[str, str], **kw: Any) -> subprocess.Popen[str]:
    """ragmark run in the trial's work directory (the parent of its RAGMARK_HOME), so the
    run history it records (.ragmark/ in the working directory) goes with it."""
    return subprocess.Popen([sys.executable, "-m", "ragmark", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=Path(env["RAGMARK_HOME"]).parent, **kw)


def _turns(journal: Path) -> int:
    if not journal.exists():
        return 0
    return sum('"turn"' in line for line in journal.read_text().splitlines())


AGENT = '''"""The trial's LangGraph agent: create_agent over a BM25 search tool (bm25s, the
slice of SciFact, top 3) with its own memory (InMemorySaver): ragmark keeps one thread a
conversation and sends each later turn's question alone. Each turn's first model call
must search: the 1.5B model (Qwen2.5-Coder) writes its call as JSON in the text
(```json {"name": "search", "arguments": {...}}```), which llama-server does not parse
into a tool call, so the middleware reads it from there; when the text holds no call,
the user's message is searched as it is. The calls after it choose freely."""
import json

import bm25s
import httpx
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

DOCS = [json.loads(x) for x in open(CORPUS, encoding="utf-8") if x.strip()]
INDEX = bm25s.BM25()
INDEX.index(bm25s.tokenize([d["title"] + " " + d["text"] for d in DOCS], stopwords="en",
                           show_progress=False), show_progress=False)
SYSTEM = ("You answer questions about scientific findings from a database of abstracts. "
          "Call the search tool with a short query before answering, then answer in at "
          "most three sentences from what it returned.")


class NullContentToEmpty(httpx.HTTPTransport):
    """An assistant turn that only calls tools is sent with content "" (some servers
    refuse null)."""

    def handle_request(self, request):
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            body = json.loads(request.content)
            for m in body.get("messages") or []:
                if m.get("role") == "assistant" and m.get("content") is None:
                    m["content"] = ""
            headers = {k: v for k, v in request.headers.items()
                       if k.lower() != "content-length"}
            request = httpx.Request(request.method, request.url, headers=headers,
                                    content=json.dumps(body).encode())
        return super().handle_request(request)


@tool
def search(query: str) -> str:
    """Search the abstracts; returns the best 3 as JSON (id, text)."""
    hits, _ = INDEX.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                             k=3, show_progress=False)
    return json.dumps([{"id": DOCS[int(i)]["_id"], "text": DOCS[int(i)]["text"][:300]}
                       for i in hits[0]])


def written_call(text):
    """The search query of a call the model wrote as JSON in its text, or None."""
    start = text.find("{") if isinstance(text, str) else -1
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:]) if start >= 0 else (None, 0)
    except ValueError:
        return None
    args = obj.get("arguments") if isinstance(obj, dict) else None
    if isinstance(obj, dict) and obj.get("name") == "search" and isinstance(args, dict):
        return args.get("query") if isinstance(args.get("query"), str) else None
    return None


class SearchEachTurn(AgentMiddleware):
    """The first model call after the user's message searches (see the module's note);
    ragmark calls the graph with ainvoke, so both ways are given."""

    @staticmethod
    def _first(request):
        since, asked = [], ""
        for m in request.messages:
            if isinstance(m, HumanMessage):
                since, asked = [], m.content
            else:
                since.append(m)
        return not any(isinstance(m, ToolMessage) for m in since), asked

    @staticmethod
    def _call(request, response, asked):
        said = response.result[-1] if response.result else None
        if getattr(said, "tool_calls", None):
            return response
        query = written_call(getattr(said, "content", "")) or asked
        call = {"name": "search", "args": {"query": query},
                "id": f"call_{len(request.messages)}"}
        return ModelResponse(result=[AIMessage(content="", tool_calls=[call])])

    def wrap_model_call(self, request, handler):
        first, asked = self._first(request)
        response = handler(request)
        return self._call(request, response, asked) if first else response

    async def awrap_model_call(self, request, handler):
        first, asked = self._first(request)
        response = await handler(request)
        return self._call(request, response, asked) if first else response


def graph():
    model = ChatOpenAI(base_url=URL, api_key="none", model=ALIAS, temperature=0,
                       max_tokens=200, timeout=600,
                       http_client=httpx.Client(transport=NullContentToEmpty(), timeout=600))
    return create_agent(model, [search], system_prompt=SYSTEM, checkpointer=InMemorySaver(),
                        middleware=[SearchEachTurn()])
'''


def _agent_config(work: Path, corpus: Path, url: str, alias: str) -> Path:
    """The LangGraph agent's module and its config (kind langchain, the search tool's
    calls its retrieval)."""
    (work / "trial_agent.py").write_text(
        f"CORPUS = {str(corpus)!r}\nURL = {url!r}\nALIAS = {alias!r}\n" + AGENT)
    path = work / "agent.toml"
    path.write_text(f'name = "langgraph-{alias}"\n[pipeline]\nkind = "langchain"\n'
                    'target = "trial_agent:graph"\npython_path = ["."]\n'
                    'search_tools = ["search"]\ntimeout = 900\n')
    return path


def _config(path: Path, url: str, alias: str) -> Path:
    path.write_text(f'name = "bm25-{alias}"\ntop_k = 10\ntop_n = 2\n[retriever]\n'
                    f'name = "bm25"\n[generator]\nname = "llm"\nbase_url = "{url}"\n'
                    f'model = "{alias}"\nmax_tokens = 200\nmax_context_tokens = 800\n')
    return path


def _whose(body: bytes, finished: set[str]) -> str:
    """Who sent a call that was sent again after the kill: the simulated user, or the
    system for a turn the journal had finished before the kill (asked twice: a bug) or
    for the turn in progress at the kill (a turn restarts whole: by design)."""
    try:
        messages = json.loads(body).get("messages") or []
    except ValueError:
        return "other"
    first = str(messages[0].get("content") if messages else "")
    if first.startswith("You play a person"):
        return "the simulated user"
    asked = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    if asked and any(q in asked[-1] for q in finished):
        return "the system, for a turn finished before the kill"
    return "the system, for the turn in progress at the kill"


def _kill_after(cmd: list[str], env: dict[str, str], journal: Path, turns: int
                ) -> dict[str, Any]:
    """Run ``cmd`` until ``turns`` turns are journaled, then SIGKILL it."""
    t0 = time.perf_counter()
    proc = _ragmark(cmd, env, start_new_session=True)
    while proc.poll() is None and _turns(journal) < turns:
        time.sleep(1)
    killed = proc.poll() is None
    at = time.perf_counter()
    if killed:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = set()
    for line in journal.read_text().splitlines() if journal.exists() else []:
        try:  # the last line may be cut short by the kill
            finished.add(json.loads(line)["question"])
        except (ValueError, KeyError):
            continue
    return {"killed": killed, "turns_before_kill": _turns(journal),
            "seconds": at - t0, "at": at, "finished": finished}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--alias", required=True)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA / "scifact")
    ap.add_argument("--documents", type=int, default=200)
    ap.add_argument("--scenarios", type=int, default=10)
    ap.add_argument("--max-turns", type=int, default=4)
    ap.add_argument("--kill-after", type=int, default=4, help="journaled turns")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--system", choices=["own", "langgraph"], default="own",
                    help="own: ragmark's BM25 + LLM pipeline over the slice; langgraph: a "
                         "LangGraph agent with memory and a BM25 search tool (the server "
                         "must take tool calls: llama-server with --jinja)")
    args = ap.parse_args()
    check_scifact(args.data)
    info = machine_info(["ragmark"])
    with tempfile.TemporaryDirectory() as tmp, Proxy(args.url) as proxy:
        work = Path(tmp)
        env = {**os.environ, "RAGMARK_HOME": str(work / "home")}
        corpus = corpus_slice(args.data, args.documents, work / "corpus.jsonl")
        llm = ["--llm-base-url", proxy.url, "--llm-model", args.alias,
               "--llm-timeout", str(args.timeout)]
        proxy.phase = "scenarios"
        t0 = time.perf_counter()
        got = _ragmark(["testset", "--scenarios", "--corpus", str(corpus), "--size",
                        str(args.scenarios), "--unit", "document", "--max-chars", "1500",
                        "--output", str(work / "scenarios.jsonl"), "--quiet", *llm], env)
        out, err = got.communicate()
        if got.returncode != 0:
            sys.exit(f"testset --scenarios failed: {err[-2000:]}")
        written = time.perf_counter() - t0
        report = json.loads((work / "scenarios.report.json").read_text())
        lines = [json.loads(x) for x in (work / "scenarios.jsonl").read_text().splitlines()]
        for x in lines:
            x["max_turns"] = args.max_turns
        (work / "scenarios.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        if args.system == "langgraph":
            cfg = _agent_config(work, corpus, proxy.url, args.alias)
            system = ["--config", str(cfg)]
        else:
            cfg = _config(work / "system.toml", proxy.url, args.alias)
            system = ["--config", str(cfg), "--corpus", str(corpus)]
        cmd = ["simulate", str(work / "scenarios.jsonl"), *system, "--transcripts",
               str(work / "talks.jsonl"), "--output", str(work / "sim.json"), "--quiet",
               *llm]
        proxy.phase = "simulate"
        killed = _kill_after(cmd, env, work / "talks.jsonl.journal", args.kill_after)
        proxy.phase = "resumed"
        t1 = time.perf_counter()
        again = _ragmark(cmd, env)
        out, err = again.communicate()
        resumed = time.perf_counter() - t1
        if again.returncode != 0:
            sys.exit(f"the resumed simulation failed: {err[-2000:]}")
        sim = json.loads((work / "sim.json").read_text())
        talks = [json.loads(x) for x in (work / "talks.jsonl").read_text().splitlines()]
    calls = [c for c in proxy.calls if c.phase in ("simulate", "resumed")]
    sent = Counter(c.body for c in calls)
    # a call in flight when the process was killed never got its answer to ragmark: it
    # is asked again, by design; one answered before the kill must not be
    answered = {c.body for c in calls if c.phase == "simulate"
                and c.start + c.seconds < killed["at"]}
    twice = sum(n - 1 for b, n in sent.items() if n > 1 and b in answered)
    in_flight = sum(n - 1 for b, n in sent.items() if n > 1 and b not in answered)
    whose = Counter(_whose(b, killed["finished"]) for b, n in sent.items()
                    if n > 1 and b in answered for _ in range(n - 1))
    lines_out = _table(args, info, report, written, killed, resumed, sim, talks, proxy,
                       (twice, in_flight), out)
    lines_out.insert(lines_out.index("| phase | calls | prompt tokens | completion tokens |")
                     - 1, "Of the calls answered before the kill and sent again: "
                     + (json.dumps(dict(whose)) if whose else "none") + ".")
    print("\n".join(lines_out))
    name = "simulate_trial" + ("_langgraph" if args.system == "langgraph" else "")
    write_results(args.out or RESULTS / f"{name}_{args.alias}.md", lines_out)


def _table(args: Any, info: dict[str, str], report: dict[str, Any], written: float,
           killed: dict[str, Any], resumed: float, sim: dict[str, Any],
           talks: list[dict[str, Any]], proxy: Proxy, twice: tuple[int, int], said: str
           ) -> list[str]:
    c = sim["configs"][0]
    s, m = c["summary"], c["conversation_metrics"]
    rows = [[phase, str(t["calls"]), f"{t['prompt_tokens']:,}", f"{t['completion_tokens']:,}"]
            for phase in ("scenarios", "simulate", "resumed")
            for t in [totals(proxy.of(phase))]]
    lines = header_lines("ragmark simulate tried with a local model", info,
                         "python benchmarks/simulate_trial.py " + " ".join(sys.argv[1:]))
    lines += ["", f"Server: {args.url} serving `{args.alias}`; SciFact's first "
              f"{args.documents} documents (BEIR SciFact, CC BY-NC 2.0 per its dataset card).", "",
              f"Scenarios: {report['kept']} kept of {report['generated']} written "
              f"({report['rejected_by_reason']}; quotes dropped {report['quotes_dropped']}, "
              f"facts dropped {report['facts_dropped']}) in {written:.0f} s.", "",
              f"Kill and resume: killed={killed['killed']} after "
              f"{killed['turns_before_kill']} journaled turns ({killed['seconds']:.0f} s); "
              f"the rerun took {resumed:.0f} s; calls answered before the kill and sent "
              f"again after it: {twice[0]} (in flight at the kill, so asked again: "
              f"{twice[1]}).",
              "", *md_table(["phase", "calls", "prompt tokens", "completion tokens"], rows),
              "", "How the conversations ended: " + json.dumps(s["outcomes"]),
              f"Role adherence: {s['role_adherence']}; role breaks {s['role_breaks']}.",
              "Goal completion (judged): " + json.dumps(m["goal_completion"]),
              "Knowledge retention: " + json.dumps(m["knowledge_retention"]),
              "Judge and simulated user agree: " + json.dumps(m["goal_agreement"]), "",
              "## The conversations", ""]
    for t in talks:
        lines += [f"### {t['conversation_id']}: {t['outcome']}", "",
                  f"Scenario: {t['scenario']}", f"Expected: {t['expected_outcome']}", ""]
        for n, turn in enumerate(t["turns"], start=1):
            answer = turn.get("answer") or f"(failed: {turn.get('error')})"
            lines += [f"{n}. USER: {turn['question']}", f"   ASSISTANT: {answer[:400]}"]
        lines += ["", "Scores: " + json.dumps(t.get("conversation_metrics")), ""]
    lines += ["## What ragmark printed", "", "```", said.strip(), "```"]
    return lines


if __name__ == "__main__":
    main()
