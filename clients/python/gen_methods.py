"""Writes longrun/_methods.py: the protocol's methods as typed Python methods, sync and async.

One table (METHODS below) gives each method its Python name, its wire name, its params with their
types and its result type; this script writes the same methods twice, once for the threaded and
HTTP clients (``ContractMethods``) and once for the asyncio clients (``AsyncContractMethods``),
so the two never drift apart. A test checks that the file is up to date.

    python3 clients/python/gen_methods.py           # rewrite longrun/_methods.py
    python3 clients/python/gen_methods.py --check   # exit 1 if it is out of date
"""
import os
import sys
from typing import Dict, List, NamedTuple, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "longrun", "_methods.py")

REQUIRED = object()
UNSET = object()  # a param that is sent even as None (JSON null) when given, left out when not


class P(NamedTuple):
    name: str
    type: str
    default: object = None  # REQUIRED, None (dropped when None) or UNSET


class M(NamedTuple):
    py: str
    wire: str
    result: str
    params: Tuple[P, ...]
    doc: str
    fixed: Tuple[Tuple[str, str], ...] = ()  # params sent with a fixed value (a Python literal)


def req(name: str, type_: str) -> P:
    return P(name, type_, REQUIRED)


def opt(name: str, type_: str) -> P:
    return P(name, "Optional[%s]" % type_, None)


STRS = "Sequence[str]"
BUDGET = "BudgetLimits"
AMOUNTS = tuple(opt(d, "float") for d in ("requests", "input_tokens", "output_tokens", "tool_calls", "cost"))

