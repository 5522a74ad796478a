#!/usr/bin/env python3
"""Benchmark (not a test): JSON-RPC round trips and cold start of `longrun serve` from a Python host.

    python3 bench/stdio_roundtrip.py [--calls 5000] [--warmup 300] [--starts 30] [--no-client] [--json]

Compares `dist/longrun serve` ($LONGRUN_BIN) with `dist/bench-echo` (bench/echo.ts, compiled
here like longrun: longrun's own stdio server and framing with a dispatcher that only echoes the
id, so the floor pays for the same way of reading stdin as the server) over the same kind of pipes, in the same run, alternating calls (ABBA order) so machine noise hits both.

Round trips: a task is started and a lease granted first, so every `writes.require` succeeds.
Each round trip is one line written to the child's stdin and one line read back, timed with
time.perf_counter_ns, sequentially (one request in flight). Two diagnostic rows locate the cost:
`task.status` (another state read) and an unknown method (framing + dispatcher only, no root).

Cold start: medians over N runs of `longrun --version` (spawn to exit) and `longrun serve` (spawn to
the first answer of `task.status`, on a root holding a task), against the echo binary's spawn to
first answer. Prints a markdown table to stdout; writes no file except dist/bench-echo.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LONGRUN = os.environ.get("LONGRUN_BIN") or os.path.join(REPO, "dist", "longrun")
ECHO = os.path.join(REPO, "dist", "bench-echo")
ECHO_SRC = os.path.join(REPO, "bench", "echo.ts")
BUN = os.path.join(REPO, "node_modules", ".bin", "bun")
TARGET = 1.3  # issue 26 (issue 4: 1.5)


def build_echo():
    # Built the way scripts/compile.ts builds longrun (bench/lib/compile_like.ts; rebuilt when it or
    # the server code it shares with longrun changed).
    deps = [os.path.join(REPO, "src", "stdio", "server.ts"), os.path.join(REPO, "src", "rpc", "framing.ts")]
    subprocess.run([BUN, os.path.join(REPO, "bench", "lib", "compile_like.ts"), ECHO_SRC, ECHO],
                   env={**os.environ, "LONGRUN_BENCH_DEPS": ":".join(deps)}, check=True, stdout=subprocess.DEVNULL)


class Pipe:
    """A child process spoken to synchronously: one request line out, one answer line back."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        # Requests go out with os.write on the raw fd; answers come back through a *buffered*
        # reader (bufsize=0 would make readline() read one byte per system call).
        self.fd = self.proc.stdin.fileno()
        self.out = self.proc.stdout
        self.next_id = 0

    def line(self, method, params):
        self.next_id += 1
        return (json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params},
                           separators=(",", ":")) + "\n").encode()

    def call(self, method, params=None):
        os.write(self.fd, self.line(method, params or {}))
        answer = json.loads(self.out.readline())
        if answer.get("id") != self.next_id:
            raise RuntimeError("answer for the wrong id: %r" % answer)
        return answer

    def timed(self, data):
        """One round trip of prepared bytes, in ns (the answer is read, not parsed)."""
        t0 = time.perf_counter_ns()
        os.write(self.fd, data)
        self.out.readline()
        return time.perf_counter_ns() - t0

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


def pct(sorted_ns, p):
    """Nearest-rank percentile, in microseconds."""
    k = max(0, min(len(sorted_ns) - 1, int(round(p / 100.0 * len(sorted_ns))) - 1))
    return sorted_ns[k] / 1000.0


def roundtrips(root, calls, warmup):
    lr = Pipe([LONGRUN, "serve", "--root", root])
    echo = Pipe([ECHO])
    for method, params in (("task.start", {"description": "benchmark task"}), ("writes.enable", {"reason": "bench"})):
        answer = lr.call(method, params)
        if "error" in answer:
            raise SystemExit("setup %s failed: %s" % (method, answer["error"]["message"]))
    require = {"action": "edit src/adapters/supplier.ts"}
    if "error" in lr.call("writes.require", require):
        raise SystemExit("writes.require is refused; the benchmark needs it to succeed")
    cases = [  # (row, process, method, params)
        ("longrun writes.require", lr, "writes.require", require),
        ("echo (same request)", echo, "writes.require", require),
        ("longrun task.status", lr, "task.status", {}),
        ("longrun unknown method (dispatcher only)", lr, "no.such.method", {}),
    ]
    samples = {row: [] for row, _, _, _ in cases}
    # Main pair: longrun and echo alternate call by call, ABBA, so drift and noise hit both.
    # Diagnostic rows run afterwards, each alternated with echo the same way.
    for pair in ((cases[0], cases[1]), (cases[2], cases[1]), (cases[3], cases[1])):
        record_echo = pair[0] is cases[0]  # echo samples: from the main pair only
        for i in range(warmup + calls):
            order = pair if i % 2 == 0 else pair[::-1]
            for row, proc, method, params in order:
                ns = proc.timed(proc.line(method, params))
                if i >= warmup and (row != cases[1][0] or record_echo):
                    samples[row].append(ns)
    check = lr.call("writes.require", require)
    if "error" in check:
        raise SystemExit("writes.require started failing during the run: %s" % check["error"]["message"])
    lr.close()
    echo.close()
    return [(row, sorted(samples[row])) for row, _, _, _ in cases]


