"""Curves that coincide stay visible: their own marker and dash, and the legend says so."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from ragmark.report.plot import plot_curves, same_as

pytest.importorskip("matplotlib")


def test_same_as_finds_identical_curves():
    curves = {"a": [0.5, 1.0], "b": [0.5, 1.0], "c": [0.5, None], "d": [0.5, None],
              "e": [0.5, 0.9]}
    assert same_as(curves) == {"b": "a", "d": "c"}


def test_identical_curves_are_drawn_apart_and_named_in_the_legend(tmp_path):
    curves = {"sparse": [0.2, 0.5, 0.8], "sparse-copy": [0.2, 0.5, 0.8], "dense": [0.3, 0.6,
                                                                                   0.9]}
    png, svg_path = plot_curves(curves, tmp_path / "p", title="t", ylabel="answer presence@k")
    assert png.read_bytes().startswith(b"\x89PNG")
    svg = ET.parse(svg_path).getroot()
    texts = "".join(svg.itertext())
    assert "sparse-copy (identical to sparse)" in texts and "dense (identical" not in texts
    ns = "{http://www.w3.org/2000/svg}"
    # each line's path carries its own dash pattern: solid, dashed, dash-dot
    styles = [p.get("style", "") for p in svg.iter(f"{ns}path")
              if "stroke-dasharray" in p.get("style", "")]
    assert len({s.split("stroke-dasharray:")[1].split(";")[0] for s in styles}) >= 2
