"""Where an HTTP client finds the server's URL and its token.

``longrun http`` writes ``<root>/.longrun/http.json`` with its URL and, unless it was given them by
environment, its two tokens. A server given ``LONGRUN_HOST_TOKEN`` and ``LONGRUN_AGENT_TOKEN``
(a container) writes no token: the file says ``tokens_from_env`` and names the variables, and a
client reads the token from the same variable. ``from_env`` needs no file at all: the URL comes
from ``LONGRUN_URL``.
"""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Tuple, Type, TypeVar

from .errors import LongrunError
from .types import CheckpointLang

TOKEN_ENV = {"host": "LONGRUN_HOST_TOKEN", "agent": "LONGRUN_AGENT_TOKEN"}
URL_ENV = "LONGRUN_URL"


def _variable(side: str) -> str:
    if side not in TOKEN_ENV:
        raise ValueError("side must be 'host' or 'agent', not %r" % (side,))
    return TOKEN_ENV[side]


def from_token_file(path: str, side: str, environ: Optional[Mapping[str, str]] = None) -> Tuple[str, str]:
    """``(url, token)`` for ``side`` from ``http.json`` at ``path`` (the token from the environment when the server took it there)."""
    name = _variable(side)
    with open(path, encoding="utf-8") as f:
        info = json.load(f)
    token = info.get("%s_token" % side)
    token_file = info.get("%s_token_file" % side)
    if not token and token_file:
        # the server read this token from a file (a mounted secret): read the same file
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read()
        except OSError as e:
            raise LongrunError("the server at %s reads its %s token from %s, which this client cannot read: %s"
                               % (info.get("url"), side, token_file, e.strerror or e), None,
                               {"kind": "config", "file": token_file}) from None
        token = token[:-2] if token.endswith("\r\n") else token[:-1] if token.endswith("\n") else token  # as the server reads it
    if not token and info.get("tokens_from_env"):
        name = info.get("%s_token_env" % side) or name
        token = (os.environ if environ is None else environ).get(name)
        if not token:
            raise LongrunError("the server at %s took its tokens from the environment and did not write them to %s; "
                               "set %s for this client too (or use from_env)" % (info.get("url"), path, name),
                               None, {"kind": "config", "variable": name})
    if not token:
        raise LongrunError("%s holds no %s token" % (path, side), None, {"kind": "config"})
    return info["url"], token


def from_env(side: str, url: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> Tuple[str, str]:
    """``(url, token)`` for ``side``: the URL from ``url`` or ``$LONGRUN_URL``, the token from ``$LONGRUN_<SIDE>_TOKEN``."""
    name = _variable(side)
    env = os.environ if environ is None else environ
    url = url or env.get(URL_ENV)
    token = env.get(name)
    missing = [n for n, v in ((URL_ENV, url), (name, token)) if not v]
    if missing:
        raise LongrunError("an HTTP client from the environment (side %r) needs %s set" % (side, " and ".join(missing)),
                           None, {"kind": "config", "variables": missing})
    assert url is not None and token is not None
    return url, token


_C = TypeVar("_C", bound="HttpFactories")


class HttpFactories:
    """``from_token_file`` and ``from_env`` for the HTTP clients (sync and async): one definition."""

    def __init__(self, url: str, token: str, root: Optional[str] = None, timeout: Optional[float] = 30.0, **kw: Any) -> None:
        raise NotImplementedError  # the client class's own __init__ comes first in its MRO

    @classmethod
    def from_token_file(cls: Type[_C], path: str, side: str = "host", root: Optional[str] = None, timeout: Optional[float] = 30.0, *,
                        check: bool = True, lang: Optional[CheckpointLang] = None) -> _C:
        """A client for the server that wrote ``path`` (``.longrun/http.json``), on ``side`` ("host" or "agent").

        A server given its tokens by environment writes none to the file; the token is then read
        from the same variable here (``LONGRUN_HOST_TOKEN`` / ``LONGRUN_AGENT_TOKEN``), or from the
        same file when the server read it from one (``LONGRUN_HOST_TOKEN_FILE`` …).
        """
        url, token = from_token_file(path, side)
        return cls(url, token, root=root, timeout=timeout, check=check, lang=lang)

    @classmethod
    def from_env(cls: Type[_C], side: str = "agent", url: Optional[str] = None, root: Optional[str] = None, timeout: Optional[float] = 30.0, *,
                 check: bool = True, lang: Optional[CheckpointLang] = None) -> _C:
        """A client configured like a server in a container: the URL from ``url`` or ``$LONGRUN_URL``, the
        token from ``$LONGRUN_AGENT_TOKEN`` (``side="agent"``, the default) or ``$LONGRUN_HOST_TOKEN``."""
        resolved, token = from_env(side, url)
        return cls(resolved, token, root=root, timeout=timeout, check=check, lang=lang)
