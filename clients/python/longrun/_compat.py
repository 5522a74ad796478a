"""What a client checks at start with ``system.describe``: the protocol's major version, and that
every method and param this client may send is known to the server."""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Mapping

from ._methods import METHOD_PARAMS
from ._version import __version__
from .errors import IncompatibleServer

#: The protocol major version this client speaks (``protocol_version`` "1.x").
PROTOCOL_MAJOR = 1

log = logging.getLogger("longrun")


def check_describe(described: Mapping[str, Any], where: str) -> None:
    """Raises IncompatibleServer when the server at ``where`` cannot serve this client; logs a version skew."""
    version = str(described.get("version", "?"))
    protocol = str(described.get("protocol_version", "?"))
    major = protocol.split(".", 1)[0]
    if major != str(PROTOCOL_MAJOR):
        raise IncompatibleServer(
            "longrun at %s speaks protocol %s (version %s); this client (longrun %s) speaks protocol %d.x: "
            "use a client and an executable of the same release (a platform wheel carries both)"
            % (where, protocol, version, __version__, PROTOCOL_MAJOR),
            None,
            {"kind": "incompatible_server", "server_version": version, "protocol_version": protocol, "client_version": __version__},
        )
    methods: Dict[str, Any] = {}
    for m in described.get("methods") or []:
        if isinstance(m, dict) and isinstance(m.get("name"), str):
            methods[m["name"]] = m
    missing: List[str] = []
    for name, params in sorted(METHOD_PARAMS.items()):
        if name not in methods:
            missing.append(name)
            continue
        props = (methods[name].get("params") or {}).get("properties") or {}
        missing += ["%s(%s)" % (name, p) for p in params if p not in props]
    if missing:
        raise IncompatibleServer(
            "longrun %s at %s does not know what this client (longrun %s) may send: %s; "
            "upgrade the executable (a platform wheel carries a matching one), or pass check=False "
            "to go on and get method_not_found / invalid_params where they are used"
            % (version, where, __version__, ", ".join(missing)),
            None,
            {"kind": "incompatible_server", "server_version": version, "client_version": __version__, "missing": missing},
        )
    if version != __version__:
        log.warning("longrun at %s is version %s, this client is %s (protocol %s: compatible)", where, version, __version__, protocol)
