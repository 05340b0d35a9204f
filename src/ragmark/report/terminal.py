"""The console every command prints through: rich's, with every text it is given made
visible (:func:`ragmark.text.visible`) as it is written, so an answer, a document or a
tool result cannot move the cursor, clear a line, colour the terminal or hide a link.
rich's own styles and cursor moves (its control segments) pass as they are."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.segment import Segment

from ragmark.text import visible


class SafeConsole(Console):
    """A rich Console whose printed texts have their control characters made visible."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control else Segment(visible(seg.text), seg.style, seg.control)
            for seg in buffer)
