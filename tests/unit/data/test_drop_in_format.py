"""One door for input formats (issue 49, item 4): a format module dropped into
``ragmark.data.formats``, and nothing else edited, is told from its rows' fields (a
dataset and an outputs log), taken by ``--input-format`` (its help and its refusal list
it) and by ``testset --format`` (its export)."""

from __future__ import annotations

import json
import sys

import pytest
from support.cli import run_cli
from support.doors import isolated

import ragmark.data.formats as formats

MODULE = '''
"""Question-and-gold rows of a made-up tool (a test's drop-in): "prompt", "gold",
"passages", and a logged "reply" with its "evidence"."""
from ragmark.data.foreign import cell_list, cell_text, item_of, with_logged
from ragmark.data.formats import RowFormat


def _row(row, where, lenient):
    expected = cell_text(row.get("gold"), where, "gold")
    gold = cell_list(row.get("passages"), where, "passages", lenient)
    item = item_of(FORMAT, row, where, "prompt", expected, gold)
    return with_logged(item, row, where, lenient, "reply", "evidence")


def _export(items, model):
    return [{"prompt": it["question"], "gold": it.get("expected_answer"),
             "passages": list(it.get("ground_truth_contexts") or [])} for it in items]


FORMAT = RowFormat("qagold", "QA-gold", "'prompt'", "prompt, gold",
                   lambda keys: "prompt" in keys and "gold" in keys, _row, _export)
'''
ROWS = [{"id": "q1", "prompt": "What does BM25 rank?", "gold": "Documents.",
         "passages": ["BM25 ranks documents by term frequency."],
         "reply": "It ranks documents.", "evidence": ["BM25 ranks documents by term frequency."]},
        {"id": "q2", "prompt": "What is a retriever?", "gold": "It finds passages.",
         "passages": ["A retriever finds passages for a question."],
         "reply": "A retriever finds passages.", "evidence": ["Something else entirely."]}]


def _drop(tmp_path, monkeypatch, name: str, text: str) -> None:
    """The formats package with one more module, ``name``, read afresh."""
    folder = tmp_path / "more_formats"
    folder.mkdir()
    (folder / f"{name}.py").write_text(text)
    isolated(monkeypatch, formats.FORMATS, reload=True)
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(folder)])


@pytest.fixture
def dropped(tmp_path, monkeypatch):
    _drop(tmp_path, monkeypatch, "qagold", MODULE)
    yield
    sys.modules.pop("ragmark.data.formats.qagold", None)


def test_a_dropped_in_format_is_read_everywhere(dropped, tmp_path, capsys):
    assert formats.names()[-1] == "qagold" and formats.names()[0] == "ragmark"
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "r.json"
    code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "recall@1,token_f1",
                            "--output", str(out), "--include-details", "--quiet",
                            "--no-history"],
                           capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert [q["metrics"]["recall@1"] for q in data["queries"]] == [1.0, 0.0]
    assert [q["answer"] for q in data["queries"]] == ["It ranks documents.",
                                                       "A retriever finds passages."]
    # the same rows without the logged reply: a dataset, read as the format when told
    bare = tmp_path / "set.json"
    bare.write_text(json.dumps([{k: r[k] for k in ("id", "prompt", "gold", "passages")}
                                for r in ROWS]))
    code, _, err = run_cli(["run", "--dataset", str(bare), "--input-format", "qagold",
                            "--metrics", "recall@3", "--output", str(tmp_path / "d.json"),
                            "--quiet", "--no-history"], capsys)
    assert code == 0, err
    info = json.loads((tmp_path / "d.json").read_text())["dataset"]
    assert (info["format"], info["queries"]) == ("qagold", 2)
    code, out_text, _ = run_cli(["run", "--help"], capsys)
    assert "qagold" in out_text
    code, _, err = run_cli(["run", "--dataset", str(bare), "--input-format", "nope"], capsys)
    assert code == 2 and "qagold" in err


def test_a_row_without_the_formats_question_names_it(dropped, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"prompt": "Q?", "gold": "A."}, {"gold": "B.", "x": 1}]))
    code, _, err = run_cli(["run", "--dataset", str(bad), "--input-format", "qagold",
                            "--quiet", "--no-history"], capsys)
    assert code == 2
    assert "read as QA-gold, whose question is 'prompt'" in err and "item 1" in err


def test_a_test_set_is_written_in_a_dropped_in_format(dropped):
    items = [{"question": "Q?", "expected_answer": "A.", "ground_truth_contexts": ["P."]}]
    assert formats.export(items, "qagold") == [{"prompt": "Q?", "gold": "A.",
                                                 "passages": ["P."]}]
    assert formats.suffix("qagold") == ".json" and formats.suffix("ragas") == ".jsonl"