METHODS: Tuple[M, ...] = (
    # -- system ---------------------------------------------------------------------------------
    M("describe", "system.describe", "DescribeResult", (),
      "Versions, every method with its side and params schema, the limits and the error codes."),
    # -- tasks ----------------------------------------------------------------------------------
    M("start_task", "task.start", "TaskStartResult",
      (req("description", "str"), opt("keywords", STRS), opt("constraints", STRS), opt("desired_outcome", "str"), opt("bounds", "TaskBounds")),
      "Searches this root's memory first, then creates a task and makes it current (in_progress, read-only, turn 1).\n"
      "Host: ``constraints`` and ``desired_outcome`` (verbatim) and ``bounds`` are the task's own terms; its runs never exceed them."),
    M("status", "task.status", "TaskStatusResult", (opt("task_id", "str"),),
      "The current task (or another by ``task_id``; ``task`` is None when there is none), its pending checkpoint and runs."),
    M("list_tasks", "task.list", "TaskListResult", (),
      "Every task of the root, newest first, with which one is current."),
    M("switch_task", "task.switch", "TaskResult", (req("task_id", "str"), opt("reason", "str")),
      "Makes another open task current; the turn ends and the task switched to starts read-only."),
    M("transition", "task.transition", "TaskResult", (req("to", "TaskStatus"), req("reason", "str"), opt("task_id", "str")),
      "A whitelisted status change; leaving in_progress revokes the lease (TransitionError otherwise)."),
    M("checkpoint", "task.checkpoint", "CheckpointResult",
      (req("summary", "str"), req("next_step", "str"), opt("phase", "str"), opt("kind", "str"), opt("data", "Mapping[str, Any]"), opt("lang", "CheckpointLang")),
      "Saved to memory before it is shown: returns ``text`` (with its machine line), ``memory_id`` and the task.\n\n"
      "A pause checkpoint (the default) pauses the task and ends the lease: use it when the turn or the\n"
      "conversation ends. ``kind=\"progress\"`` keeps the task running and the lease standing (see ``progress``).\n"
      "``data`` is your own state (a JSON object, at most 16,384 characters as JSON), given back by\n"
      "``resume`` and ``recover``; omitted, the last checkpoint's data carries on. ``lang``: en, zh or ko."),
    M("progress", "task.checkpoint", "CheckpointResult",
      (req("summary", "str"), req("next_step", "str"), opt("data", "Mapping[str, Any]"), opt("phase", "str"), opt("lang", "CheckpointLang")),
      "A progress checkpoint: saved like any checkpoint (memory first), but the task keeps running and the\n"
      "lease stands. Use it every few steps of a loop, with ``data`` holding where the loop is.",
      fixed=(("kind", '"progress"'),)),
    M("resume", "task.resume", "ResumeResult", (opt("message_id", "str"),),
      "A new turn, read-only; replays a pending checkpoint once; the task, recent memories and the last checkpoint's ``data``.\n"
      "``message_id``: the user message's id; the message that began the current turn begins no second one."),
    M("recover", "task.recover", "RecoverResult", (opt("force", "bool"),),
      "Rebuilds a lost or corrupt task state from the newest checkpoint in memory (``data`` included); ``force`` is the host's."),
    M("recover_from_memory", "task.recover", "RecoverResult", (opt("force", "bool"),),
      "The same as ``recover`` (the name earlier clients used)."),
    M("finish", "task.finish", "FinishResult", (opt("summary", "str"), opt("task_id", "str"), opt("cancel_runs", "bool")),
      "Completes the task and saves an outcome record; refused while its runs are open unless the host passes ``cancel_runs``."),
    # -- turns and the write lease --------------------------------------------------------------
    M("begin_turn", "turn.begin", "TaskResult", (opt("reason", "str"), opt("message_id", "str")),
      "Host: a new user message began; the turn advances and any lease is revoked. ``message_id``: the\n"
      "message's id; a message that already began this turn (here or by ``resume``) begins no second one."),
    M("end_turn", "turn.end", "TaskResult", (opt("reason", "str"),),
      "Host: the turn is over; the lease is revoked (the turn number stays)."),
    M("enable_writes", "writes.enable", "GrantResult",
      (req("reason", "str"), opt("scope", STRS), opt("ttl_seconds", "int"), opt("max_uses", "int")),
      "Host: grants a write lease for the current turn only."),
    M("request_writes", "writes.request", "RequestResult", (req("reason", "str"), opt("scope", STRS)),
      "Asks the host for a lease; recorded, never granted by itself."),
    M("require_writable", "writes.require", "GateResult", (req("action", "str"),),
      "The gate check: returns when a lease of this turn covers ``action``, raises WriteGateViolation otherwise."),
    # -- memory ---------------------------------------------------------------------------------
    M("save_memory", "memory.save", "MemorySaveResult", (req("type", "str"), req("title", "str"), req("content", "str"), opt("keywords", STRS)),
      "Saves one memory record; returns its id."),
    M("save_memories", "memory.save_many", "MemorySaveManyResult", (req("items", "Sequence[MemoryItem]"),),
      "Saves up to 1,000 records in one transaction; their ids in order."),
    M("search_memory", "memory.search", "MemorySearchResult",
      (req("query", "str"), opt("limit", "int"), opt("type", "str"), opt("cursor", "str")),
      "Full-text search (English, Chinese, Korean); pages carry ``next_cursor``."),
    M("get_memory", "memory.get", "MemoryGetResult", (req("id", "str"),),
      "One memory record, whole body included."),
    # -- runs -----------------------------------------------------------------------------------
    M("start_run", "run.start", "RunResult",
      (req("owner", "str"), opt("tools", STRS), opt("sources", STRS), opt("send", STRS), opt("scope", STRS), opt("budget", BUDGET),
       opt("constraints", STRS), opt("reason", "str")),
      "Starts a run of the current task (epoch 1): owner, authorization (tools, sources, ``send``), budget limits.\n"
      "From the host it is granted at once; from the agent side it is ``requested`` until the host grants it."),
    M("get_run", "run.get", "RunGetResult", (req("run_id", "str"),),
      "Observes a run (changes nothing): status, owner, epoch, budget, unknown receipts, open items, events."),
    M("claim_run", "run.claim", "RunClaimResult", (req("run_id", "str"), req("owner", "str")),
      "Same-run recovery: a new epoch; receipts begun but not settled become unknown."),
    M("continue_run", "run.continue", "RunContinueResult",
      (req("parent_run_id", "str"), req("owner", "str"), req("budget", BUDGET), opt("tools", STRS), opt("sources", STRS), opt("send", STRS),
       opt("scope", STRS), opt("reason", "str")),
      "A new run continuing ``parent_run_id``: permissions narrowed or kept, an explicit budget, the parent's unknowns as open items.\n"
      "From the agent side it is ``requested`` until the host grants it."),
    M("grant_run", "run.grant", "RunResult",
      (req("run_id", "str"), req("reason", "str"), opt("tools", STRS), opt("sources", STRS), opt("send", STRS), opt("scope", STRS),
       opt("budget", BUDGET), opt("deadline", "str")),
      "Host: grants a requested run as asked or narrowed (each omitted: as asked; never wider than the request)."),
    M("refuse_run", "run.refuse", "RunResult", (req("run_id", "str"), req("reason", "str")),
      "Host: refuses a requested run; it ends as ``refused`` and begins no effect."),
    M("list_runs", "run.list", "RunListResult", (opt("task_id", "str"), opt("all_tasks", "bool")),
      "A task's runs with budget, open items and newest checkpoint, and the task's total spend."),
    M("checkpoint_run", "run.checkpoint", "RunCheckpointResult",
      (req("run_id", "str"), req("epoch", "int"), req("settled", STRS), req("open", STRS), opt("note", "str")),
      "A run's own working summary (what is settled, what is open), fenced by its epoch."),
    M("park_run", "run.park", "RunResult", (req("run_id", "str"), req("epoch", "int"), req("waiting_for", "str"), opt("for_user", "bool")),
      "Parks a running run with what it waits for; ``for_user``: only the host wakes it, with the answer."),
    M("wake_run", "run.wake", "RunResult", (req("run_id", "str"), opt("epoch", "int"), opt("reason", "str"), opt("answer", "HostAnswerIn")),
      "Wakes a parked run; identity, receipts and budget are kept. The host may omit the epoch and give the\n"
      "user's ``answer`` (``{\"text\": …, \"data\": {…}}``), delivered to the run."),
    M("yield_run", "run.yield", "RunResult",
      (req("run_id", "str"), req("epoch", "int"), req("reason", "str"), opt("request_id", "str"), opt("adjustment_id", "str")),
      "Records that a request stopped so the next adopts an adjustment; the run keeps running."),
    M("cancel_run", "run.cancel", "RunResult", (req("run_id", "str"), req("reason", "str"), opt("epoch", "int")),
      "The user stops the run; the host may omit the epoch."),
    M("finish_run", "run.finish", "RunResult",
      (req("run_id", "str"), req("epoch", "int"), req("outcome", "str"), opt("gaps", STRS), opt("status", "RunEndStatus")),
      "Ends a run with its outcome and the gaps still open."),
    # -- receipts -------------------------------------------------------------------------------
    M("begin_receipt", "receipt.begin", "ReceiptBeginResult",
      (req("run_id", "str"), req("epoch", "int"), req("tool", "str"), req("idempotency_key", "str"),
       P("args", "Any", UNSET), opt("args_digest", "str"), opt("source", "str"), opt("send_to", "str"), opt("kind", "ReceiptKind")),
      "Records an effect before it runs; a key that completed returns its result with ``replayed: True``.\n"
      "``kind``: ``tool_call`` (default, counts a tool call), ``model_request`` (counts a request) or ``child_run``.\n"
      "Give ``args`` (hashed by the server; None is sent as JSON null) or ``args_digest``. See also ``effect``."),
    M("settle_receipt", "receipt.settle", "ReceiptResult",
      (req("run_id", "str"), req("epoch", "int"), req("receipt_id", "str"), req("outcome", "ReceiptOutcome"),
       opt("result_ref", "str"), opt("error", "str"), opt("evidence", "str")),
      "Settles an effect: completed (``result_ref``) or failed (``error``); an unknown one only with ``evidence``."),
    M("list_receipts", "receipt.list", "ReceiptListResult", (req("run_id", "str"), opt("status", "ReceiptStatus")),
      "A run's receipts, optionally by status."),
    # -- budgets --------------------------------------------------------------------------------
    M("charge", "budget.charge", "ChargeResult",
      (req("run_id", "str"), req("epoch", "int")) + AMOUNTS + (opt("unknown", "Union[bool, Sequence[BudgetDimension]]"), opt("note", "str")),
      "Records spending (always, also past a limit); ``unknown`` counts it as unknown, never zero."),
    M("reconcile_charge", "budget.reconcile", "BudgetResult",
      (req("run_id", "str"), req("epoch", "int"), req("charge_id", "str"), req("evidence", "str")) + AMOUNTS,
      "Records what an unknown charge really cost, with evidence."),
    M("budget_status", "budget.status", "BudgetResult", (req("run_id", "str"),),
      "A run's limits, spend, remaining, and whether new effects are allowed."),
    # -- adjustments ----------------------------------------------------------------------------
    M("receive_adjustment", "adjust.receive", "AdjustmentResult", (req("text", "str"), opt("run_id", "str")),
      "Host: stores the user's adjustment verbatim."),
    M("handoff_adjustment", "adjust.handoff", "AdjustmentResult",
      (req("adjustment_id", "str"), req("run_id", "str"), req("epoch", "int"), req("request_id", "str")),
      "Records the request (a receipt of the run, begun after the adjustment) that carried it."),
    M("satisfy_adjustment", "adjust.satisfy", "AdjustmentResult", (req("adjustment_id", "str"), req("artifact", "str"), req("version", "int")),
      "Records the artifact version that addresses it."),
    M("list_adjustments", "adjust.list", "AdjustmentListResult", (opt("task_id", "str"),),
      "A task's adjustments (the current task's by default), verbatim, with their history."),
    # -- artifacts ------------------------------------------------------------------------------
    M("put_artifact", "artifact.put", "ArtifactResult",
      (req("name", "str"), req("kind", "ArtifactKind"), req("content", "str"), opt("supersedes", "Sequence[int]"),
       opt("run_id", "str"), opt("epoch", "int"), opt("note", "str"), opt("attachments", "Sequence[AttachmentInput]")),
      "Saves a deliverable version (draft, increment or full); allowed even past the budget."),
    M("get_artifact", "artifact.get", "ArtifactGetResult", (req("name", "str"), opt("version", "int"), opt("attachment", "str")),
      "One version with its content (newest by default), or one attachment's content."),
    M("list_artifacts", "artifact.list", "ArtifactListResult", (opt("name", "str"), opt("task_id", "str")),
      "Versions of a task's artifacts (the current task's by default)."),
    M("mark_artifact", "artifact.mark", "ArtifactResult",
      (req("name", "str"), req("version", "int"), req("mark", "ArtifactMark"), opt("ok", "bool"), opt("detail", "str")),
      "Marks a version preview, saved, exported or opened (``ok=False`` for a failure)."),
    # -- context --------------------------------------------------------------------------------
    M("put_context", "context.put", "ContextPutResult",
      (req("label", "str"), req("content", "str"), opt("source", "str"), opt("run_id", "str"), opt("epoch", "int")),
      "Stores a large result under raw_data/; returns its ``ref``, size and sha256."),
    M("read_context", "context.read", "ContextReadResult",
      (req("ref", "str"), opt("run_id", "str"), opt("offset", "int"), opt("length", "int")),
      "An exact byte range of a stored result, and the coverage read so far."),
    M("share_context", "context.share", "ContextShareResult", (req("ref", "str"), req("task_id", "str")),
      "Lets another task read one of the current task's refs."),
)


