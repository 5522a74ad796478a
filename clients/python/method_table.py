"""The Python face of each protocol method, what ``system.describe`` cannot say: its Python name and
docstring, the order of its arguments, its result type, aliases. gen_methods.py reads the rest
(params, requiredness, types) from methods.json and writes longrun/_methods.py."""
from typing import NamedTuple, Tuple


class M(NamedTuple):
    """One typed method: ``params`` names the wire params it takes, in the order Python takes them."""
    py: str
    wire: str
    result: str
    params: str  # the Python arguments in order, space-separated; ``name=UNSET``: sent even as None when given
    doc: str
    fixed: Tuple[Tuple[str, str], ...] = ()  # params sent with a fixed value (a Python literal)


TASK_METHODS: Tuple[M, ...] = (
    # -- system ------------------------------------------------------------------------------------
    M("describe", "system.describe", "DescribeResult", "",
      "Versions, every method with its side and params schema, the limits and the error codes."),
    # -- task --------------------------------------------------------------------------------------
    M("start_task", "task.start", "TaskStartResult", "description keywords constraints desired_outcome bounds",
      "Searches this root's memory first, then creates a task and makes it current (in_progress, read-only, turn 1).\n"
      "Host: ``constraints`` and ``desired_outcome`` (verbatim) and ``bounds`` are the task's own terms; its runs never exceed them."),
    M("status", "task.status", "TaskStatusResult", "task_id",
      "The current task (or another by ``task_id``; ``task`` is None when there is none), its pending checkpoint and runs."),
    M("list_tasks", "task.list", "TaskListResult", "",
      "Every task of the root, newest first, with which one is current."),
    M("switch_task", "task.switch", "TaskResult", "task_id reason",
      "Makes another open task current; the turn ends and the task switched to starts read-only."),
    M("transition", "task.transition", "TaskResult", "to reason task_id",
      "A whitelisted status change; leaving in_progress revokes the lease (TransitionError otherwise)."),
    M("checkpoint", "task.checkpoint", "CheckpointResult", "summary next_step phase kind data lang",
      "Saved to memory before it is shown: returns ``text`` (with its machine line), ``memory_id`` and the task.\n"
      "\n"
      "A pause checkpoint (the default) pauses the task and ends the lease: use it when the turn or the\n"
      "conversation ends. ``kind=\"progress\"`` keeps the task running and the lease standing (see ``progress``).\n"
      "``data`` is your own state (a JSON object, at most 16,384 characters as JSON), given back by\n"
      "``resume`` and ``recover``; omitted, the last checkpoint's data carries on. ``lang``: en, zh or ko."),
    M("progress", "task.checkpoint", "CheckpointResult", "summary next_step data phase lang",
      "A progress checkpoint: saved like any checkpoint (memory first), but the task keeps running and the\n"
      "lease stands. Use it every few steps of a loop, with ``data`` holding where the loop is.",
      fixed=(("kind", '"progress"'),)),
    M("resume", "task.resume", "ResumeResult", "message_id",
      "A new turn, read-only; replays a pending checkpoint once; the task, recent memories and the last checkpoint's ``data``.\n"
      "``message_id``: the user message's id; the message that began the current turn begins no second one."),
    M("recover", "task.recover", "RecoverResult", "force checkpoint_id",
      "Rebuilds a lost or corrupt task state from the newest checkpoint in memory (``data`` included); ``force`` is the host's.\n"
      "Host: ``checkpoint_id`` rebuilds the current task from that (older) checkpoint instead, recorded in its history."),
    M("recover_from_memory", "task.recover", "RecoverResult", "force",
      "The same as ``recover`` (the name earlier clients used)."),
    M("checkpoints", "task.checkpoints", "CheckpointListResult", "task_id limit cursor",
      "A task's checkpoints (the current task's, or another's by ``task_id``), newest first, paged by ``next_cursor``."),
    M("get_checkpoint", "checkpoint.get", "CheckpointGetResult", "checkpoint_id",
      "One checkpoint of a task of this root, whole: its text and ``data``."),
    M("fork", "task.fork", "ForkResult", "checkpoint_id description",
      "Host: a new current task that begins where the checkpoint left off (its text and ``data``), turn 1,\n"
      "read-only, ``forked_from`` set; it never inherits the lease, run grants or terms of the parent."),
    M("delete", "task.delete", "DeleteResult", "task_id reason memories",
      "Host: deletes a task of this root (not the current one, none of its runs open): its state, checkpoints,\n"
      "runs, artifacts, contexts, adjustments, approvals and events; memories saved under it stay unless ``memories``.\n"
      "A tombstone stays; deleting it again answers ``already: True``."),
    M("finish", "task.finish", "FinishResult", "summary task_id cancel_runs",
      "Completes the task and saves an outcome record; refused while its runs are open unless the host passes ``cancel_runs``."),
    # -- turn --------------------------------------------------------------------------------------
    M("begin_turn", "turn.begin", "TaskResult", "reason message_id",
      "Host: a new user message began; the turn advances and any lease is revoked. ``message_id``: the\n"
      "message's id; a message that already began this turn (here or by ``resume``) begins no second one."),
    M("end_turn", "turn.end", "TaskResult", "reason",
      "Host: the turn is over; the lease is revoked (the turn number stays)."),
    # -- writes ------------------------------------------------------------------------------------
    M("enable_writes", "writes.enable", "GrantResult", "reason scope ttl_seconds max_uses",
      "Host: grants a write lease for the current turn only."),
    M("request_writes", "writes.request", "RequestResult", "reason scope",
      "Asks the host for a lease; recorded, never granted by itself."),
    M("require_writable", "writes.require", "GateResult", "action",
      "The gate check: returns when a lease of this turn covers ``action``, raises WriteGateViolation otherwise."),
    # -- memory ------------------------------------------------------------------------------------
    M("save_memory", "memory.save", "MemorySaveResult", "type title content keywords",
      "Saves one memory record; returns its id."),
    M("save_memories", "memory.save_many", "MemorySaveManyResult", "items",
      "Saves up to 1,000 records in one transaction; their ids in order."),
    M("search_memory", "memory.search", "MemorySearchResult", "query limit type cursor",
      "Full-text search (English, Chinese, Korean); pages carry ``next_cursor``."),
    M("get_memory", "memory.get", "MemoryGetResult", "id",
      "One memory record, whole body included."),
    M("update_memory", "memory.update", "MemoryUpdateResult", "id content title keywords",
      "A new version of a record (a new id, ``supersedes`` the old); search finds the newest version only."),
    M("forget_memory", "memory.forget", "MemoryForgetResult", "ids query type dry_run reason",
      "Host: forgets records (``ids``, or what search finds for ``query``, optionally of one ``type``; ``dry_run`` lists them):\n"
      "their text leaves the index, the record and raw_data; a tombstone keeps a late write from bringing them back."),
)

