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
from ragmark.config import load_configs
from ragmark.data.leniency import Leniency
from ragmark.errors import ConfigError
from ragmark.llm import LLMSettings
from ragmark.llm.factory import check_endpoint, direct_client
from ragmark.llm.fields import SET_ENDPOINT
from ragmark.pipelines.config import HttpPipelineConfig, PythonPipelineConfig, pipeline_json
from ragmark.plan.endpoint import resolve_llm
from ragmark.plan.paths import check_output
from ragmark.progress import Progress
from ragmark.running.source import build
from ragmark.simulate.journal import Journal
from ragmark.simulate.play import play_all
from ragmark.simulate.scenarios import Scenario, load_scenarios
from ragmark.simulate.transcripts import chat_messages, conversation_line, summary


@dataclass(frozen=True)
class SimulateRequest:
    scenarios: str
    config: str
    transcripts: str
    messages: str | None = None
    concurrency: int = 2
    temperature: float = 0.0
    seed: int = 0
    fresh: bool = False
    strict: bool = False
    encoding: str | None = None
    llm_flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SimulatePlan:
    scenarios: tuple[Scenario, ...]
    system: PythonPipelineConfig | HttpPipelineConfig
    system_name: str
    simulator: LLMSettings
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
                "system": pipeline_json(self.system), "model": self.simulator.model,
                "url": self.simulator.display_url, "temperature": self.temperature,
                "seed": self.seed}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def plan_simulate(req: SimulateRequest) -> SimulatePlan:
    """Everything checked before a call: bad input is an error naming where."""
    if req.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {req.concurrency}")
    lenient = Leniency(strict=req.strict, encoding=req.encoding)
    scenarios = load_scenarios(Path(req.scenarios), lenient)
    cfg = load_configs(req.config)[0]
    if cfg.pipeline is None:
        raise ConfigError(f"{req.config}: simulate asks a system in turns: give a config "
                          "with a [pipeline] table (python, langchain, llamaindex or http)")
    settings, _ = resolve_llm([cfg], req.llm_flags)
    if settings is None:
        raise ConfigError(f"the simulated user is an LLM: give --llm-base-url and "
                          f"--llm-model, or {SET_ENDPOINT}")
    out = check_output(req.transcripts, "--transcripts")
    check_output(out.with_name(out.name + ".journal"), "--transcripts (its journal)")
    messages = None if req.messages is None else check_output(req.messages, "--messages")
    check_endpoint(settings, "the simulated user's endpoint")
    return SimulatePlan(tuple(scenarios), cfg.pipeline, cfg.name, settings, out, messages,
                        req.concurrency, req.temperature, req.seed, req.fresh,
                        tuple(lenient.messages()))


def execute_simulate(plan: SimulatePlan, progress: Progress) -> dict[str, Any]:
    """Play every scenario (resuming the journal), write the transcripts, and return the
    report: the summary and each conversation's outcome."""
    journal = Journal(plan.journal, plan.key, fresh=plan.fresh)
    system = build(plan.system)

    async def main() -> Any:
        async with direct_client(plan.simulator) as client, system:
            return await play_all(plan.scenarios, system, client, journal, plan.concurrency,
                                  advance, temperature=plan.temperature, seed=plan.seed)

    with progress.task(f"simulating {len(plan.scenarios)} conversations",
                       len(plan.scenarios)) as advance:
        played, counts = run_sync(main())
    lines = [conversation_line(s, p) for s, p in zip(plan.scenarios, played, strict=True)]
    _write_lines(plan.transcripts, [x for x in lines if x is not None])
    if plan.messages is not None:
        _write_lines(plan.messages, [{"conversation_id": p.scenario,
                                      "messages": chat_messages(p)} for p in played])
    closing = [len(journal.closing_breaks(p.scenario)) for p in played]
    return {"system": plan.system_name, "simulator": plan.simulator.model,
            "summary": summary(played, closing),
            "conversations": [{"id": p.scenario, "outcome": p.outcome,
                               "turns": len(p.turns), **({"reason": p.reason}
                                                         if p.reason else {})}
                              for p in played],
            "transcripts": str(plan.transcripts), "journal": str(plan.journal),
            "left_out": [p.scenario for p in played if not p.turns],
            "resumed_lines_dropped": journal.dropped,
            "simulator_calls": {"asked": counts.asked, "reasked": counts.reasked,
                                "failed": counts.failed}}


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as JSON Lines, whole or not at all (written beside, then moved)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    tmp.replace(path)
