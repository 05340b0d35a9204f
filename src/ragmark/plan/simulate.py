"""``ragmark simulate``: what a simulation will do, checked before any call (the
scenarios read, the system's config read, the simulator's endpoint alive), then done:
every scenario played (:mod:`ragmark.simulate.play`), the conversations written as a
conversation log (``--transcripts``) that ``ragmark run --outputs`` scores with any
metric, and how they ended summarised."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragmark.aio import run_sync
from ragmark.config import RunConfig, load_configs
from ragmark.data.corpus import open_corpus
from ragmark.data.fingerprint import dataset_hash
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError
from ragmark.llm import LLMSettings
from ragmark.llm.factory import check_endpoint, direct_client
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.llm.table import SimulatorTable
from ragmark.pipelines.config import HttpPipelineConfig, PythonPipelineConfig, pipeline_json
from ragmark.plan.endpoint import model_at, resolve_llm
from ragmark.plan.paths import check_output
from ragmark.progress import Progress
from ragmark.running.source import build
from ragmark.running.turns import OwnTurns
from ragmark.simulate.journal import Journal
from ragmark.simulate.play import play_all
from ragmark.simulate.scenarios import Scenario, load_scenarios
from ragmark.simulate.scores import judge_conversations, score_json, score_summary
from ragmark.simulate.transcripts import chat_messages, conversation_line, summary
from ragmark.types import Dataset


@dataclass(frozen=True)
class SimulateRequest:
    scenarios: str
    config: str
    transcripts: str
    messages: str | None = None
    concurrency: int = 2
    temperature: float | None = None
    """--simulator-temperature; None: the [simulator] table's, else 0."""
    simulator: str | None = None
    """--simulator MODEL[@URL]: the simulated user's model, at the judges' endpoint or URL."""
    seed: int = 0
    fresh: bool = False
    strict: bool = False
    encoding: str | None = None
    corpus: str | None = None
    llm_flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SimulatePlan:
    scenarios: tuple[Scenario, ...]
    system: PythonPipelineConfig | HttpPipelineConfig | OwnTurns
    """The config's [pipeline], or ragmark's own pipeline over --corpus."""
    system_name: str
    simulator: LLMSettings
    judges: LLMSettings
    """The endpoint of the judges that score the conversations (--llm-*)."""
    transcripts: Path
    messages: Path | None
    concurrency: int
    temperature: float
    seed: int
    fresh: bool
    warnings: tuple[str, ...]

    @property
    def journal(self) -> Path:
        """Where the turns are written as they finish (what a resume reads)."""
        return self.transcripts.with_name(self.transcripts.name + ".journal")

    @property
    def key(self) -> str:
        """What the simulation depends on: the scenarios, the system, the simulator's
        model and endpoint, its temperature and seed."""
        what = {"scenarios": [asdict(s) for s in self.scenarios],
                "system": system_json(self.system), "model": self.simulator.model,
                "url": self.simulator.display_url, "temperature": self.temperature,
                "seed": self.seed}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def plan_simulate(req: SimulateRequest) -> SimulatePlan:
    """Everything checked before a call: bad input is an error naming where."""
    if req.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {req.concurrency}")
    lenient = Leniency(strict=req.strict, encoding=req.encoding)
    scenarios = load_scenarios(Path(req.scenarios), lenient)
    judges, cfgs = resolve_llm(load_configs(req.config)[:1], req.llm_flags)
    cfg = cfgs[0]
    system = _system(cfg, req, lenient)
    settings = simulator_settings(judges, cfg.simulator, req.simulator)
    temperature = req.temperature if req.temperature is not None else float(
        (cfg.simulator.values() if cfg.simulator else {}).get("temperature", 0.0))
    out = check_output(req.transcripts, "--transcripts")
    check_output(out.with_name(out.name + ".journal"), "--transcripts (its journal)")
    messages = None if req.messages is None else check_output(req.messages, "--messages")
    check_endpoint(settings, "the simulated user's endpoint")
    if judges is not None and judges.base_url != settings.base_url:
        check_endpoint(judges, "the judges' endpoint")
    if isinstance(system, OwnTurns) and system.llm_settings is not None:
        check_endpoint(system.llm_settings, "the system's LLM generator endpoint")
    assert judges is not None  # simulator_settings refused none
    return SimulatePlan(tuple(scenarios), system, cfg.name, settings, judges, out, messages,
                        req.concurrency, temperature, req.seed, req.fresh,
                        tuple(lenient.messages()))


