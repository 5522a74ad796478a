"""The wire as both threaded and asyncio clients speak it: one request line, one answer's result
or error, the client's default ``lang``, and the loggers."""
from __future__ import annotations

import json
import logging
from typing import Any, Dict, Mapping, Optional, Union

from .errors import error_from_wire

log = logging.getLogger("longrun")
#: The child's stderr (its logs), one record per line, with ``longrun_root`` and ``longrun_pid``.
server_log = logging.getLogger("longrun.server")


def _json_default(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError("%s is not JSON" % type(value).__name__)


def encode_request(rid: Union[int, str], method: str, params: Mapping[str, Any]) -> bytes:
    """One JSON-RPC request line, UTF-8, newline-terminated."""
    return (json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
                       ensure_ascii=False, separators=(",", ":"), default=_json_default) + "\n").encode("utf-8")


def result_of(answer: Mapping[str, Any]) -> Any:
    """The result of a JSON-RPC answer, or its error raised as the matching exception."""
    if "error" in answer:
        err = answer["error"]
        raise error_from_wire(err if isinstance(err, dict) else {"message": str(err)})
    return answer.get("result")


def with_defaults(method: str, params: Dict[str, Any], lang: Optional[str]) -> Dict[str, Any]:
    """The client's default ``lang`` on a checkpoint that names none."""
    if lang is not None and method == "task.checkpoint" and "lang" not in params:
        return {**params, "lang": lang}
    return params
