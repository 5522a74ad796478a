#!/usr/bin/env python3
"""Benchmark (not a test): process time of the Claude Code PreToolUse gate, start to exit.

Runs `dist/longrun hook claude PreToolUse` with real payloads against real roots: a Read, a Write under a
granted lease (the pass path: no output), a Write with no task (the deny path), a read-only Bash
command (`git status`: the allowlist plus git's configuration check, which runs `git config`)
and a Bash command under the lease (the shell reader's protected-path checks), alternating with
a reference: the floor of a compiled Bun program that does a hook's I/O (`dist/bench-hello`: reads
its stdin with `readFileSync(0)`, parses it, answers with `console.log`), so machine noise hits
both. Prints medians, p90 and the ratio to the reference.

Each case runs twice: decided in the hook's own process (the cold path: no resident gate runs for
the root), and answered by the root's resident gate (`longrun hook gate`, started here for the two
roots it serves: the hook is then a thin client on `.longrun/gate.sock`); "resident gate, ..." rows.
The resident gate's own CPU per call is read from /proc before and after its rows.

Target (issue 9): every gate case within 1.3x of that floor (issue 4's: median under 15 ms).

Usage: python3 bench/hook_gate.py [runs] [--json]   (--json: one JSON object, for bench/run.ts)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("LONGRUN_BIN") or os.path.join(REPO, "dist", "longrun")
BUN = os.path.join(REPO, "node_modules", ".bin", "bun")
HELLO = os.path.join(REPO, "dist", "bench-hello")


def build_reference():
    src = os.path.join(tempfile.mkdtemp(), "hello.ts")
    with open(src, "w") as f:
        f.write('import { readFileSync } from "node:fs";\nconst input = JSON.parse(readFileSync(0, "utf8"));\nconsole.log(JSON.stringify({ seen: typeof input }));\n')
    # Built the way scripts/compile.ts builds longrun (bench/lib/compile_like.ts), so only the work differs.
    subprocess.run([BUN, os.path.join(REPO, "bench", "lib", "compile_like.ts"), src, HELLO], check=True, capture_output=True)


def answer(argv, stdin):
    """Runs once with pipes and returns stdout, to check what the process answers."""
    p = subprocess.run(argv, input=stdin, capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"{argv} exited {p.returncode}: {p.stderr.decode()}")
    return p.stdout


def decided(out):
    """The hook's answer: "none" (no output: pass), its permissionDecision, or "wrapped" (a Bash
    command passed, rewritten to run inside `longrun sandbox`, issue 22)."""
    if not out.strip():
        return "none"
    specific = json.loads(out)["hookSpecificOutput"]
    if "permissionDecision" in specific:
        return specific["permissionDecision"]
    return "wrapped" if "updatedInput" in specific else "?"


def timed(argv, stdin_path):
    """Start to exit, spawned with posix_spawn (stdin from a file, stdout to /dev/null), so the
    launcher adds as little as it can to what is measured."""
    with open(stdin_path, "rb") as fin, open(os.devnull, "wb") as fout:
        actions = [(os.POSIX_SPAWN_DUP2, fin.fileno(), 0), (os.POSIX_SPAWN_DUP2, fout.fileno(), 1), (os.POSIX_SPAWN_DUP2, fout.fileno(), 2)]
        t0 = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        dt = (time.perf_counter_ns() - t0) / 1e6
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} exited {status}")
    return dt


def gate_cpu_ms(pid):
    """User and system CPU a process has used so far, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    as_json = "--json" in sys.argv[1:]
    runs = int(args[0]) if args else 60
    if not os.path.exists(BIN):
        raise SystemExit("dist/longrun is missing: run ./compile.sh first")
    build_reference()
    granted = tempfile.mkdtemp(prefix="longrun-bench-")
    empty = tempfile.mkdtemp(prefix="longrun-bench-")
    readonly = tempfile.mkdtemp(prefix="longrun-bench-")
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "bench\n/approve benchmark"}).encode()
    subprocess.run([BIN, "hook", "claude", "UserPromptSubmit", "--root", granted], input=prompt, check=True, capture_output=True)
    subprocess.run([BIN, "hook", "claude", "UserPromptSubmit", "--root", readonly], input=prompt, check=True, capture_output=True)
    reading = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "look first"}).encode()
    subprocess.run([BIN, "hook", "claude", "UserPromptSubmit", "--root", readonly], input=reading, check=True, capture_output=True)

    subprocess.run(["git", "init", "-q", granted], check=True)

    def payload(root):
        return json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": os.path.join(root, "a.txt"), "content": "x"}}).encode()

    def read(root):
        return json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": os.path.join(root, "README.md")}}).encode()

    def bash(root, command):
        return json.dumps({"hook_event_name": "PreToolUse", "cwd": root, "tool_name": "Bash", "tool_input": {"command": command}}).encode()

    gate = [BIN, "hook", "claude", "PreToolUse", "--root"]
    cases = {
        "gate, Read passes": (gate + [granted], read(granted), "none"),
        "gate, Write passes (lease granted)": (gate + [granted], payload(granted), "none"),
        "gate, Write denied (no task)": (gate + [empty], payload(empty), "deny"),
        "gate, read-only Bash `git status` passes": (gate + [granted], bash(granted, "git status --short"), ("none", "wrapped")),
        "gate, Write denied (read-only turn)": (gate + [readonly], payload(readonly), "deny"),
        "gate, Bash under the lease passes": (gate + [granted], bash(granted, "mkdir -p build && cp -r src build/ && npm test -- --grep parser"), ("none", "wrapped")),
        "reference: compiled Bun stdin-to-stdout floor": ([HELLO], payload(granted), None),
    }
    # the same calls answered by a resident gate (the no-task root has no .longrun/, so no gate serves it)
    resident = {f"resident gate, {k[len('gate, '):]}": v for k, v in cases.items() if k.startswith("gate, ") and "(no task)" not in k}
    samples = {k: [] for k in list(cases) + list(resident)}
    inputs = {}
    checked = {}

    def check(name, argv, stdin, decision):
        out = answer(argv, stdin)
        got = decision and decided(out)
        if decision and got not in (decision if isinstance(decision, tuple) else (decision,)):
            raise SystemExit(f"{name}: unexpected answer {out!r}")
        path = os.path.join(tempfile.mkdtemp(), "stdin.json")
        with open(path, "wb") as f:
            f.write(stdin)
        inputs[name] = path
        checked[name] = out

    def measure(table, ref_name):
        for _ in range(5):  # warm the page cache
            for name, (argv, _s, _d) in table.items():
                timed(argv, inputs[name])
        for _ in range(runs):
            for name, (argv, _s, _d) in table.items():
                samples[name].append(timed(argv, inputs[name]))
            if ref_name:
                samples[ref_name].append(timed(cases[ref_name][0], inputs[ref_name]))

    for name, (argv, stdin, decision) in cases.items():
        check(name, argv, stdin, decision)
    measure(cases, None)
    gates = [subprocess.Popen([BIN, "hook", "gate", "--root", r, "--idle-exit", "600"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for r in (granted, readonly)]
    try:
        for r in (granted, readonly):
            sock = os.path.join(r, ".longrun", "gate.sock")
            deadline = time.monotonic() + 10
            while not os.path.exists(sock):
                if time.monotonic() > deadline:
                    raise SystemExit(f"no resident gate came up on {sock}")
                time.sleep(0.01)
        for name, (argv, stdin, decision) in resident.items():
            check(name, argv, stdin, decision)
            plain = "gate, " + name[len("resident gate, "):]
            if checked[name] != checked[plain]:
                raise SystemExit(f"{name}: the resident gate answered {checked[name]!r}, the hook alone {checked[plain]!r}")
        cpu0 = sum(gate_cpu_ms(g.pid) for g in gates)
        measure(resident, "reference: compiled Bun stdin-to-stdout floor")
        server_cpu_per_call = (sum(gate_cpu_ms(g.pid) for g in gates) - cpu0) / (runs * len(resident) + 5 * len(resident))
    finally:
        for g in gates:
            g.terminate()
            g.wait()
    ref = statistics.median(samples["reference: compiled Bun stdin-to-stdout floor"])
    if as_json:
        print(json.dumps({"runs": runs, "reference_ms": ref, "resident_gate_cpu_ms_per_call": server_cpu_per_call, "cases": {k: statistics.median(xs) for k, xs in samples.items()}}))
        return
    print(f"PreToolUse gate, process start to exit, {runs} runs each, interleaved ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores)\n")
    print("| case | median ms | p90 ms | median / reference |")
    print("|---|---:|---:|---:|")
    for name, xs in samples.items():
        xs.sort()
        p90 = xs[int(len(xs) * 0.9) - 1]
        print(f"| {name} | {statistics.median(xs):.1f} | {p90:.1f} | {statistics.median(xs) / ref:.2f}x |")
    print(f"\nthe resident gate's own CPU per call: {server_cpu_per_call:.2f} ms")
    for label, prefix in (("the hook alone", "gate, "), ("with the resident gate", "resident gate, ")):
        worst = max(statistics.median(samples[k]) for k in samples if k.startswith(prefix))
        print(f"target ({label}): every case within 1.3x of the floor -> {'met' if worst / ref <= 1.3 else 'NOT met'} ({worst / ref:.2f}x)")


if __name__ == "__main__":
    main()
