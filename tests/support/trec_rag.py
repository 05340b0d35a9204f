"""A small TREC RAG folder and answer file for the tests (made up here, in the track's
layouts: MS MARCO v2.1 segments, topics, nuggets, qrels; a Ragnarok-style answer)."""

from __future__ import annotations

import json
from pathlib import Path

SEGMENTS = [
    {"docid": "msmarco_v2.1_doc_01#0_10", "url": "https://example.org/eiffel",
     "title": "Eiffel Tower", "headings": "History",
     "segment": "The Eiffel Tower was built by the company of Gustave Eiffel and finished "
                "in 1889 for the World's Fair.", "start_char": 0, "end_char": 96},
    {"docid": "msmarco_v2.1_doc_01#1_200", "url": "https://example.org/eiffel",
     "title": "Eiffel Tower", "headings": "Height",
     "segment": "The tower is 330 metres tall and was the tallest structure until 1930.",
     "start_char": 97, "end_char": 170},
    {"docid": "msmarco_v2.1_doc_02#0_0", "url": "https://example.org/potty",
     "title": "Potty training", "headings": "",
     "segment": "Take a toddler to the potty every two hours while potty training."},
]


def trec_folder(root: Path, *, qrels: bool = True) -> Path:
    folder = root / "trec"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SEGMENTS))
    (folder / "topics.tsv").write_text("2024-1\twho built the eiffel tower\n"
                                       "2024-2\thow often to take a toddler to the potty\n"
                                       "2024-3\tan unjudged topic\n")
    (folder / "nuggets.jsonl").write_text(
        json.dumps({"qid": "2024-2", "query": "how often to take a toddler to the potty",
                    "nuggets": [{"text": "every two hours", "importance": "vital"}]}) + "\n"
        + json.dumps({"qid": "2024-1", "query": "who built the eiffel tower", "nuggets": [
            {"text": "Gustave Eiffel's company built it", "importance": "vital"},
            {"text": "finished in 1889", "importance": "okay"}]}) + "\n")
    if qrels:
        (folder / "qrels").mkdir()
        (folder / "qrels" / "test.txt").write_text(
            "2024-1 0 msmarco_v2.1_doc_01#0_10 3\n2024-1 0 msmarco_v2.1_doc_01#1_200 1\n")
    return folder


def answers_file(root: Path, lines: list[dict]) -> Path:
    path = root / "ragnarok.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


ANSWER = {"run_id": "ragnarok", "topic_id": "2024-1", "topic": "who built the eiffel tower",
          "references": ["msmarco_v2.1_doc_01#0_10", "msmarco_v2.1_doc_01#1_200"],
          "response_length": 17,
          "answer": [{"text": "Gustave Eiffel's company built it.", "citations": [0]},
                     {"text": "It is 330 metres tall.", "citations": [1, 0]},
                     {"text": "It is in Paris.", "citations": []}]}
