"""The meaning of each flag that several commands take, written once: a command
declares it with :func:`option`. A flag means one thing; where what it does there
differs (``--output``: the report, the set, the page), each command's help says only its
own (:data:`MEANINGS` by command; ``*``: every other command's). The test of flag
meanings walks every command's options and fails on a help text that speaks of another
command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ragmark.metrics.names import groups, judge_metrics

MEANINGS: dict[str, str | dict[str, str]] = {
    "--allow-missing": {
        "*": "Do not exit 1 when a metric asked for got no value for any question, or "
             "every question of a config failed.",
        "label": "Do not exit 1 when no question of a config got a label.",
        "probe": "Do not exit 1 when a target got no answer (its arm's rates then cover "
                 "the targets answered).",
    },
    "--config": {
        "*": "The configuration to run: a built-in name or a TOML file (with --outputs or "
             "--traces: one that sets only how they are judged, its [llm] and [judges] "
             "tables).",
        "testset": "The configuration whose chunker cuts the passages questions are "
                   "written from: a built-in name or a TOML file.",
        "simulate": "A system the simulated users talk to: a TOML file with a "
                    "[pipeline] table (python, langchain, llamaindex or http), or a config "
                    "of ragmark's own pipeline (with --corpus); repeat the flag to compare "
                    "systems on the same scenarios (the first is the baseline).",
    },
    "--config-name": {
        "*": "A config's name in the results file or the history.",
        "inspect": "The config of a compare file to look inside [default: the compare's "
                   "baseline].",
        "review export": "The config of a compare or label file to sample [default: its "
                         "first].",
        "annotate": "The config of a compare or label file whose items are labelled "
                    "[default: its first]; with --task pairwise:CRITERION, B (A is the "
                    "baseline).",
        "diff": "The config 'last' and 'last~N' name, needed when the history has several.",
        "power": "The config 'last' names, needed when the history has several.",
        "history": "Only the runs of this config.",
        "history trend": "The config whose metric is followed.",
    },
    "--corpus": {
        "*": "Corpus: folder of .txt/.md files, JSONL file, or BEIR folder.",
        "simulate": "What ragmark's own pipeline retrieves from, for a config without a "
                    "[pipeline] (a folder of .txt/.md files, a JSONL file or a BEIR "
                    "folder); chunked and indexed once.",
    },
    "--dataset": {
        "*": "The dataset: a BEIR (or TREC RAG) or Open RAG Benchmark folder, or a "
             "keyword/context set JSON(L) file.",
        "history": "Only the runs on this dataset, by name or hash prefix.",
        "history trend": "The dataset whose runs are followed, by name or hash prefix "
                         "[default: that of the config's newest run].",
    },
    "--outputs": {
        "*": "A system's logged outputs, scored instead of running a config: JSONL of "
             "{question, answer, contexts, ground_truth_contexts?, expected_answer?, ...} "
             "(or a RAGAS or DeepEval file, a saved Hugging Face dataset folder, TREC "
             "RAG's answer files); with --dataset, the dataset's ground truth scores them "
             "(joined by id, else question text). Not with --config(s).",
        "compare": "A system's logged outputs, one file a system (repeat the flag), named "
                   "by its run_id, else the file's name, compared on --dataset's "
                   "questions: JSONL of {question, answer, contexts, ...} (or a RAGAS or "
                   "DeepEval file, a saved Hugging Face dataset folder, TREC RAG's answer "
                   "files). Not with --configs.",
        "probe": "ARM=FILE, repeatable: the answers a system logged with the planted "
                 "documents of ARM (injection:plain, poisoning, ...; clean=FILE: with "
                 "none), with the same --dataset, --targets, --seed and --copies as "
                 "--write-planted.",
    },
    "--include-details": "Per-question records (retrieved items, answers, missing "
                         "reasons) in the JSON, so 'ragmark inspect' works fully on it.",
    "--json": "Print JSON instead of text.",
    "--judge-metrics": {
        "*": "Comma-separated LLM judge metrics: {judges}; see `ragmark metrics`; "
             "'none' for none [default: none].",
        "monitor": "Comma-separated LLM judge metrics on the window's sample: {judges}; "
                   "see `ragmark metrics`; 'none' for none [default: faithfulness, "
                   "answer_relevance and context_relevance when an LLM endpoint is set].",
    },
    "--judge-model": "A judge model at the endpoint; repeat it to measure several side by "
                     "side (each with its own results; their agreement is printed) "
                     "[default: --llm-model].",
    "--junit": "Write every gate condition as JUnit XML (one test case each).",
    "--kind": "Only runs of this kind.",
    "--language": {
        "*": "The data's language (de, german, zh, ...), given to every config as its "
             "'language' key (BM25's stemmer and stop-words, the judges' claims).",
        "testset": "The language the questions and answers are written in (de, german, "
                   "zh, ...), whatever the documents' (the quotes stay as written).",
    },
    "--margin": "Fail only on changes larger than this, in the metric's unit (a practical "
                "threshold).",
    "--max-queries": "Only the first N questions.",
    "--store": "The label store of `ragmark annotate`, which store:QUEUE reads [default: "
               "labels.sqlite beside the run history, --history].",
    "--metric": {
        "history": "Only the runs that computed this metric, with its value.",
        "history trend": "The metric followed.",
        "judge-eval": "The judge measured (any judge metric: {judges}) [default: a review "
                      "CSV's own, else faithfulness].",
        "review export": "The metric whose value goes in the judge column [default: the "
                         "first of faithfulness, answer_correctness, answer_relevance, "
                         "context_relevance the file has].",
    },
    "--metrics": {
        "*": "Comma-separated metric names (e.g. 'ndcg@10,mrr,recall@5', judge metrics "
             "and groups too; `ragmark metrics` lists them).",
        "run": "Comma-separated metric names (e.g. 'ndcg@10,mrr,recall@5', judge metrics "
               "and groups too; `ragmark metrics` lists them); 'all': every metric whose "
               "needs the data, the LLM endpoint and the installed extras meet.",
        "compare": "Comma-separated metric names (e.g. 'ndcg@10,mrr,recall@5', judge "
                   "metrics and groups too; `ragmark metrics` lists them); 'all': every "
                   "metric whose needs the data, the LLM endpoint and the installed extras "
                   "meet.",
        "simulate": "Score every turn with these metrics once played (e.g. "
                    "'hit@5,faithfulness'; judges at the --llm-* endpoint), as `run "
                    "--outputs TRANSCRIPTS` would: the scenario's passages are each turn's "
                    "ground truth.",
    },
    "--fail-on": {
        "probe": "Exit 1 when the rate (default: success over the answered targets, an "
                 "injection's styles pooled) is above X in any config; repeatable.",
        "testset check": "Exit 1 when a share passes V: duplicates, leaked, "
                         "points_at_source, unsupported, uncovered_documents or "
                         "uncovered_clusters (>, >=, <, <=); repeatable.",
    },
    "--words-only": {
        "testset": "No embedding model: near-duplicate questions by their words alone, "
                   "passages drawn over the documents rather than the corpus's clusters.",
        "testset check": "Find near-duplicates by their words alone (no embedding model).",
    },
    "--top": {
        "diff": "Questions listed that got worse and better the most, per metric.",
        "testset check": "Examples shown of each finding.",
    },
    "--name": "The system's name in the results and the history (default: the source's "
              "file name).",
    "--fail-under": {
        "*": "Exit 1 when the metric's mean is below V (or has no value); repeatable; "
             "CONFIG: limits it to one config of a compare.",
        "simulate": "Exit 1 when a config's mean of a conversation metric "
                    "(goal_completion, knowledge_retention, goal_reached) is below V, or "
                    "it has none; repeatable; CONFIG: limits it to one config.",
    },
    "--output": {
        "run": "The JSON report's path; each other --format file beside it, named the same "
               "with its own suffix (results.md). A name without .json gets it; DIR/ "
               "means DIR/results.json.",
        "compare": "The JSON report's path; the Markdown and each other --format file "
                   "beside it, named the same with its own suffix (eval.md). A name "
                   "without .json gets it; DIR/ means DIR/eval.json.",
        "label": "The JSON report's path; the Markdown beside it (label.md), --plot's "
                 "charts and --pool's qrels too. A name without .json gets it; DIR/ "
                 "means DIR/label.json.",
        "probe": "The JSON report's path; the Markdown beside it (probe.md), the finished "
                 "runs in probe.probe-state/. A name without .json gets it; DIR/ means "
                 "DIR/probe.json.",
        "testset": "Where the set is written; its report beside it as NAME.report.json.",
        "monitor": "Where the window is written: .json, .md or .html by the suffix "
                   "(repeatable).",
        "judge-eval": "Where the report is written, as JSON.",
        "simulate": "Where the report is written, as JSON: each config's conversations, "
                    "their scores, the paired comparison and the gates.",
        "duel": "Where the report is written: JSON, or Markdown or an HTML page by the "
                "suffix (.md, .html).",
        "report": "Where the HTML page is written.",
        "review export": "Where the CSV is written.",
        "demo": "Where the detailed JSON report is written.",
    },
    "--overwrite": "Replace an existing output file.",
    "--plot": {
        "label": "Also draw answer presence against k, one line per config, PNG and SVG "
                 "beside --output (needs ragmark-eval[plot]).",
        "history trend": "Also draw the metric over time to PREFIX.png and PREFIX.svg "
                         "(needs ragmark-eval[plot]).",
    },
    "--pairwise": {
        "compare": "Judge the answers pairwise (which of two is better) by these "
                   "comma-separated criteria, every two configs: overall, correctness "
                   "(against the reference answer), completeness, faithfulness (each "
                   "answer against its own contexts) [default: none].",
        "duel": "The comma-separated criteria the two files' answers are judged by, pair "
                "by pair: overall, correctness (against the reference answer), "
                "completeness, faithfulness (each answer against its own contexts).",
    },
    "--pairwise-rubric": "A custom criterion for --pairwise, NAME=TEXT (repeatable): TEXT "
                         "says what 'better' means, in your words (the judge sees the "
                         "question and the two answers); then name it in --pairwise.",
    "--pairwise-orders": "2: ask the pairwise judge with each answer first (a verdict that "
                         "flips with the order counts as a tie); 1: one order per "
                         "question, drawn from --seed (half the calls).",
    "--fail-on-regression": {
        "*": "Exit 1 when a metric is significantly worse than in the --against results "
             "(paired test, Holm over these metrics, --alpha).",
        "compare": "Exit 1 when a metric is significantly worse than in the --against "
                   "results (paired test, Holm over these metrics, --alpha); "
                   "pairwise:CRITERION when a config loses significantly to --baseline by "
                   "the pairwise judge (sign test, Holm across the criteria).",
        "duel": "pairwise:CRITERION[,...]: exit 1 when B loses significantly to A by that "
                "criterion (sign test, Holm across the criteria).",
    },
    "--resamples": "Bootstrap (and permutation) resamples of the intervals and tests.",
    "--listen": {
        "monitor": "Receive OTLP/HTTP traces on HOST:PORT (on /v1/traces, into --spool; an "
                   "application's OTEL_EXPORTER_OTLP_ENDPOINT points here). Loopback "
                   "unless --token is given.",
        "annotate": "Serve the labelling page on HOST:PORT. Loopback unless --token is "
                    "given.",
    },
    "--token": {
        "monitor": "With --listen: the secret a request must carry (Authorization: Bearer "
                   "TOKEN); required to bind beyond loopback, never empty.",
        "annotate": "With --listen: the secret a request must carry (Authorization: "
                    "Bearer TOKEN; the page takes it once as /?token=TOKEN); required to "
                    "bind beyond loopback, never empty.",
    },
    "--seed": "Seed of the random draws and resamples: the same seed gives the same "
              "numbers.",
    "--skip-generation": "Retrieval only: no answers, no answer metrics.",
    "--threshold": {
        "judge-eval": "The score from which the judge's verdict is yes (supported): an "
                      "item scoring below it is 'unsupported' [default: 1.0 for "
                      "faithfulness, every claim supported; 0.5 otherwise].",
        "review agreement": "The score from which a judge's value between 0 and 1 is a "
                            "yes [default: 0.5].",
    },
    "--top-k": {
        "*": "Items retrieved per question.",
        "label": "Items retrieved per question, each labelled; the metrics at k = 1..K.",
    },
    "--unit": {
        "run": "The unit rankings are judged by: chunk or document (auto: documents when "
               "the ground truth names documents).",
        "testset": "The unit questions are written from: chunk or document (chunks cut "
                   "as --config cuts them, so every quote lies inside one).",
    },
}


def judges_text() -> str:
    """The judge metrics as the catalogue holds them: each one not in a group, then each
    group ('claims' for all)."""
    grouped = groups()
    inside = {m for names in grouped.values() for m in names}
    alone = [m for m in judge_metrics() if m not in inside]
    return ", ".join([*alone, *(f"the {g} metrics ('{g}' for all)" for g in grouped)])


def meaning(flag: str, command: str) -> str:
    """What ``flag`` means in ``command`` (``history trend``): its own text, else its
    group's (``history``), else the flag's one meaning (``*``); the catalogue's judge
    metrics named where the text has ``{judges}``."""
    given = MEANINGS[flag]
    found = given if isinstance(given, str) else next(
        (given[c] for c in (command, command.split(" ")[0], "*") if c in given), None)
    if found is None:
        raise KeyError(f"{flag} has no meaning for '{command}' in cli/shared.MEANINGS")
    text = found
    return text.format(judges=judges_text()) if "{judges}" in text else text


class _Meaning(click.Option):
    """An option whose help is what it means in the command showing it, read when the
    help is shown (the judges are not loaded to start a command)."""

    def help_in(self, command: str) -> str:
        return meaning(self.opts[0], command)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.help_in(_command_of(ctx))
        return super().get_help_record(ctx)


def _command_of(ctx: click.Context) -> str:
    """The command a context runs, by its full name below ``ragmark`` (``history trend``)."""
    names = []
    at: click.Context | None = ctx
    while at is not None and at.parent is not None:
        names.append(at.command.name or "")
        at = at.parent
    return " ".join(reversed(names)) or (ctx.command.name or "")


def option(flag: str, *decls: str, **kw: Any) -> Callable[[Callable[..., Any]], Any]:
    """``click.option(flag, *decls, **kw)`` with what the flag means in its command."""
    return click.option(flag, *decls, cls=_Meaning, **kw)
