"""The anchor of benchmarks/criteria.py: DeepEval's GEval on an OpenAI-compatible local
server, run in an environment that has deepeval (``--deepeval-python``). The judge is a
DeepEvalBaseLLM over the server with ``generate_raw_response``, so GEval weighs its score
by the log-probabilities as it does for OpenAI's models (its best configuration); the
evaluation steps are written by the model from the criterion, as GEval does. Prints one
JSON line: each item's score (None where GEval raised), calls, tokens."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from data.plain_language_30 import ITEMS
from deepeval.metrics import GEval
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import LLMTestCase, LLMTestCaseParams
from openai import OpenAI


class LocalServer(DeepEvalBaseLLM):
    """The server's model, asked for JSON (and, for the score, log-probabilities)."""

    def __init__(self, url: str, alias: str) -> None:
        self.url, self.alias = url, alias
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        super().__init__(alias)

    def load_model(self, *args: Any, **kwargs: Any) -> Any:
        return OpenAI(base_url=self.url, api_key="none", timeout=600)

    def _chat(self, prompt: str, **more: Any) -> Any:
        got = self.model.chat.completions.create(
            model=self.alias, messages=[{"role": "user", "content": prompt}],
            temperature=0, response_format={"type": "json_object"}, **more)
        self.calls += 1
        self.prompt_tokens += got.usage.prompt_tokens
        self.completion_tokens += got.usage.completion_tokens
        return got

    def generate(self, prompt: str, schema: Any = None, **kwargs: Any) -> Any:
        text = self._chat(prompt).choices[0].message.content
        return schema.model_validate_json(text) if schema is not None else text

    async def a_generate(self, prompt: str, schema: Any = None, **kwargs: Any) -> Any:
        return self.generate(prompt, schema)

    def generate_raw_response(self, prompt: str, top_logprobs: int = 5, **kwargs: Any
                              ) -> tuple[Any, float]:
        return self._chat(prompt, logprobs=True, top_logprobs=min(top_logprobs, 20)), 0.0

    async def a_generate_raw_response(self, prompt: str, top_logprobs: int = 5,
                                      **kwargs: Any) -> tuple[Any, float]:
        return self.generate_raw_response(prompt, top_logprobs)

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return self.alias


def main() -> None:
    import deepeval

    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--alias", required=True)
    ap.add_argument("--criterion", required=True)
    args = ap.parse_args()
    model = LocalServer(args.url, args.alias)
    scores: list[float | None] = []
    metric = GEval(name="plain_language", criteria=args.criterion, model=model,
                   evaluation_params=[LLMTestCaseParams.INPUT,
                                      LLMTestCaseParams.ACTUAL_OUTPUT],
                   async_mode=False, verbose_mode=False)  # one metric, as a user has it
    for question, answer, _ in ITEMS:
        try:
            metric.measure(LLMTestCase(input=question, actual_output=answer))
            scores.append(float(metric.score))
        except Exception as e:  # noqa: BLE001  (an item GEval could not score)
            print(f"item failed: {type(e).__name__}: {e}", file=sys.stderr)
            scores.append(None)
    steps = list(getattr(metric, "evaluation_steps", None) or [])
    print(json.dumps({"scores": scores, "calls": model.calls,
                      "prompt_tokens": model.prompt_tokens,
                      "completion_tokens": model.completion_tokens,
                      "version": deepeval.__version__, "steps": steps}))


if __name__ == "__main__":
    main()
