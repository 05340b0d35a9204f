"""A config's raw tables completed before they are validated: the embedding endpoint
of ``provider = "env"``, the reranker ``name = "auto"`` stands for, and the stemmer and
stop-words a ``language`` gives BM25. Each writes into the table, so the results file
records what was used."""

from __future__ import annotations

import os
from typing import Any

from ragmark.errors import ConfigError
from ragmark.languages import analysis_for, language_code
from ragmark.llm.fields import BASE_URL_ENV, MODEL_ENV
from ragmark.retrieval.rerank import RERANKER_ENV

EMBEDDING_ENV = {"base_url": "RAGMARK_EMBEDDING_BASE_URL", "model": "RAGMARK_EMBEDDING_MODEL",
                 "provider": "RAGMARK_EMBEDDING_PROVIDER",
                 "api_key_env": "RAGMARK_EMBEDDING_API_KEY_ENV"}
"""Where ``provider = "env"`` (the built-in ``dense-api`` config) finds its endpoint."""


def resolve_embedding_env(data: dict[str, Any], source: str) -> None:
    """``provider = "env"`` in a retriever or chunker table: the embedding endpoint from
    ``RAGMARK_EMBEDDING_*`` (provider ``openai`` unless set), written into the config so
    the results file records it."""
    tables = [data.get("chunker"), data.get("retriever")]
    tables += list(data["retriever"].get("retrievers") or []) if isinstance(
        data.get("retriever"), dict) else []
    for kind, table in zip(["chunker", "retriever"] + ["retriever"] * (len(tables) - 2),
                           tables, strict=True):
        if not isinstance(table, dict) or table.get("provider") != "env":
            continue
        got = {k: os.environ.get(v, "").strip() for k, v in EMBEDDING_ENV.items()}
        if not got["base_url"] or not got["model"]:
            raise ConfigError(
                f"{source}, key '{kind}': provider = \"env\" takes the embedding endpoint "
                f"from {EMBEDDING_ENV['base_url']} and {EMBEDDING_ENV['model']} (and "
                f"optionally {EMBEDDING_ENV['provider']}, {EMBEDDING_ENV['api_key_env']}); "
                "set them, or give provider, base_url and model in a TOML config")
        table.update({k: v for k, v in got.items() if v})
        table.setdefault("provider", "openai")
        if table["provider"] == "env":
            table["provider"] = "openai"


def resolve_auto_reranker(data: dict[str, Any], source: str) -> None:
    """``[reranker] name = "auto"``: the cross-encoder named by RAGMARK_RERANKER_MODEL (or
    ``model``), else the LLM reranker when an LLM endpoint is set, else a clear error."""
    rr = data.get("reranker")
    if not isinstance(rr, dict) or rr.get("name") != "auto":
        return
    params = {k: v for k, v in rr.items() if k != "name"}
    if os.environ.get(RERANKER_ENV) or params.get("model"):
        # the model goes into the config, so the results file records it
        data["reranker"] = {"name": "cross-encoder", "model": os.environ.get(RERANKER_ENV),
                            **params}
        return
    table = data.get("llm")
    if os.environ.get(BASE_URL_ENV, "").strip() or (
            isinstance(table, dict) and table.get("base_url")):
        # the endpoint comes from [llm] or RAGMARK_LLM_* when the run starts
        data["reranker"] = {"name": "llm", **params}
        return
    raise ConfigError(
        f"{source}, key 'reranker': this config reranks, but no reranker is set up. Set "
        f"{RERANKER_ENV} to a cross-encoder model folder, or {BASE_URL_ENV} and "
        f"{MODEL_ENV} (or an [llm] table) for the LLM reranker, or give a TOML config "
        "with [reranker] name = \"cross-encoder\" and model = \"PATH\" (or name = \"llm\"). "
        "No reranker "
        "model ships with ragmark."
    )


def _where(source: str) -> str:
    """How an error names the language: the flag, or the file's key."""
    return source if source.startswith("--") else f"{source}, key 'language'"


def apply_language(data: dict[str, Any], source: str) -> None:
    """``language = "de"``: every bm25 retriever (a hybrid's too) stems and drops the
    stop-words of that language, and an ``llm`` reranker's judge is told it, unless
    their tables say otherwise."""
    lang = data.get("language")
    if lang is None:
        return

    if not isinstance(lang, str):
        raise ConfigError(f"{_where(source)}: expected a language code such as 'de', got "
                          f"{lang!r}")
    try:
        stemmer, stopwords = analysis_for(lang)
        data["language"] = language_code(lang)
    except ValueError as e:
        raise ConfigError(f"{_where(source)}: {e}") from None
    if "pipeline" in data:
        return

    def fill(comp: Any) -> None:
        if not isinstance(comp, dict):
            return
        if comp.get("name") == "bm25":
            comp.setdefault("stemmer", stemmer or "none")
            comp.setdefault("stopwords", stopwords or "none")
        for sub in comp.get("retrievers") or []:
            fill(sub)

    fill(data.setdefault("retriever", {"name": "bm25"}))
    reranker = data.get("reranker")
    if isinstance(reranker, dict) and reranker.get("name") == "llm":
        reranker.setdefault("language", data["language"])
