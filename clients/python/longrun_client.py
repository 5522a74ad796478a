"""Compatibility: the single-file client of earlier releases, now the ``longrun`` package.

``from longrun_client import LongrunClient`` keeps working; new code imports from ``longrun``.
"""
from longrun import *  # noqa: F401,F403
from longrun import __all__ as _all
from longrun import __version__  # noqa: F401
from longrun.errors import error_from_wire  # noqa: F401

__all__ = list(_all)
