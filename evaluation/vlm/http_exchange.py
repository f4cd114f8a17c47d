"""One HTTP exchange with separate connect and read timeouts (stdlib), and a plain account of its failure.

``urllib.request.urlopen(timeout=...)`` takes one number for both the TCP connect and every read. A model
server needs two: a server that is down, firewalled or unroutable shows within seconds at connect time, while
a non-streaming chat completion sends nothing until the whole answer is generated, which can take minutes.
:func:`exchange` keeps urllib (its proxies from the environment, its TLS set-up) and only swaps in
connection classes that connect under one timeout and read under the other.

When no HTTP reply comes back, :class:`NoReplyError` says which side of the connect it failed on
("connection refused", "no reply within 5 s"), so the user can tell a server that is not running from one
that is running but stuck.

The read timeout bounds each wait for the next bytes, not the whole reply; a non-streaming reply arrives in
one piece once generation ends, so in practice it bounds the time to the reply.
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass


class NoReplyError(ConnectionError):
    """No HTTP reply came back; ``connected`` says whether the TCP (and TLS) connection had been made."""

    def __init__(self, reason: str, connected: bool) -> None:
        super().__init__(reason)
        self.connected = connected


@dataclass
class _Progress:
    connected: bool = False


class _ReadTimeout:
    """Connect under ``timeout`` (urllib's), then read under ``read_timeout_s``."""

    def __init__(self, *args, read_timeout_s: float, progress: _Progress, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._read_timeout_s, self._progress = read_timeout_s, progress

    def connect(self) -> None:
        super().connect()  # TCP, a proxy tunnel and the TLS handshake, all under the connect timeout
        self._progress.connected = True
        self.sock.settimeout(self._read_timeout_s)


class _HTTPConnection(_ReadTimeout, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_ReadTimeout, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, read_timeout_s: float, progress: _Progress) -> None:
        super().__init__()
        self._connection = functools.partial(_HTTPConnection, read_timeout_s=read_timeout_s, progress=progress)

    def http_open(self, req):
        return self.do_open(self._connection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, read_timeout_s: float, progress: _Progress) -> None:
        super().__init__(context=_tls_context())
        self._connection = functools.partial(_HTTPSConnection, read_timeout_s=read_timeout_s, progress=progress)

    def https_open(self, req):
        return self.do_open(self._connection, req, context=self._context)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Built once: loading the system CA bundle takes milliseconds, too much to repeat for every request
    # (urlopen also builds its opener, context included, once).
    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


def exchange(request: urllib.request.Request, connect_timeout_s: float, read_timeout_s: float) -> bytes:
    """Send ``request``; return the reply's body.

    Raises:
        urllib.error.HTTPError: the server replied with an error status (the caller decides on retries).
        NoReplyError: no reply: refused, unresolvable, timed out, or the connection dropped.
    """
    progress = _Progress()
    opener = urllib.request.build_opener(_HTTPHandler(read_timeout_s, progress), _HTTPSHandler(read_timeout_s, progress))
    try:
        with opener.open(request, timeout=connect_timeout_s) as handle:
            return handle.read()
    except urllib.error.HTTPError:
        raise
    except (OSError, http.client.HTTPException) as error:  # URLError (raised while connecting or sending), timeouts, resets
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        raise NoReplyError(_describe(reason, progress.connected, connect_timeout_s, read_timeout_s),
                           progress.connected) from error


def _describe(reason: object, connected: bool, connect_timeout_s: float, read_timeout_s: float) -> str:
    if not connected:
        if isinstance(reason, ConnectionRefusedError):
            return "connection refused: nothing listens on that port"
        if isinstance(reason, TimeoutError):
            return f"no connection within {connect_timeout_s:g} s (connect timeout)"
        if isinstance(reason, socket.gaierror):
            return f"cannot resolve the host name ({reason.strerror})"
        return f"cannot connect ({_name(reason)})"
    if isinstance(reason, TimeoutError):
        return f"connected, but no reply within {read_timeout_s:g} s (read timeout)"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "connected, but the server closed the connection without a reply"
    return f"connected, but the exchange failed ({_name(reason)})"


def _name(reason: object) -> str:
    text = str(reason).strip()
    kind = type(reason).__name__
    return f"{kind}: {text}" if text and not isinstance(reason, str) else text or kind


__all__ = ["NoReplyError", "exchange"]
