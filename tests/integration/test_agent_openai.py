"""A tool-calling app on the OpenAI Python client, traced by OpenTelemetry's own
``opentelemetry-instrumentation-openai-v2`` (the GenAI conventions, messages on the
spans), calling llama.cpp's server (SmolLM2, ``chatml-function-calling``) with a tool
(issue 50, "done means"): the app asks, runs the tool the model called and sends its
result back; ``run --traces`` reads the call the model made, its arguments as the
model wrote them, and the result the app sent (the only record of the tool's run: the
app traces no tool span), each once."""

from __future__ import annotations

import json

import pytest
from support.cli import run_cli
from support.llama import MISSING, WHY_MISSING, llama_server
from support.otlp import otlp_json

pytestmark = pytest.mark.skipif(MISSING, reason=WHY_MISSING)

TOOLS = [{"type": "function", "function": {
    "name": "search", "description": "Search the documents for a query",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                   "required": ["query"]}}}]


@pytest.fixture
def genai_spans(monkeypatch):
    pytest.importorskip("openai")
    instrumentation = pytest.importorskip("opentelemetry.instrumentation.openai_v2")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = instrumentation.OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield provider, exporter
    inst.uninstrument()


def test_an_openai_client_app_with_a_tool(genai_spans, tmp_path, capsys):
    from openai import OpenAI

    provider, exporter = genai_spans
    tracer = provider.get_tracer("app")
    asked = "Search the documents about the Eiffel Tower."
    with llama_server(tmp_path / "llama.log", "--chat_format",
                      "chatml-function-calling") as url:
        client = OpenAI(base_url=url, api_key="none")
        with tracer.start_as_current_span("ask") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_workflow")
            root.set_attribute("gen_ai.input.messages", json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": asked}]}]))
            messages: list = [{"role": "user", "content": asked}]
            first = client.chat.completions.create(
                model="smollm2", messages=messages, tools=TOOLS, max_tokens=40, seed=1,
                tool_choice={"type": "function", "function": {"name": "search"}})
            call = first.choices[0].message.tool_calls[0]
            result = "The Eiffel Tower was finished in 1889."
            said = first.choices[0].message.model_dump(exclude_none=True)
            messages += [{**said, "content": said.get("content") or ""},  # the template
                         {"role": "tool", "tool_call_id": call.id, "content": result}]
            final = client.chat.completions.create(model="smollm2", messages=messages,
                                                   max_tokens=20, seed=1)
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--traces", str(path), "--metrics",
                            "tool_calls,tool_error_rate,repeated_calls", "--output", str(out),
                            "--include-details", "--no-history", "--quiet"], capsys)
    assert code == 0, err
    (q,) = json.loads(out.read_text())["queries"]
    assert q["question"] == asked
    assert q["answer"] == (final.choices[0].message.content or "")
    steps = q["trajectory"]
    assert [s["kind"] for s in steps] == ["model", "tool", "model"]
    (made,) = steps[0]["tool_calls"]
    assert (made["name"], made["id"]) == ("search", call.id)
    assert made.get("arguments", made.get("raw")) == (
        json.loads(call.function.arguments) if "arguments" in made else call.function.arguments)
    assert steps[0]["prompt_tokens"] == first.usage.prompt_tokens
    assert (steps[1]["name"], steps[1]["id"], steps[1]["result"]) == ("search", call.id, result)
    assert q["metrics"] == {"tool_calls": 1.0, "tool_error_rate": 0.0, "repeated_calls": 0.0}
