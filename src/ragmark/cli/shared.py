"""The meaning of each flag that several commands take, written once: a command
declares it with :func:`option`, which gives every command the same help text (its type,
default and destination may differ). The test of flag meanings reads every command's
options and fails when one flag name is explained two ways."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

MEANINGS: dict[str, str] = {
    "--allow-missing": "Do not exit 1 when a metric asked for got no value for any "
                       "question, or every question of a config failed (label: no question "
                       "of a config got a label; probe: a target got no answer).",
    "--config": "The configuration to run: a built-in name or a TOML file (testset "
                "cuts passages with its chunker).",
    "--config-name": "A config's name in a results file or the history (inspect: default "
                     "the compare's baseline; review export and annotate: of a compare or "
                     "label file, default its first; diff and power: needed for 'last' "
                     "when the history has several; history: only its runs). Was "
                     "--config, which still works for one release.",
    "--corpus": "Corpus: folder of .txt/.md files, JSONL file, or BEIR folder.",
    "--dataset": "The dataset. run, compare and label: a BEIR (or TREC RAG) or Open RAG "
                 "Benchmark folder, or a keyword/context set JSON(L) file. history: only runs on "
                 "this dataset, by name or hash prefix (history trend: default that of the "
                 "config's newest run).",
    "--outputs": "A system's logged outputs, scored instead of running a config: JSONL of "
                 "{question, answer, contexts, ground_truth_contexts?, expected_answer?, "
                 "...} (or a RAGAS or DeepEval file, a saved Hugging Face dataset folder, "
                 "TREC RAG's answer files); with --dataset, the dataset's ground truth "
                 "scores them (joined by id, else question text). Not with --config(s). "
                 "compare takes it more than once: each file a system, named by its run_id, "
                 "else the file's name, compared on --dataset's questions. probe takes "
                 "ARM=FILE, more than once: the answers a system logged with the planted "
                 "documents of ARM (injection:plain, poisoning, ...; clean=FILE: with "
                 "none), with the same --dataset, --targets, --seed and --copies as "
                 "--write-planted.",
    "--include-details": "Per-question records (retrieved items, answers, missing "
                         "reasons) in the JSON, so 'ragmark inspect' works fully on it.",
    "--json": "Print JSON instead of text.",
    "--judge-metrics": "Comma-separated LLM judge metrics: {judges}; see `ragmark "
                       "metrics`; 'none' for none. Default: none (monitor: faithfulness, "
                       "answer_relevance and context_relevance on the window's sample when "
                       "an LLM endpoint is set).",
    "--judge-model": "A judge model at the endpoint; repeat it to measure several side by "
                     "side (each with its own results; their agreement is printed) "
                     "[default: --llm-model].",
    "--junit": "Write every gate condition as JUnit XML (one test case each).",
    "--kind": "Only runs of this kind.",
    "--language": "The data's language (de, german, zh, ...): run and compare give it to "
                  "every config as its 'language' key (BM25's stemmer and stop-words, the "
                  "judges' claims); testset writes its questions and answers in it, "
                  "whatever the documents' (the quotes stay as written).",
    "--margin": "Fail only on changes larger than this, in the metric's unit (a practical "
                "threshold).",
    "--max-queries": "Only the first N questions.",
    "--store": "The label store of `ragmark annotate`, which store:QUEUE reads [default: "
               "labels.sqlite beside the run history, --history].",
    "--metric": "The metric this command is about: history lists the runs that computed "
                "it, with its value; history trend follows it; judge-eval measures its "
                "judge (any judge metric: {judges}; default: a review CSV's own, else "
                "faithfulness); "
                "review export puts its value in the judge column (default: the first of "
                "faithfulness, answer_correctness, answer_relevance, context_relevance the "
                "file has).",
    "--metrics": "Comma-separated metric names (e.g. 'ndcg@10,mrr,recall@5', judge "
                 "metrics and groups too; `ragmark metrics` lists them); on run and "
                 "compare, 'all': every metric whose needs the data, the LLM endpoint and "
                 "the installed extras meet.",
    "--name": "The system's name in the results and the history (default: the source's "
              "file name).",
    "--output": "Where the command writes its result: run, the JSON report; compare and "
                "label, {output}.json and {output}.md (DIR/: DIR/eval.json, "
                "DIR/eval.md; label's --plot beside them); probe, {output}.json and "
                "{output}.md (DIR/: DIR/probe.*), its finished runs in "
                "{output}.probe-state/; testset, the set, its report "
                "beside it as NAME.report.json; monitor, the window as .json, .md or .html "
                "(repeatable); judge-eval, the report as JSON; duel, the report as JSON, or "
                "Markdown or an HTML page by the suffix (.md, .html); report, the HTML page; "
                "review export, the CSV; demo, the detailed JSON report.",
    "--overwrite": "Replace an existing output file.",
    "--plot": "Also draw the chart, PNG and SVG (needs ragmark-eval[plot]): label, answer "
              "presence against k, one line per config, beside --output; history trend, "
              "the metric over time, to PREFIX.png and PREFIX.svg.",
    "--pairwise": "Judge the answers pairwise (which of two is better) by these "
                  "comma-separated criteria: overall, correctness (against the reference "
                  "answer), completeness, faithfulness (each answer against its own "
                  "contexts). compare: every two configs meet (default: none); duel: every "
                  "two files.",
    "--pairwise-rubric": "A custom criterion for --pairwise, NAME=TEXT (repeatable): TEXT "
                         "says what 'better' means, in your words (the judge sees the "
                         "question and the two answers); then name it in --pairwise.",
    "--pairwise-orders": "2: ask the pairwise judge with each answer first (a verdict that "
                         "flips with the order counts as a tie); 1: one order per "
                         "question, drawn from --seed (half the calls).",
    "--fail-on-regression": "Exit 1 when a metric is significantly worse than in the "
                            "--against results (paired test, Holm over these metrics, "
                            "--alpha); pairwise:CRITERION when a config loses significantly "
                            "to the baseline by the pairwise judge (compare: to --baseline; "
                            "duel: B to A; sign test, Holm across the criteria).",
    "--resamples": "Bootstrap (and permutation) resamples of the intervals and tests.",
    "--listen": "Serve on HOST:PORT: monitor receives OTLP/HTTP traces there (on "
                "/v1/traces, into --spool; an application's OTEL_EXPORTER_OTLP_ENDPOINT "
                "points here), annotate serves its page. Loopback unless --token is given.",
    "--token": "With --listen: the secret a request must carry (Authorization: Bearer "
               "TOKEN; annotate's page takes it once as /?token=TOKEN); required to bind "
               "beyond loopback, never empty.",
    "--seed": "Seed of the random draws and resamples: the same seed gives the same "
              "numbers.",
    "--skip-generation": "Retrieval only: no answers, no answer metrics.",
    "--threshold": "The score from which a verdict is yes (supported): judge-eval's label "
                   "rule, an item scoring below it is 'unsupported' [default: 1.0 for "
                   "faithfulness, every claim supported; 0.5 otherwise]; review agreement's "
                   "cut of a score between 0 and 1 [default: 0.5].",
    "--top-k": "Items retrieved per question (label: each is labelled, metrics at k = "
               "1..K).",
    "--unit": "The unit of text: chunk or document. run: what rankings are judged by "
              "(auto: documents when the ground truth names documents); testset: what "
              "questions are written from (chunks cut as --config cuts them, so every "
              "quote lies inside one).",
}


def judges_text() -> str:
    """The judge metrics as the catalogue holds them: each one not in a group, then each
    group ('claims' for all)."""
    from ragmark.metrics.names import groups, judge_metrics

    grouped = groups()
    inside = {m for names in grouped.values() for m in names}
    alone = [m for m in judge_metrics() if m not in inside]
    return ", ".join([*alone, *(f"the {g} metrics ('{g}' for all)" for g in grouped)])


class _CatalogueHelp(click.Option):
    """An option whose help names the catalogue's judge metrics, read when the help is
    shown (the judges are not loaded to start the command)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = MEANINGS[self.opts[0]].format(judges=judges_text())
        return super().get_help_record(ctx)


def option(flag: str, *decls: str, **kw: Any) -> Callable[[Callable[..., Any]], Any]:
    """``click.option(flag, *decls, **kw)`` with the flag's one help text."""
    if "{judges}" in MEANINGS[flag]:
        return click.option(flag, *decls, help=MEANINGS[flag], cls=_CatalogueHelp, **kw)
    return click.option(flag, *decls, help=MEANINGS[flag], **kw)
