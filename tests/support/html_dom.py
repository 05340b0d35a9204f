"""A small DOM from the standard library's HTML parser, for checking pages by structure
(elements, attributes, text), not by string matching."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Every descendant element with this tag (any when None) and attributes."""
        out = []
        for c in self.children:
            if isinstance(c, Node):
                if (tag is None or c.tag == tag) and all(
                        c.attrs.get(k.rstrip("_")) == v for k, v in attrs.items()):
                    out.append(c)
                out += c.all(tag, **attrs)
        return out

    def one(self, tag: str | None = None, **attrs: str) -> Node:
        got = self.all(tag, **attrs)
        assert len(got) == 1, f"{len(got)} <{tag} {attrs}> elements"
        return got[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    b = _Builder()
    b.feed(html)
    b.close()
    return b.root


RESOURCE_ATTRS = ("src", "href", "srcset", "data", "poster", "action", "formaction",
                  "xlink:href", "background")


def resources(doc: Node) -> list[str]:
    """Everything in the page that would make the browser fetch something."""
    out = []
    for el in doc.all():
        for a in RESOURCE_ATTRS:
            v = el.attrs.get(a)
            if v and not v.startswith("#"):
                out.append(f"<{el.tag} {a}={v!r}>")
        if el.tag in ("link", "iframe", "object", "embed", "img", "audio", "video",
                      "base"):
            out.append(f"<{el.tag}>")
        if el.tag == "style" or "style" in el.attrs:
            css = el.text() if el.tag == "style" else el.attrs["style"]
            if "url(" in css or "@import" in css:
                out.append("css url()/@import")
        if el.tag == "script":
            code = el.text()
            for call in ("fetch(", "XMLHttpRequest", "import(", "WebSocket", "EventSource",
                         "sendBeacon", ".src="):
                if call in code:
                    out.append(f"script {call}")
            if "src" in el.attrs:
                out.append("external script")
    return out
