"""The annotation page's web app (Starlette): the page and its two assets, the queue's
state for one person, one item, a label, an undo.

Safe by construction: the page puts every text of an item on the page as text (the
script sets ``textContent``; nothing is parsed as HTML), and sends no request but to
this server. With a token (the server binds beyond loopback only with one) a request
carries it as ``Authorization: Bearer TOKEN`` or as the cookie the page's first load
(``/?token=TOKEN``) set, named after the server's port (two servers on one host do not
log each other out); the page then takes the token out of the address bar. Without a
token only requests whose ``Host`` is a loopback name are answered, so a page of another
site whose name is rebound to 127.0.0.1 cannot read or label. A request that changes the
store must be JSON and carry the ``X-Ragmark`` header, which a page of another site
cannot send without this server's leave (CORS), so a site a person visits cannot label
for them.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from pathlib import Path
from typing import Any

from ragmark.annotate import queue as q
from ragmark.annotate import store
from ragmark.errors import ConfigError
from ragmark.web.server import authorised, loopback_only

COOKIE = "ragmark_annotate"
"""The token cookie's name, followed by the server's port (cookies ignore ports)."""
NAME = re.compile(r"^[^\x00-\x1f\x7f]{1,80}$")
ASSETS = {"annotate.js": "text/javascript; charset=utf-8",
          "annotate.css": "text/css; charset=utf-8"}


def asset(name: str) -> str:
    return resources.files("ragmark.annotate").joinpath("page", name).read_text("utf-8")


class Pages:
    """The handlers of one queue of the store at ``path``; ``annotator`` the name every
    label is given under (None: each person gives theirs on the page)."""

    def __init__(self, path: Path, queue: store.Queue, token: str | None,
                 annotator: str | None) -> None:
        self.path, self.queue, self.token, self.annotator = path, queue, token, annotator
        self.overlap = int(queue.settings.get("overlap", 0))
        self.reveal = bool(queue.settings.get("reveal_judge", False))

    @staticmethod
    def cookie(request: Any) -> str:
        """This server's token cookie: named after its port."""
        server = request.scope.get("server") or ("", 0)
        return f"{COOKIE}_{server[1]}"

    def allowed(self, request: Any, given: str | None = None) -> bool:
        if authorised(request.headers, self.token):
            return True
        carried = given if given is not None else request.cookies.get(self.cookie(request))
        return self.token is not None and carried is not None and authorised(
            {"authorization": f"Bearer {carried}"}, self.token)

    def who(self, given: Any) -> str | None:
        name = self.annotator or (given if isinstance(given, str) else None)
        return name.strip() if name and NAME.match(name.strip()) else None

    def refused(self, request: Any, changes: bool) -> Any:
        from starlette.responses import JSONResponse

        if not self.allowed(request):
            return JSONResponse({"error": "a token is needed: open the page at "
                                 "/?token=TOKEN"}, 401)
        if changes and (request.headers.get("x-ragmark") != "1" or not str(
                request.headers.get("content-type", "")).startswith("application/json")):
            return JSONResponse({"error": "send JSON with the X-Ragmark header"}, 403)
        return None

    async def page(self, request: Any) -> Any:
        from starlette.responses import HTMLResponse

        given = request.query_params.get("token")
        if not self.allowed(request, given):
            return HTMLResponse("<!doctype html><title>ragmark annotate</title><p>A token "
                                "is needed: open this page at /?token=TOKEN.</p>", 401)
        body = asset("index.html").replace("{{queue}}", html.escape(self.queue.name)).replace(
            "{{annotator}}", html.escape(self.annotator or ""))
        response = HTMLResponse(body, headers={"cache-control": "no-store",
                                               "referrer-policy": "no-referrer"})
        if self.token is not None and given is not None:
            response.set_cookie(self.cookie(request), given, httponly=True,
                                samesite="strict")
        return response

    async def static(self, request: Any) -> Any:
        from starlette.responses import Response

        name = request.path_params["name"]
        if name not in ASSETS:
            return Response("not found", 404)
        if (r := self.refused(request, False)) is not None:
            return r
        return Response(asset(name), media_type=ASSETS[name])

    def state_of(self, name: str) -> dict[str, Any]:
        got = q.view(store.items(self.path, self.queue.name),
                     store.labels(self.path, self.queue.name), name, self.overlap)
        return {"queue": self.queue.name, "task": self.queue.task,
                "ask": q.ask_of(self.queue.task, bool(self.queue.settings.get("per_claim"))),
                "choices": list(q.choices_of(self.queue.task)),
                "reveal": self.reveal, "annotator": name, **got.to_json()}

    async def state(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        if (r := self.refused(request, False)) is not None:
            return r
        name = self.who(request.query_params.get("annotator"))
        if name is None:
            return JSONResponse({"error": "give your name (1 to 80 characters)"}, 400)
        return JSONResponse(self.state_of(name))

    async def item(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        if (r := self.refused(request, False)) is not None:
            return r
        name = self.who(request.query_params.get("annotator"))
        wanted = request.query_params.get("id", "")
        found = next((it for it in store.items(self.path, self.queue.name)
                      if str(it["id"]) == wanted), None)
        if name is None or found is None:
            return JSONResponse({"error": "no such item, or no name"}, 404)
        mine = next((lab for lab in store.labels(self.path, self.queue.name)
                     if lab.item == wanted and lab.annotator == name), None)
        shown = dict(found)
        if shown.get("judge") is None or not self.reveal and (mine is None
                                                             or mine.value is None):
            shown.pop("judge", None)  # hidden until the person has labelled the item
            shown.pop("claims", None)  # the judge's claims and verdicts, likewise
        return JSONResponse({"item": shown, "label": None if mine is None else mine.value,
                             "note": "" if mine is None else mine.note})

    async def body(self, request: Any) -> dict[str, Any] | None:
        try:
            got = await request.json()
        except ValueError:
            return None
        return got if isinstance(got, dict) else None

    async def label(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        if (r := self.refused(request, True)) is not None:
            return r
        body = await self.body(request)
        if (wrong := self.wrong_label(body)) is not None:
            return JSONResponse({"error": wrong}, 400)
        assert body is not None
        name, value = str(self.who(body.get("annotator"))), body["value"]
        note = body.get("note") or ""
        try:
            store.put_label(self.path, store.Label(
                self.queue.name, str(body.get("item")), name,
                None if value is None else float(value), str(note)[:2000], ""))
        except ConfigError as e:  # an item not in the queue
            return JSONResponse({"error": str(e)}, 404)
        return JSONResponse({"saved": True, **self.state_of(name)})

    def wrong_label(self, body: dict[str, Any] | None) -> str | None:
        """What is wrong with a label's JSON body, naming the field; None when nothing."""
        values = [c["value"] for c in q.choices_of(self.queue.task)]
        if body is None:
            return "expected a JSON object with annotator, item, value and note"
        if self.who(body.get("annotator")) is None:
            return "annotator: expected your name (1 to 80 characters)"
        if not isinstance(body.get("item"), str | int) or isinstance(body.get("item"), bool):
            return "item: expected the item's id"
        value = body.get("value", False)
        if value is not None and (isinstance(value, bool) or value not in values):
            return f"value: expected one of {values}, or null (a skip); got {value!r}"
        if not isinstance(body.get("note", ""), str | None):
            return f"note: expected a text; got {body['note']!r}"
        return None

    async def undo(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        if (r := self.refused(request, True)) is not None:
            return r
        body = await self.body(request)
        name = None if body is None else self.who(body.get("annotator"))
        if name is None:
            return JSONResponse({"error": "expected a JSON object with annotator"}, 400)
        return JSONResponse({"undone": store.undo(self.path, self.queue.name, name),
                             **self.state_of(name)})


def make_app(path: Path, queue: store.Queue, token: str | None,
             annotator: str | None) -> Any:
    """The app serving ``queue`` of the store at ``path`` (see :class:`Pages`)."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    p = Pages(path, queue, token, annotator)
    return loopback_only(Starlette(routes=[
        Route("/", p.page), Route("/static/{name}", p.static),
        Route("/api/state", p.state), Route("/api/item", p.item),
        Route("/api/label", p.label, methods=["POST"]),
        Route("/api/undo", p.undo, methods=["POST"])]), token,
        lambda request, status, message: JSONResponse({"error": message}, status))
