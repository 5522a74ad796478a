"""``python -m longrun ARGS`` (and the ``longrun`` command a platform wheel installs): runs the
bundled executable (else ``$LONGRUN_BIN``) with ARGS, e.g. ``python -m longrun --version``."""
from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Optional

from ._binary import bundled_binary


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # never PATH here: the command a wheel installs is itself called longrun
    binary = bundled_binary() or os.environ.get("LONGRUN_BIN")
    if not binary:
        print("longrun: this installation carries no executable (a pure wheel or a source checkout); "
              "install a platform wheel, or set LONGRUN_BIN", file=sys.stderr)
        return 127
    if os.name == "nt":  # pragma: no cover - no exec on Windows
        return subprocess.call([binary, *args])
    os.execv(binary, [binary, *args])
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    sys.exit(main())