def simulator_settings(judges: LLMSettings | None, table: SimulatorTable | None,
                       flag: str | None) -> LLMSettings:
    """The simulated user's endpoint: the judges' (``--llm-*``, ``[llm]``,
    ``RAGMARK_LLM_*``), the config's ``[simulator]`` fields over it, ``--simulator
    MODEL[@URL]`` over both."""
    if judges is None:
        raise ConfigError("the simulated user is an LLM at the judges' endpoint (unless "
                          "--simulator MODEL@URL or a [simulator] table says otherwise): "
                          f"give --llm-base-url and --llm-model, or {SET_ENDPOINT}")
    got = judges.model_copy(update=table.values()) if table is not None else judges
    return got.model_copy(update=model_at(flag, "--simulator")) if flag else got


def _system(cfg: RunConfig, req: SimulateRequest, lenient: Leniency
            ) -> PythonPipelineConfig | HttpPipelineConfig | OwnTurns:
    """What is simulated against: the config's [pipeline], or ragmark's own pipeline
    (retriever, reranker, generator) over --corpus."""
    if cfg.pipeline is not None:
        if req.corpus is not None:
            raise ConfigError(f"--corpus is what ragmark's own pipeline retrieves from; "
                              f"config {cfg.name!r} has a [pipeline], which retrieves by "
                              "itself: leave --corpus out")
        return cfg.pipeline
    if req.corpus is None:
        raise ConfigError(f"config {cfg.name!r} has no [pipeline], so simulate asks "
                          "ragmark's own pipeline: give --corpus, the documents it "
                          "retrieves from (or a config with a [pipeline] table: python, "
                          "langchain, llamaindex or http)")
    corpus, chunker = open_corpus(req.corpus, lenient)
    dataset = Dataset(Path(req.corpus).name, str(req.corpus), "corpus", (), corpus, chunker)
    return OwnTurns(dataset, cfg)


def system_json(system: PythonPipelineConfig | HttpPipelineConfig | OwnTurns
                ) -> dict[str, Any]:
    """The system as a simulation's key holds it: a [pipeline], or ragmark's own
    pipeline's config with its corpus's fingerprint."""
    if isinstance(system, OwnTurns):
        return {"own": system.describe(), "corpus": dataset_hash(system.dataset)}
    return pipeline_json(system)


def execute_simulate(plan: SimulatePlan, progress: Progress) -> dict[str, Any]:
    """Play every scenario (resuming the journal), write the transcripts, and return the
    report: the summary and each conversation's outcome."""
    journal = Journal(plan.journal, plan.key, fresh=plan.fresh)
    if isinstance(plan.system, OwnTurns):
        plan.system.prepare(progress)
        system: Any = plan.system
    else:
        system = build(plan.system)

    async def main() -> Any:
        async with direct_client(plan.simulator) as client, system:
            return await play_all(plan.scenarios, system, client, journal, plan.concurrency,
                                  advance, temperature=plan.temperature, seed=plan.seed)

    with progress.task(f"simulating {len(plan.scenarios)} conversations",
                       len(plan.scenarios)) as advance:
        played, counts = run_sync(main())

    async def judged() -> Any:
        async with direct_client(plan.judges) as client:
            return await judge_conversations(plan.scenarios, played, client,
                                             plan.concurrency, advance)

    with progress.task(f"judging {len(played)} conversations", len(played)) as advance:
        scores, judge_counts = run_sync(judged())
    lines = [conversation_line(s, p, {m: score_json(v) for m, v in got.items()})
             for s, p, got in zip(plan.scenarios, played, scores, strict=True)]
    _write_lines(plan.transcripts, [x for x in lines if x is not None])
    if plan.messages is not None:
        _write_lines(plan.messages, [{"conversation_id": p.scenario,
                                      "messages": chat_messages(p)} for p in played])
    closing = [len(journal.closing_breaks(p.scenario)) for p in played]
    return {"system": plan.system_name, "simulator": plan.simulator.model,
            "judges": plan.judges.model,
            "summary": summary(played, closing),
            "conversation_metrics": score_summary(played, scores),
            "conversations": [{"id": p.scenario, "outcome": p.outcome,
                               "turns": len(p.turns), **({"reason": p.reason}
                                                         if p.reason else {})}
                              for p in played],
            "transcripts": str(plan.transcripts), "journal": str(plan.journal),
            "left_out": [p.scenario for p in played if not p.turns],
            "resumed_lines_dropped": journal.dropped,
            "simulator_calls": {"asked": counts.asked, "reasked": counts.reasked,
                                "failed": counts.failed},
            "judge_calls": {"asked": judge_counts.asked, "reasked": judge_counts.reasked,
                            "failed": judge_counts.failed}}


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as JSON Lines, whole or not at all (written beside, then moved)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    tmp.replace(path)
