"""Writes the fixture files of this folder with the real library (see README.md)."""

import os

os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
import llama_index.core  # noqa: F401
from deepeval.dataset import EvaluationDataset, Golden
from llama_index.core.llama_dataset import (
    CreatedBy,
    CreatedByType,
    LabelledRagDataExample,
    LabelledRagDataset,
)

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."
ex = [
    LabelledRagDataExample(
        query="What does BM25 rank documents by?",
        query_by=CreatedBy(type=CreatedByType.HUMAN),
        reference_contexts=[P1],
        reference_answer="term frequency and inverse document frequency",
        reference_answer_by=CreatedBy(type=CreatedByType.AI, model_name="gpt-4o"),
    ),
    LabelledRagDataExample(
        query="What does a reranker reorder?",
        query_by=CreatedBy(type=CreatedByType.AI, model_name="gpt-4o"),
        reference_contexts=[P2],
        reference_answer="the candidate passages",
        reference_answer_by=CreatedBy(type=CreatedByType.HUMAN),
    ),
]
LabelledRagDataset(examples=ex).save_json("rag_dataset.json")

ds = EvaluationDataset(
    goldens=[
        Golden(
            input="What does BM25 rank documents by?",
            expected_output="term frequency and inverse document frequency",
            context=[P1],
            retrieval_context=[P2, P1],
            actual_output="Term frequency and inverse document frequency.",
        ),
        Golden(
            input="What does a reranker reorder?",
            expected_output="the candidate passages",
            context=[P2],
            retrieval_context=[P2],
            actual_output="The candidate passages.",
        ),
    ]
)
for ft in ("json", "csv", "jsonl"):
    ds.save_as(
        file_type=ft, directory="deepeval_out", file_name="outputs", include_test_cases=False
    )


from llama_index.core.evaluation import EmbeddingQAFinetuneDataset  # noqa: E402

EmbeddingQAFinetuneDataset(
    queries={"q1": "What does BM25 rank documents by?", "q2": "What does a reranker reorder?",
             "q3": "What is left without relevant documents?"},
    corpus={"n1": P1, "n2": P2,
            "n3": "Dense retrievers embed queries and passages into the same vector space."},
    relevant_docs={"q1": ["n1"], "q2": ["n2", "n3"], "q3": []},
).save_json("embedding_qa.json")
