"""The ``[pipeline]`` table of a config: an external RAG system ragmark asks, instead of
running its own retriever and generator.

A Python callable::

    [pipeline]
    kind = "python"
    target = "mypkg.rag:answer"   # module:function, called with the question
    python_path = ["."]           # folders put on sys.path first (relative to the TOML)
    concurrency = 1               # questions asked at the same time (threads)
    timeout = 60                  # seconds per question (optional)

A LangChain retriever or runnable, or a LlamaIndex query engine or retriever (the extras
``ragmark-eval[langchain]``, ``ragmark-eval[llamaindex]``)::

    [pipeline]
    kind = "langchain"            # or "llamaindex"
    target = "mypkg.rag:chain"    # module:attribute, the object or a function building it

An HTTP endpoint::

    [pipeline]
    kind = "http"
    url = "http://127.0.0.1:8000/ask"
    question_field = "question"             # request body key that holds the question
    answer_path = "data.answer"             # where the answer is in the JSON response
    contexts_path = "data.sources[*].text"  # where the contexts are (see jsonpath)
    timeout = 30
    concurrency = 4
    retries = 2                             # on connection errors, 429 and 5xx
    body = { top_k = 5 }                    # fixed fields sent with every question
    api_key_env = "MY_SERVICE_KEY"          # NAME of a variable: sent as a Bearer token
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragmark.pipelines.jsonpath import JsonPath

_TARGET = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PythonPipelineConfig(BaseModel):
    """A Python callable ``module:function`` that takes a question and returns the
    answer with its contexts (sync or async)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["python", "langchain", "llamaindex"]
    """``python``: a function of the question; ``langchain`` / ``llamaindex``: a
    LangChain retriever or runnable, a LlamaIndex query engine or retriever (or a
    function of no arguments that builds one; :mod:`ragmark.pipelines.adapters`)."""
    target: str
    python_path: list[str] = []
    concurrency: int = Field(1, ge=1, le=256)
    timeout: float | None = Field(None, gt=0)
    search_tools: list[str] = []
    """An agent's tools whose calls are its retrieval (each a hop; see
    :func:`ragmark.data.trajectories.searched`), when it returns its messages."""
    documents: str | None = None
    """``module:function`` that takes extra documents into the system's store (a list
    of ``{"id", "text", "title", "metadata"}``), replacing any it was given before; ``[]``
    takes them out. ``ragmark probe`` plants its documents through it."""

    @field_validator("target", "documents")
    @classmethod
    def _check_target(cls, v: str | None) -> str | None:
        if v is not None and not _TARGET.match(v.strip()):
            raise ValueError("expected 'module:function' (e.g. 'mypkg.rag:answer')")
        return None if v is None else v.strip()


class HttpPipelineConfig(BaseModel):
    """An HTTP endpoint: POST a JSON body holding the question; the answer and the
    contexts are found in the JSON response by path."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["http"]
    url: str
    question_field: str = Field("question", min_length=1)
    answer_path: str = "answer"
    contexts_path: str = "contexts"
    hops_path: str | None = None
    """Where the retrieval steps are, instead of ``contexts_path``: a list of
    ``{"name"?, "contexts"}`` (merged in step order as the ranking, each step judged on
    its own)."""
    messages_field: str = Field("messages", min_length=1)
    """For the turns of a conversation: the body field that gets the conversation so far
    as chat messages (``[{"role": "user"|"assistant", "content"}]``, the turn's question
    last)."""
    conversation_field: str | None = Field(None, min_length=1)
    """For the turns of a conversation: the body field that also gets the conversation's
    id (a service that keeps its own memory per session); None: the id is not sent."""
    body: dict[str, Any] = {}
    timeout: float = Field(30.0, gt=0)
    concurrency: int = Field(4, ge=1, le=256)
    retries: int = Field(2, ge=0, le=10)
    backoff: float = Field(0.5, ge=0, le=60)
    api_key_env: str | None = None

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str) -> str:
        parts = urlsplit(v.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("expected an http:// or https:// URL")
        return v.strip()

    @field_validator("answer_path", "contexts_path", "hops_path")
    @classmethod
    def _check_path(cls, v: str | None) -> str | None:
        if v is not None:
            JsonPath.parse(v)
        return v

    @field_validator("api_key_env")
    @classmethod
    def _check_env(cls, v: str | None) -> str | None:
        if v is not None and not _ENV_NAME.match(v):
            raise ValueError("expected the NAME of an environment variable, not a key")
        return v

    @property
    def display_url(self) -> str:
        """The URL without any user:password part, for messages and reports."""
        p = urlsplit(self.url)
        return urlunsplit((p.scheme, p.netloc.rsplit("@", 1)[-1], p.path, p.query, ""))


PipelineConfig = Annotated[PythonPipelineConfig | HttpPipelineConfig,
                           Field(discriminator="kind")]
PIPELINE_MODELS: dict[str, type[BaseModel]] = {
    "python": PythonPipelineConfig, "langchain": PythonPipelineConfig,
    "llamaindex": PythonPipelineConfig, "http": HttpPipelineConfig}


def pipeline_json(cfg: PythonPipelineConfig | HttpPipelineConfig) -> dict[str, Any]:
    """The pipeline as the results file records it (no credentials in the URL)."""
    data = cfg.model_dump(mode="json")
    if isinstance(cfg, HttpPipelineConfig):
        data["url"] = cfg.display_url
        if cfg.hops_path is None:  # recorded when used: a config without it as before
            del data["hops_path"]
        if cfg.messages_field == "messages":
            del data["messages_field"]
        if cfg.conversation_field is None:  # a config without it hashes as before
            del data["conversation_field"]
    return data
