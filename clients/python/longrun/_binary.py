"""Finding the ``longrun`` executable: the one inside this package (platform wheels carry it),
then ``$LONGRUN_BIN``, then ``longrun`` on PATH."""
from __future__ import annotations

import os
import shutil
from typing import Optional

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
