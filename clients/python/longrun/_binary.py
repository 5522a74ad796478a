"""Finding the ``longrun`` executable: the one inside this package (platform wheels carry it),
then ``$LONGRUN_BIN``, then ``longrun`` on PATH."""
from __future__ import annotations

import os
import shutil
from typing import List, Optional, Tuple

#: Where a platform wheel puts the executable, inside this package.
BUNDLED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def bundled_binary() -> Optional[str]:
    """The executable this package carries (platform wheels), or None (a source checkout, a pure wheel)."""
    path = os.path.join(BUNDLED_DIR, "longrun.exe" if os.name == "nt" else "longrun")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def find_binary(explicit: Optional[str] = None) -> str:
    """``explicit`` if given; else the bundled executable, ``$LONGRUN_BIN``, or ``longrun`` on PATH."""
    if explicit:
        return explicit
    found = bundled_binary() or os.environ.get("LONGRUN_BIN") or shutil.which("longrun")
    if not found:
        raise FileNotFoundError(
            "longrun executable not found: install a platform wheel of longrun (it carries one), "
            "set LONGRUN_BIN, put longrun on PATH, or pass binary="
        )
    return found


def serve_target(root: Optional[str], store: Optional[str], project: Optional[str]) -> Tuple[str, List[str]]:
    """What ``longrun serve`` is started for: its name (for logs and errors) and its arguments.

    A directory (``root``, default the working directory), or a root on a libSQL server (``store``,
    its URL, with ``project``, the project key; the auth token goes in ``LONGRUN_STORE_TOKEN``).
    """
    if store is None:
        if project is not None:
            raise ValueError("project= goes with store= (a root on a libSQL server)")
        path = os.path.abspath(root if root is not None else os.getcwd())
        return path, ["--root", path]
    if root is not None:
        raise ValueError("root= and store= name two different roots; pass one of them")
    if not project:
        raise ValueError("store= needs project=, the key of the project the database holds")
    return "%s#%s" % (store, project), ["--store", store, "--project", project]