RUN_METHODS: Tuple[M, ...] = (
    # -- run ---------------------------------------------------------------------------------------
    M("start_run", "run.start", "RunResult", "owner tools sources send scope budget constraints reason owner_ttl_seconds",
      "Starts a run of the current task (epoch 1): owner, authorization (tools, sources, ``send``), budget limits.\n"
      "From the host it is granted at once; from the agent side it is ``requested`` until the host grants it.\n"
      "``owner_ttl_seconds``: the owner beats (``heartbeat_run``) at least that often, or the run shows ``stale_owner``."),
    M("get_run", "run.get", "RunGetResult", "run_id",
      "Observes a run (changes nothing): status, owner, epoch, budget, unknown receipts, open items, events."),
    M("claim_run", "run.claim", "RunClaimResult", "run_id owner owner_ttl_seconds",
      "Same-run recovery: a new epoch; receipts begun but not settled become unknown. A ``stale_owner`` run is\n"
      "claimed only by the host or a standby named in the root's settings (``standby_owners``)."),
    M("heartbeat_run", "run.heartbeat", "RunHeartbeatResult", "run_id epoch",
      "The owner's beat, fenced by its epoch; ``stop`` says what to stop for now (None: go on): ``cancelled``,\n"
      "``budget_exhausted``, ``deadline`` or ``superseded`` (a newer epoch owns the run; nothing recorded)."),
    M("request_approval", "approval.request", "ApprovalRequestResult", "action reason args_digest run_id",
      "Asks the host before one action of the current task; the same request again returns the record it made,\n"
      "with the host's answer once there is one. Grants nothing by itself (writes still need the lease)."),
    M("answer_approval", "approval.answer", "ApprovalResult", "approval_id decision note edited_args",
      "Host: ``approve``, ``reject`` or ``edit`` (``edited_args``: what is allowed instead) a pending approval; final."),
    M("get_approval", "approval.get", "ApprovalResult", "approval_id",
      "One approval with its answer (``pending``, ``approved``, ``rejected``, ``edited``)."),
    M("list_approvals", "approval.list", "ApprovalListResult", "task_id all_tasks status",
      "The approvals of the current task (or ``task_id``, or every task), newest first; ``status`` filters."),
    M("read_events", "events.read", "EventsReadResult", "after limit kinds task_id run_id wait_ms",
      "The root's events after the id ``after``, oldest first (``kinds``: names, or prefixes ending in ``.``);\n"
      "``wait_ms`` (at most 25000) waits for the next one; ``last_id`` is the newest id."),
    M("continue_run", "run.continue", "RunContinueResult", "parent_run_id owner budget tools sources send scope reason",
      "A new run continuing ``parent_run_id``: permissions narrowed or kept, an explicit budget, the parent's unknowns as open items.\n"
      "From the agent side it is ``requested`` until the host grants it."),
    M("start_child_run", "run.child", "RunResult", "run_id epoch owner budget tools sources send scope owner_ttl_seconds reason",
      "A child of the running run ``run_id`` (fenced by its ``epoch``): a slice of its budget (a limit for every dimension\n"
      "the parent limits, at most what it has left, reserved while the child is open) and its grant or less; runs at once."),
    M("grant_run", "run.grant", "RunResult", "run_id reason tools sources send scope budget deadline",
      "Host: grants a requested run as asked or narrowed (each omitted: as asked; never wider than the request)."),
    M("refuse_run", "run.refuse", "RunResult", "run_id reason",
      "Host: refuses a requested run; it ends as ``refused`` and begins no effect."),
    M("list_runs", "run.list", "RunListResult", "task_id all_tasks",
      "A task's runs with budget, open items and newest checkpoint, and the task's total spend."),
    M("checkpoint_run", "run.checkpoint", "RunCheckpointResult", "run_id epoch settled open note failed next_step",
      "A run's own working summary (what is settled, what is open, the methods that failed, the next step), fenced by its epoch."),
    M("park_run", "run.park", "RunResult", "run_id epoch waiting_for for_user wake_at",
      "Parks a running run with what it waits for; ``for_user``: only the host wakes it, with the answer.\n"
      "``wake_at`` (ISO time): a running longrun process wakes it then, once (also after a restart)."),
    M("wake_run", "run.wake", "RunResult", "run_id epoch reason answer",
      "Wakes a parked run; identity, receipts and budget are kept. The host may omit the epoch and give the\n"
      "user's ``answer`` (``{\"text\": …, \"data\": {…}}``), delivered to the run."),
    M("yield_run", "run.yield", "RunResult", "run_id epoch reason request_id adjustment_id",
      "Records that a request stopped so the next adopts an adjustment; the run keeps running."),
    M("cancel_run", "run.cancel", "RunResult", "run_id reason epoch",
      "The user stops the run; the host may omit the epoch."),
    M("finish_run", "run.finish", "RunFinishResult", "run_id epoch outcome gaps status",
      "Ends a run with its outcome and the gaps still open; each gap gets an id (the open gap of the same text is that one)."),
    # -- receipt -----------------------------------------------------------------------------------
    M("begin_receipt", "receipt.begin", "ReceiptBeginResult", "run_id epoch tool idempotency_key args=UNSET args_digest source send_to kind sent",
      "Records an effect before it runs; a key that completed returns its result with ``replayed: True``.\n"
      "``kind``: ``tool_call`` (default, counts a tool call), ``model_request`` (counts a request) or ``child_run`` (``tool``: a child run id from ``start_child_run``).\n"
      "Give ``args`` (hashed by the server; None is sent as JSON null) or ``args_digest``. See also ``effect``.\n"
      "``sent`` (model requests): sha256 hex digests of what was sent, ``{digest, question, constraints}``; ``get_run`` shows the chain."),
    M("settle_receipt", "receipt.settle", "ReceiptResult", "run_id epoch receipt_id outcome result_ref error evidence",
      "Settles an effect: completed (``result_ref``) or failed (``error``); an unknown one only with ``evidence``."),
    M("list_receipts", "receipt.list", "ReceiptListResult", "run_id status",
      "A run's receipts, optionally by status."),
    # -- budget ------------------------------------------------------------------------------------
    M("charge", "budget.charge", "ChargeResult", "run_id epoch requests input_tokens output_tokens tool_calls cost unknown note",
      "Records spending (always, also past a limit); ``unknown`` counts it as unknown, never zero."),
    M("reconcile_charge", "budget.reconcile", "BudgetResult", "run_id epoch charge_id evidence requests input_tokens output_tokens tool_calls cost",
      "Records what an unknown charge really cost, with evidence."),
    M("budget_status", "budget.status", "BudgetResult", "run_id",
      "A run's limits, spend, remaining, and whether new effects are allowed."),
)