def _signature(m: M) -> str:
    parts = ["self"]
    for p in m.params:
        if p.default is REQUIRED:
            parts.append("%s: %s" % (p.name, p.type))
        elif p.default is UNSET:
            parts.append("%s: %s = UNSET" % (p.name, p.type))
        else:
            parts.append("%s: %s = None" % (p.name, p.type))
    return ", ".join(parts)


def _params_dict(m: M) -> str:
    items = ['"%s": %s' % (k, v) for k, v in m.fixed] + ['"%s": %s' % (p.name, p.name) for p in m.params]
    return "{" + ", ".join(items) + "}"


def _doc(doc: str, indent: str) -> List[str]:
    lines = doc.split("\n")
    if len(lines) == 1:
        return [indent + '"""%s"""' % lines[0]]
    return [indent + '"""' + lines[0]] + [(indent + l) if l else "" for l in lines[1:]] + [indent + '"""']


def _method(m: M, is_async: bool) -> List[str]:
    d = "async def" if is_async else "def"
    aw = "await " if is_async else ""
    keep = [p.name for p in m.params if p.default is UNSET]
    clean = "_clean(%s%s)" % (_params_dict(m), (", keep=%r" % (tuple(keep),)) if keep else "")
    return (
        ["    %s %s(%s) -> %s:" % (d, m.py, _signature(m), m.result)]
        + _doc(m.doc, "        ")
        + ['        return cast(%s, %sself._request("%s", %s))' % (m.result, aw, m.wire, clean), ""]
    )


