"""Generators: the protocol and the extractive (model-free) generators."""

from ragmark.generation.base import Generator
from ragmark.generation.extractive import SentencesGenerator, Top1Generator

__all__ = ["Generator", "SentencesGenerator", "Top1Generator"]