def via_client(root, calls, warmup):
    """The same call through clients/python/longrun_client.py (reader thread + Event per call), both processes.
    The echo answers every method with {"ok": true}, so the client's system.describe check is off for it."""
    sys.path.insert(0, os.path.join(REPO, "clients", "python"))
    from longrun_client import LongrunClient
    with LongrunClient(root, binary=LONGRUN) as lr, LongrunClient(root, binary=ECHO, check=False) as echo:
        lr.require_writable("edit src/adapters/supplier.ts")  # the task and lease from roundtrips() are still there
        samples = ([], [])
        for i in range(warmup + calls):
            pair = ((0, lr.require_writable), (1, lambda a: echo.call("writes.require", action=a)))
            for k, fn in (pair if i % 2 == 0 else pair[::-1]):
                t0 = time.perf_counter_ns()
                fn("edit src/adapters/supplier.ts")
                if i >= warmup:
                    samples[k].append(time.perf_counter_ns() - t0)
    return [sorted(s) for s in samples]


def cold_starts(root, runs):
    def version():
        t0 = time.perf_counter_ns()
        subprocess.run([LONGRUN, "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter_ns() - t0

    def first_answer(argv):
        t0 = time.perf_counter_ns()
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        os.write(p.stdin.fileno(), b'{"jsonrpc":"2.0","id":1,"method":"task.status","params":{}}\n')
        answer = p.stdout.readline()
        ns = time.perf_counter_ns() - t0
        p.stdin.close()
        p.wait(10)
        if b'"result"' not in answer:
            raise SystemExit("cold start: no result from %s: %r" % (argv[0], answer))
        return ns

    kinds = [("longrun --version (spawn to exit)", version),
             ("longrun serve (spawn to first task.status answer)", lambda: first_answer([LONGRUN, "serve", "--root", root])),
             ("echo (spawn to first answer)", lambda: first_answer([ECHO]))]
    for _, fn in kinds:  # one untimed run each: page cache
        fn()
    samples = {name: [] for name, _ in kinds}
    for i in range(runs):
        for name, fn in (kinds if i % 2 == 0 else kinds[::-1]):
            samples[name].append(fn())
    return [(name, statistics.median(samples[name]) / 1e6) for name, _ in kinds]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--starts", type=int, default=30, help="cold starts (0: none)")
    ap.add_argument("--no-client", action="store_true", help="skip the clients/python rows")
    ap.add_argument("--json", action="store_true", help="print only one JSON object (for bench/run.ts)")
    args = ap.parse_args()
    if not os.access(LONGRUN, os.X_OK):
        raise SystemExit("no %s: run ./compile.sh first" % LONGRUN)
    build_echo()
    version = subprocess.run([LONGRUN, "--version"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="longrun-bench-") as tmp:
        root = os.path.realpath(tmp)
        rows = roundtrips(root, args.calls, args.warmup)
        client = None if args.no_client else via_client(root, args.calls // 2, args.warmup)
        starts = cold_starts(root, args.starts) if args.starts > 0 else None
    echo50 = pct(rows[1][1], 50)
    if args.json:
        out = {"version": version, "rows": {row: {"p50_us": pct(s, 50), "p99_us": pct(s, 99)} for row, s in rows},
               "ratio": pct(rows[0][1], 50) / echo50}
        if client:
            out["client"] = {"longrun_p50_us": pct(client[0], 50), "echo_p50_us": pct(client[1], 50)}
        if starts:
            out["starts_ms"] = dict(starts)
        print(json.dumps(out))
        return 0

    print("## stdio round trips (%s, %d calls after %d warm-up, sequential)\n" % (version, args.calls, args.warmup))
    print("| process / method | p50 µs | p99 µs | p50 / echo p50 |")
    print("|---|---:|---:|---:|")
    for row, s in rows:
        print("| %s | %.1f | %.1f | %.2f |" % (row, pct(s, 50), pct(s, 99), pct(s, 50) / echo50))
    ratio = pct(rows[0][1], 50) / echo50
    print("\nratio p50(longrun writes.require) / p50(echo) = **%.2f** (target <= %.1f: %s)\n"
          % (ratio, TARGET, "met" if ratio <= TARGET else "NOT met"))
    if client:
        print("## the same through clients/python (reader thread; %d calls)\n" % (args.calls // 2))
        print("| process | p50 µs | p99 µs | p50 / echo p50 |")
        print("|---|---:|---:|---:|")
        for name, s in (("LongrunClient.require_writable -> longrun", client[0]), ("LongrunClient.call -> echo", client[1])):
            print("| %s | %.1f | %.1f | %.2f |" % (name, pct(s, 50), pct(s, 99), pct(s, 50) / pct(client[1], 50)))
        print()
    if starts:
        print("## cold start (median of %d runs)\n" % args.starts)
        print("| what | median ms | / echo first answer |")
        print("|---|---:|---:|")
        echo_ms = starts[2][1]
        for name, ms in starts:
            print("| %s | %.1f | %.2f |" % (name, ms, ms / echo_ms))
    print("\nmachine: %s, %d cores, Python %s" % (platform.machine(), os.cpu_count() or 0, platform.python_version()))


if __name__ == "__main__":
    sys.exit(main())
