"""Writes the fixture files of this folder with the real library (see README.md)."""

import os

os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
from ragas import EvaluationDataset, SingleTurnSample

P1 = "BM25 ranks documents by term frequency and inverse document frequency."
P2 = "A reranker reorders the candidate passages with a stronger cross-encoder model."
samples = [
    SingleTurnSample(
        user_input="What does BM25 rank documents by?",
        retrieved_contexts=[P2, P1],
        response="Term frequency and inverse document frequency.",
        reference="term frequency and inverse document frequency",
        reference_contexts=[P1],
    ),
    SingleTurnSample(
        user_input="What does a reranker reorder?",
        retrieved_contexts=[P2],
        response="The candidate passages.",
        reference="the candidate passages",
        reference_contexts=[P2],
    ),
]
ds = EvaluationDataset(samples=samples)
ds.to_jsonl("ragas_outputs.jsonl")
ds.to_csv("ragas_outputs.csv")
sets = EvaluationDataset(
    samples=[
        SingleTurnSample(
            user_input=s.user_input, reference=s.reference, reference_contexts=s.reference_contexts
        )
        for s in samples
    ]
)
sets.to_jsonl("ragas_set.jsonl")
sets.to_csv("ragas_set.csv")

# a saved Hugging Face dataset folder and Parquet, as RAGAS gives them (to_hf_dataset)
hf = EvaluationDataset.from_jsonl("ragas_outputs.jsonl").to_hf_dataset()
hf.save_to_disk("ragas_hf")
hf.to_parquet("ragas_outputs.parquet")
