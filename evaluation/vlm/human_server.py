"""The local web server of ``bspatial human`` (stdlib ``http.server``): the page and three JSON endpoints.

===========================  ======================================================================
request                      reply
===========================  ======================================================================
``GET /``                    the page (:data:`.human_page.PAGE`): no item in it
``GET /api/item``            the item being asked, as :meth:`~.human.HumanSession.view` gives it
``GET /api/frame?id=&k=``    frame ``k`` of the item being asked (404 for any other item)
``POST /api/answer``         ``{"id", "letter"}`` or ``{"id", "x", "y"}``: logs it, replies with the next
                             item; 409 (with ``current``) for an item that is not being asked, 400 for an
                             answer that does not fit the item
===========================  ======================================================================

Every reply says ``Cache-Control: no-store``: a reloaded page always asks the server what is next.
"""

from __future__ import annotations

import json
import logging
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bspatial.evaluation.vlm.human import HumanSession, StaleAnswerError
from bspatial.evaluation.vlm.human_page import PAGE

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
"""Only this machine: the page is for the person at it (``--host 0.0.0.0`` opens it to the network)."""
DEFAULT_PORT = 8765
MAX_ANSWER_BYTES = 4096
"""An answer is a few fields; a bigger body is refused unread."""
_IMAGE_TYPES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8", "image/jpeg"), (b"RIFF", "image/webp"))


def make_server(session: HumanSession, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> ThreadingHTTPServer:
    """A server (not yet serving) of ``session`` on ``host:port`` (port 0: any free port, see ``server_port``)."""
    handler = type("HumanPageHandler", (_Handler,), {"session": session})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


class _Handler(BaseHTTPRequestHandler):
    session: HumanSession
    server_version = "bspatial-human"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlsplit(self.path)
        if url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, PAGE.encode("utf-8"), "text/html; charset=utf-8")
        elif url.path == "/api/item":
            self._json(HTTPStatus.OK, self.session.view())
        elif url.path == "/api/frame":
            query = parse_qs(url.query)
            try:
                item_id, k = query["id"][0], int(query["k"][0])
            except (KeyError, ValueError):
                self._json(HTTPStatus.BAD_REQUEST, {"error": "give id and k (a frame index)"})
                return
            data = self.session.frame(item_id, k)
            if data is None:
                self._json(HTTPStatus.NOT_FOUND, {"error": f"no frame {k} of the item being asked ({item_id!r})"})
            else:
                self._send(HTTPStatus.OK, data, next((t for magic, t in _IMAGE_TYPES if data.startswith(magic)),
                                                     "application/octet-stream"))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {url.path}"})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if urlsplit(self.path).path != "/api/answer":
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such endpoint: {self.path}"})
            return
        try:
            body = self._body()
            if "letter" in body:
                self.session.answer(body.get("id"), letter=body["letter"])
            else:
                self.session.answer(body.get("id"), point=(body.get("x"), body.get("y")))
        except StaleAnswerError as error:
            self._json(HTTPStatus.CONFLICT, {"error": str(error), "current": self.session.view()})
        except ValueError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})
        else:
            self._json(HTTPStatus.OK, self.session.view())

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_ANSWER_BYTES:
            raise ValueError(f"an answer is a JSON object of at most {MAX_ANSWER_BYTES} bytes, got {length} bytes")
        try:
            body = json.loads(self.rfile.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"the answer is not JSON ({error})") from None
        if not isinstance(body, dict):
            raise ValueError(f"the answer must be a JSON object, got {type(body).__name__}")
        return body

    def _json(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json")

    def _send(self, status: HTTPStatus, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        logger.debug("%s %s", self.address_string(), format % args)


__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "make_server"]
