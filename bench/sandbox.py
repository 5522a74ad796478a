#!/usr/bin/env python3
"""Benchmark (not a test): what the OS boundary adds to one Bash command.

Every Bash command the Claude Code hook lets through runs as
`longrun sandbox --mode read|lease --root ROOT -- bash -c '…'`. This times, start to exit, a
small command (`git status` in a real root with a task) run plainly and run inside the boundary,
alternating so machine noise hits both:

- bubblewrap (outside any other sandbox): read mode and lease mode;
- Landlock (what `longrun sandbox` uses inside Claude Code's own sandbox, `SANDBOX_RUNTIME=1`):
  read mode (lease mode there needs Claude Code's masks, so it is not timed here).

Prints medians, p90 and the time added (boundary minus plain), in milliseconds.

Usage: python3 bench/sandbox.py [runs]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("LONGRUN_BIN", os.path.join(REPO, "dist", "longrun"))


def timed(argv, env=None, cwd=None):
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t0) * 1000


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    if not os.path.exists(BIN):
        sys.exit("dist/longrun is missing: build it with ./compile.sh")
    root = tempfile.mkdtemp(prefix="longrun-bench-sandbox-")
    try:
        subprocess.run(["git", "init", "-q", root], check=True)
        start = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "task.start", "params": {"description": "bench"}}) + "\n"
        subprocess.run([BIN, "serve", "--root", root], input=start.encode(), stdout=subprocess.DEVNULL, check=True)
        cmd = "git status >/dev/null 2>&1; true"
        plain = ["bash", "-c", cmd]
        cases = {
            "bubblewrap, read": ([BIN, "sandbox", "--mode", "read", "--root", root, "--", *plain], None),
            "bubblewrap, lease": ([BIN, "sandbox", "--mode", "lease", "--root", root, "--", *plain], None),
            "Landlock, read": ([BIN, "sandbox", "--mode", "read", "--root", root, "--", *plain], {**os.environ, "SANDBOX_RUNTIME": "1"}),
        }
        for argv, env in cases.values():  # warm caches
            timed(argv, env, root)
        times = {name: [] for name in cases}
        base = []
        for _ in range(runs):
            for name, (argv, env) in cases.items():
                base.append(timed(plain, None, root))
                times[name].append(timed(argv, env, root))
        p = lambda xs, q: sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]
        b50 = statistics.median(base)
        print(f"plain `bash -c 'git status'`: median {b50:.1f} ms, p90 {p(base, 0.9):.1f} ms ({len(base)} runs)")
        for name, xs in times.items():
            m = statistics.median(xs)
            print(f"{name:18} median {m:.1f} ms, p90 {p(xs, 0.9):.1f} ms; adds {m - b50:.1f} ms ({m / b50:.1f}x the plain command)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