FOLDER_MODULE = '''
"""A folder of a made-up benchmark (a test's drop-in): qa.tsv, a question and the
passage that answers it on each line."""
from ragmark.data.formats import FolderFormat
from ragmark.types import Corpus, Dataset, Document, GroundTruth, Sample


def _load(folder, corpus, split, lenient):
    rows = [line.split("\\t") for line in (folder / "qa.tsv").read_text().splitlines()]
    docs = tuple(Document(f"d{i}", p) for i, (_, p) in enumerate(rows, start=1))
    samples = tuple(Sample(f"q{i}", q, GroundTruth(passages=(p,)))
                    for i, (q, p) in enumerate(rows, start=1))
    return Dataset(folder.name, str(folder), "qa-folder", samples, Corpus(docs, str(folder)))


FORMAT = FolderFormat("qa-folder", "a QA folder (qa.tsv)",
                      lambda folder: (folder / "qa.tsv").exists(), _load)
'''


def test_a_dropped_in_folder_format_is_read(tmp_path, monkeypatch, capsys):
    _drop(tmp_path, monkeypatch, "qa_folder", FOLDER_MODULE)
    try:
        data = tmp_path / "bench"
        data.mkdir()
        (data / "qa.tsv").write_text("What does BM25 rank?\tBM25 ranks documents.\n"
                                     "What is dense retrieval?\tDense retrieval embeds "
                                     "questions and passages.\n")
        out = tmp_path / "r.json"
        code, _, err = run_cli(["run", "--dataset", str(data), "--metrics", "recall@1",
                                "--output", str(out), "--quiet", "--no-history"], capsys)
        assert code == 0, err
        got = json.loads(out.read_text())
        assert (got["dataset"]["format"], got["metrics"]["recall@1"]) == ("qa-folder", 1.0)
        empty = tmp_path / "empty"
        empty.mkdir()
        code, _, err = run_cli(["run", "--dataset", str(empty), "--quiet"], capsys)
        assert code == 2 and "a QA folder (qa.tsv)" in err and "a BEIR folder" in err
    finally:
        sys.modules.pop("ragmark.data.formats.qa_folder", None)


ITEMS_MODULE = '''
"""Chat logs of a made-up tool (a test's drop-in): each item a "chat" of messages, the
user's question, the assistant's answer and the passages it "read"."""
from ragmark.data.formats import ItemsFormat


def _rows(items, against, lenient):
    rows = []
    for where, item in items:
        said = {m["role"]: m["content"] for m in item["chat"]}
        if "user" not in said:
            raise where.error("expected a message of the user's", "chat")
        row = {"id": item["id"], "question": said["user"], "expected_answer": item["gold"],
               "ground_truth_contexts": item.get("read", [])}
        if "assistant" in said:
            row |= {"answer": said["assistant"], "contexts": item.get("read", [])}
        rows.append((where, row))
    return rows


FORMAT = ItemsFormat("chatlog", "a chat log ({chat: [{role, content}]})",
                     lambda items: any("chat" in v for _, v in items), _rows, sets=True)
'''


def test_a_dropped_in_items_format_is_read(tmp_path, monkeypatch, capsys):
    """An ItemsFormat module (items in a shape of their own) is read as an outputs log
    and, since it says ``sets``, as a dataset; the refusal of a file in no format names
    it; a bad item is its own error with the place."""
    _drop(tmp_path, monkeypatch, "chatlog", ITEMS_MODULE)
    try:
        log = tmp_path / "chat.jsonl"
        items = [{"id": "q1", "gold": "documents", "read": ["BM25 ranks documents."],
                  "chat": [{"role": "user", "content": "What does BM25 rank?"},
                           {"role": "assistant", "content": "It ranks documents"}]},
                 {"id": "q2", "gold": "passages", "read": ["A retriever finds passages."],
                  "chat": [{"role": "user", "content": "What does a retriever find?"},
                           {"role": "assistant", "content": "Cats"}]}]
        log.write_text("\n".join(json.dumps(i) for i in items) + "\n")
        out = tmp_path / "r.json"
        code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "exact_match",
                                "--output", str(out), "--quiet", "--no-history"], capsys)
        assert code == 0, err
        got = json.loads(out.read_text())
        assert got["metrics"]["exact_match"] == 0.0  # neither answer is its gold, exactly
        code, _, err = run_cli(["run", "--outputs", str(log), "--metrics", "token_f1",
                                "--output", str(out), "--quiet", "--no-history"], capsys)
        # q1: "it ranks documents" vs "documents": P 1/3, R 1 -> F1 0.5; q2: 0
        assert code == 0 and json.loads(out.read_text())["metrics"]["token_f1"] == 0.25
        from ragmark.data import load_dataset

        ds = load_dataset(log)
        assert [s.question for s in ds.samples] == ["What does BM25 rank?",
                                                    "What does a retriever find?"]
        bad = tmp_path / "bad.txt"
        bad.write_text("x\n")
        code, _, err = run_cli(["run", "--dataset", str(bad), "--quiet"], capsys)
        assert code == 2 and "a chat log ({chat: [{role, content}]})" in err
        log.write_text(json.dumps({"id": "q1", "gold": "x", "chat": []}) + "\n")
        code, _, err = run_cli(["run", "--outputs", str(log), "--quiet"], capsys)
        assert code == 2 and "line 1" in err and "chat" in err
        assert "expected a message of the user's" in err
    finally:
        sys.modules.pop("ragmark.data.formats.chatlog", None)
