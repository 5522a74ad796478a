"""What the generated methods send: params given, minus those left out (None, unless kept; ``UNSET``)."""
from __future__ import annotations

from typing import Any, Dict, Tuple


class _Unset:
    """A param not given (as opposed to one given as None, which is sent as JSON null)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def clean(params: Dict[str, Any], keep: Tuple[str, ...] = ()) -> Dict[str, Any]:
    """The params to send: None values dropped (except those in ``keep``), unset ones always."""
    return {k: v for k, v in params.items() if v is not UNSET and (v is not None or k in keep)}