def render() -> str:
    out = [
        '"""The protocol\'s methods as typed Python methods, sync and async.',
        "",
        "Generated by clients/python/gen_methods.py from its METHODS table: do not edit by hand.",
        '"""',
        "# fmt: off",
        "from __future__ import annotations",
        "",
        "from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union, cast",
        "",
        "from .types import (",
    ]
    names = set()
    for m in METHODS:
        names.add(m.result)
        for p in m.params:
            for word in p.type.replace("[", " ").replace("]", " ").replace(",", " ").split():
                if word[:1].isupper() and word not in ("Optional", "Sequence", "Mapping", "Union", "Any"):
                    names.add(word)
    out += ["    %s," % n for n in sorted(names)] + [")", ""]
    out += [
        "",
        "class _Unset:",
        '    """A param not given (as opposed to one given as None, which is sent as JSON null)."""',
        "",
        "    def __repr__(self) -> str:",
        '        return "UNSET"',
        "",
        "",
        "UNSET: Any = _Unset()",
        "",
        "",
        "def _clean(params: Dict[str, Any], keep: Tuple[str, ...] = ()) -> Dict[str, Any]:",
        '    """The params to send: None values dropped (except those in ``keep``), unset ones always."""',
        "    return {k: v for k, v in params.items() if v is not UNSET and (v is not None or k in keep)}",
        "",
        "",
        "#: Every wire method these classes call, with the params they may send (checked against system.describe).",
        "METHOD_PARAMS: Dict[str, Tuple[str, ...]] = {",
    ]
    seen: Dict[str, List[str]] = {}
    for m in METHODS:
        ps = seen.setdefault(m.wire, [])
        for name in [k for k, _ in m.fixed] + [p.name for p in m.params]:
            if name not in ps:
                ps.append(name)
    for wire in sorted(seen):
        out.append('    "%s": (%s),' % (wire, "".join('"%s", ' % p for p in seen[wire]).rstrip(" ")))
    out += ["}", "", ""]
    for is_async in (False, True):
        cls = "AsyncContractMethods" if is_async else "ContractMethods"
        out += [
            "class %s:" % cls,
            '    """Every method of the protocol over ``_request`` (%s). Results are the server\'s, unchanged."""'
            % ("awaitable: the asyncio clients" if is_async else "the threaded stdio client and the HTTP client"),
            "",
            "    %s _request(self, method: str, params: Dict[str, Any]) -> Any:" % ("async def" if is_async else "def"),
            "        raise NotImplementedError",
            "",
        ]
        for m in METHODS:
            out += _method(m, is_async)
        out[-1:] = ["", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        with open(TARGET, encoding="utf-8") as f:
            if f.read() != text:
                print("%s is out of date: run python3 clients/python/gen_methods.py" % TARGET, file=sys.stderr)
                return 1
        return 0
    with open(TARGET, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