DELIVERABLE_METHODS: Tuple[M, ...] = (
    # -- adjust ------------------------------------------------------------------------------------
    M("receive_adjustment", "adjust.receive", "AdjustmentResult", "text run_id",
      "Host: stores the user's adjustment verbatim."),
    M("handoff_adjustment", "adjust.handoff", "AdjustmentResult", "adjustment_id run_id epoch request_id",
      "Records the request (a receipt of the run, begun after the adjustment) that carried it."),
    M("satisfy_adjustment", "adjust.satisfy", "AdjustmentResult", "adjustment_id artifact version",
      "Records the artifact version that addresses it."),
    M("list_adjustments", "adjust.list", "AdjustmentListResult", "task_id",
      "A task's adjustments (the current task's by default), verbatim, with their history."),
    # -- artifact ----------------------------------------------------------------------------------
    M("put_artifact", "artifact.put", "ArtifactResult", "name kind content supersedes run_id epoch note attachments gaps closes",
      "Saves a deliverable version (draft, increment or full); allowed even past the budget.\n"
      "``gaps``: what it does not yet cover (opened with it); ``closes``: gap ids it covers (closed by it)."),
    M("get_artifact", "artifact.get", "ArtifactGetResult", "name version attachment",
      "One version with its content (newest by default), or one attachment's content."),
    M("list_artifacts", "artifact.list", "ArtifactListResult", "name task_id",
      "Versions of a task's artifacts (the current task's by default)."),
    M("list_gaps", "gap.list", "GapListResult", "task_id status",
      "A task's gaps (the current task's by default), oldest first, with who opened and what closed each."),
    M("close_gap", "gap.close", "GapResult", "gap_id note",
      "Host: closes a gap without an artifact that covers it (the user decides it does not matter), with a note."),
    M("mark_artifact", "artifact.mark", "ArtifactResult", "name version mark ok detail",
      "Marks a version preview, saved, exported or opened (``ok=False`` for a failure)."),
    # -- context -----------------------------------------------------------------------------------
    M("put_context", "context.put", "ContextPutResult", "label content source run_id epoch",
      "Stores a large result under raw_data/; returns its ``ref``, size and sha256."),
    M("read_context", "context.read", "ContextReadResult", "ref run_id offset length",
      "An exact byte range of a stored result, and the coverage read so far."),
    M("share_context", "context.share", "ContextShareResult", "ref task_id",
      "Lets another task read one of the current task's refs."),
)

