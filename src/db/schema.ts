/**
 * The schema of `memory.db`, created and versioned by the project: numbered migrations recorded
 * in `schema_migrations`, each applied once, in order, inside one write transaction (so two
 * processes opening a new root at once cannot both apply one).
 */
import type { Database } from "./database.ts";

/** The memory index's slice size, fixed per database when it is made (src/memory/slices.ts says why). */
export const DEFAULT_SLICE_SIZE = 50_000;
export const SLICE_SIZE_KEY = "memory_slice_size";

export interface Migration {
  version: number;
  name: string;
  sql: string[];
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "memories with a CJK-aware full-text index",
    sql: [
      `CREATE TABLE memories (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        type TEXT NOT NULL,
        title TEXT NOT NULL,
        content TEXT NOT NULL,
        keywords TEXT NOT NULL,
        task_id TEXT,
        dedupe_key TEXT UNIQUE,
        raw_ref TEXT,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE INDEX memories_by_task ON memories(task_id, seq)`,
      `CREATE VIRTUAL TABLE memories_fts USING fts5(
        title, body, keywords,
        content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
      )`,
    ],
  },
  {
    version: 2,
    name: "run ledger: runs, receipts, charges, adjustments, artifacts, contexts",
    sql: [
      `CREATE TABLE ledger_tasks (
        task_id TEXT PRIMARY KEY,
        question TEXT NOT NULL,
        constraints TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TABLE runs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        parent_seq INTEGER REFERENCES runs(seq),
        status TEXT NOT NULL CHECK (status IN ('running','parked','finished','cancelled','failed')),
        owner TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        authorization TEXT NOT NULL,
        budget_limits TEXT NOT NULL,
        parked_on TEXT,
        outcome TEXT,
        gaps TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        ended_at TEXT
      )`,
      `CREATE TABLE run_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_seq INTEGER NOT NULL REFERENCES runs(seq),
        epoch INTEGER NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT NOT NULL,
        at TEXT NOT NULL
      )`,
      `CREATE INDEX run_events_by_run ON run_events(run_seq, seq)`,
      `CREATE TABLE receipts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_seq INTEGER NOT NULL REFERENCES runs(seq),
        idempotency_key TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        tool TEXT NOT NULL,
        args_digest TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('begun','completed','failed','unknown')),
        epoch INTEGER NOT NULL,
        result_ref TEXT,
        error TEXT,
        evidence TEXT,
        begun_at TEXT NOT NULL,
        settled_at TEXT,
        unknown_at TEXT,
        CHECK (status != 'completed' OR result_ref IS NOT NULL),
        UNIQUE (run_seq, idempotency_key, attempt)
      )`,
      `CREATE TABLE open_items (
        run_seq INTEGER NOT NULL REFERENCES runs(seq),
        receipt_seq INTEGER NOT NULL REFERENCES receipts(seq),
        carried_at TEXT NOT NULL,
        PRIMARY KEY (run_seq, receipt_seq)
      )`,
      `CREATE TABLE charges (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_seq INTEGER NOT NULL REFERENCES runs(seq),
        epoch INTEGER NOT NULL,
        amounts TEXT NOT NULL,
        unknown INTEGER NOT NULL,
        note TEXT NOT NULL,
        receipt_seq INTEGER,
        at TEXT NOT NULL
      )`,
      `CREATE INDEX charges_by_run ON charges(run_seq)`,
      `CREATE TABLE adjustments (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        run_seq INTEGER REFERENCES runs(seq),
        text TEXT NOT NULL,
        received_at TEXT NOT NULL,
        handed_request_id TEXT,
        handed_run_seq INTEGER,
        handed_at TEXT,
        satisfied_artifact TEXT,
        satisfied_version INTEGER,
        satisfied_at TEXT
      )`,
      `CREATE TRIGGER adjustments_text_is_verbatim BEFORE UPDATE OF text ON adjustments
        BEGIN SELECT RAISE(ABORT, 'an adjustment''s text is kept verbatim and never rewritten'); END`,
      `CREATE TABLE artifacts (
        task_id TEXT NOT NULL,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('draft','increment','full')),
        supersedes TEXT NOT NULL,
        run_seq INTEGER,
        ref TEXT NOT NULL,
        size INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        note TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (task_id, name, version)
      )`,
      `CREATE TABLE artifact_attachments (
        task_id TEXT NOT NULL,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        attachment TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok','failed')),
        ref TEXT,
        size INTEGER,
        sha256 TEXT,
        error TEXT,
        PRIMARY KEY (task_id, name, version, attachment)
      )`,
      `CREATE TABLE artifact_marks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        mark TEXT NOT NULL CHECK (mark IN ('preview','saved','exported','opened')),
        ok INTEGER NOT NULL,
        detail TEXT NOT NULL,
        at TEXT NOT NULL
      )`,
      `CREATE TABLE contexts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_seq INTEGER REFERENCES runs(seq),
        task_id TEXT NOT NULL,
        label TEXT NOT NULL,
        source TEXT,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TABLE context_reads (
        context_seq INTEGER NOT NULL REFERENCES contexts(seq),
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        run_seq INTEGER,
        at TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 3, // STATE_IN_DB_VERSION in store/state_db.ts
    name: "task state in the database: tasks, the root's current task, quarantined states",
    sql: [
      `CREATE TABLE tasks (
        task_id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        version INTEGER NOT NULL,
        status TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      `CREATE TABLE root_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
      `CREATE TABLE tasks_quarantine (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        state TEXT NOT NULL,
        reason TEXT NOT NULL,
        at TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 4,
    name: "memory index with CJK bigrams, a one-character fallback and the type as a term",
    sql: [
      // filled from memories by rebuildMemoryIndex (long bodies live in raw_data/, out of SQL's reach)
      `CREATE VIRTUAL TABLE memory_index USING fts5(
        title, body, keywords, chars, kind,
        content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
      )`,
      `INSERT INTO root_meta(key, value) VALUES ('memory_index_from', '0')
        ON CONFLICT(key) DO UPDATE SET value = '0'`,
    ],
  },
  {
    version: 5,
    name: "memory index in slices of 50,000 (bm25's term counts bounded by a slice, not the whole memory)",
    sql: [
      // the slices are made as memories arrive (src/memory/slices.ts) and filled by rebuildMemoryIndex
      `DROP TABLE IF EXISTS memory_index`,
      `INSERT INTO root_meta(key, value) VALUES ('${SLICE_SIZE_KEY}', '${DEFAULT_SLICE_SIZE}') ON CONFLICT(key) DO NOTHING`,
      `INSERT INTO root_meta(key, value) VALUES ('memory_index_from', '0')
        ON CONFLICT(key) DO UPDATE SET value = '0'`,
    ],
  },
  {
    version: 6,
    name: "research-run rules: adjustment events, context shares, run checkpoints, reconciled charges",
    sql: [
      // every stage of an adjustment as an appended event (a second handoff never replaces the first)
      `CREATE TABLE adjustment_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        adjustment_seq INTEGER NOT NULL REFERENCES adjustments(seq),
        kind TEXT NOT NULL CHECK (kind IN ('received','handed','satisfied')),
        run_seq INTEGER,
        request_id TEXT,
        artifact TEXT,
        version INTEGER,
        at TEXT NOT NULL
      )`,
      `INSERT INTO adjustment_events(adjustment_seq, kind, run_seq, at) SELECT seq, 'received', run_seq, received_at FROM adjustments`,
      `INSERT INTO adjustment_events(adjustment_seq, kind, run_seq, request_id, at)
        SELECT seq, 'handed', handed_run_seq, handed_request_id, handed_at FROM adjustments WHERE handed_at IS NOT NULL`,
      `INSERT INTO adjustment_events(adjustment_seq, kind, artifact, version, at)
        SELECT seq, 'satisfied', satisfied_artifact, satisfied_version, satisfied_at FROM adjustments WHERE satisfied_at IS NOT NULL`,
      // a context ref belongs to its task; another task reads it only through a share
      `CREATE TABLE context_shares (
        context_seq INTEGER NOT NULL REFERENCES contexts(seq),
        task_id TEXT NOT NULL,
        shared_at TEXT NOT NULL,
        PRIMARY KEY (context_seq, task_id)
      )`,
      // a run's own working summary: what is settled, what is open
      `CREATE TABLE run_checkpoints (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_seq INTEGER NOT NULL REFERENCES runs(seq),
        epoch INTEGER NOT NULL,
        settled TEXT NOT NULL,
        open TEXT NOT NULL,
        note TEXT NOT NULL,
        at TEXT NOT NULL
      )`,
      // an unknown charge made known later, with evidence (the original row is kept as it was)
      `ALTER TABLE charges ADD COLUMN reconciled_amounts TEXT`,
      `ALTER TABLE charges ADD COLUMN reconciled_evidence TEXT`,
      `ALTER TABLE charges ADD COLUMN reconciled_at TEXT`,
      // which dimensions an unknown charge leaves unknown (NULL: every one it gives no amount for)
      `ALTER TABLE charges ADD COLUMN unknown_dims TEXT`,
      `CREATE INDEX runs_by_task ON runs(task_id, status)`,
      // what existed when an adjustment was received: only later requests and versions can answer it
      `ALTER TABLE adjustments ADD COLUMN receipts_before INTEGER`,
      `ALTER TABLE adjustments ADD COLUMN artifacts_before INTEGER`,
      // coverage per reader: the run, or the task outside runs
      `ALTER TABLE context_reads ADD COLUMN reader_task TEXT`,
      `UPDATE context_reads SET reader_task = (SELECT task_id FROM contexts WHERE contexts.seq = context_reads.context_seq)`,
    ],
  },
  {
    version: 7,
    name: "blobs in the database (roots on a libSQL server keep long bodies and context here, not on a runner's disk)",
    sql: [`CREATE TABLE blobs (ref TEXT PRIMARY KEY, bytes BLOB NOT NULL, created_ms INTEGER NOT NULL)`],
  },
  {
    version: 8,
    name: "run grants: a run the agent side asks for waits for the host's grant or refusal; parks for the user and the host's answer",
    sql: [
      // NULL: a run from before grants (granted when it started). 'requested' runs are stored as
      // status 'parked' (the status CHECK of version 2 cannot change in place; they are open runs
      // for every rule that counts them) and shown as status "requested"; a refused one is stored
      // 'cancelled' and shown as "refused" (src/ledger/run_record.ts, shownStatus)
      `ALTER TABLE runs ADD COLUMN grant_state TEXT CHECK (grant_state IN ('requested','granted','refused'))`,
      // what was asked, what was decided, by whom, when, why (JSON)
      `ALTER TABLE runs ADD COLUMN grant_record TEXT`,
      `ALTER TABLE runs ADD COLUMN parked_for_user INTEGER NOT NULL DEFAULT 0`,
      // the host's answer that woke the run (JSON: text, data, by, at)
      `ALTER TABLE runs ADD COLUMN answer TEXT`,
      // the user task's own terms, set by the host (JSON: constraints, desired_outcome, limits)
      `ALTER TABLE ledger_tasks ADD COLUMN terms TEXT`,
    ],
  },
  {
    version: 9,
    name: "idempotency keys: a write's first answer, kept per root for a window (src/store/idempotency.ts)",
    sql: [
      `CREATE TABLE idempotency (
        key TEXT PRIMARY KEY,
        method TEXT NOT NULL,
        params_sha256 TEXT NOT NULL,
        answer TEXT NOT NULL,
        at_ms INTEGER NOT NULL
      )`,
      `CREATE INDEX idempotency_at ON idempotency(at_ms)`,
    ],
  },
  {
    version: 10,
    name: "receipt kinds: a tool call, a model request or a child run, each counted where it belongs (core/ledger/receipts.ts)",
    sql: [`ALTER TABLE receipts ADD COLUMN kind TEXT NOT NULL DEFAULT 'tool_call' CHECK (kind IN ('tool_call', 'model_request', 'child_run'))`],
  },
  {
    version: 11,
    name: "blob references indexed: orphan collection asks per blob whether any row names it (src/store/blobs.ts)",
    sql: [
      // most memories keep their body inline: only the few with a blob are in the index
      `CREATE INDEX IF NOT EXISTS memories_by_raw_ref ON memories(raw_ref) WHERE raw_ref IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS artifacts_by_ref ON artifacts(ref)`,
      `CREATE INDEX IF NOT EXISTS artifact_attachments_by_ref ON artifact_attachments(ref) WHERE ref IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS contexts_by_path ON contexts(path)`,
    ],
  },
  {
    version: 12,
    name: "owner liveness and timed wakes: an owner's time to live and last beat, a parked run's wake time (src/ledger/liveness.ts, src/ledger/waker.ts)",
    sql: [
      // seconds the owner may go without a beat (NULL: never stale); its last beat (heartbeat, claim, start, grant)
      `ALTER TABLE runs ADD COLUMN owner_ttl_seconds INTEGER`,
      `ALTER TABLE runs ADD COLUMN beat_at TEXT`,
      // the beat a stale_owner event was recorded for (once per missed beat)
      `ALTER TABLE runs ADD COLUMN stale_noted_beat TEXT`,
      // a parked run's wake time; woken once, by a compare-and-set on this column
      `ALTER TABLE runs ADD COLUMN wake_at TEXT`,
      // when a running process acted on the run's time budget (deadline, wall_seconds): once
      `ALTER TABLE runs ADD COLUMN time_acted_at TEXT`,
      `CREATE INDEX IF NOT EXISTS runs_by_wake ON runs(wake_at) WHERE wake_at IS NOT NULL`,
    ],
  },
  {
    version: 13,
    name: "forgetting and versions: a forgotten memory's tombstone, a memory's newer version (src/memory/forget.ts)",
    sql: [
      // the row in memories stays (its number and dedupe key, so a late write of it inserts nothing), emptied
      `CREATE TABLE memory_tombstones (
        seq INTEGER PRIMARY KEY,
        forgotten_at TEXT NOT NULL,
        by TEXT NOT NULL,
        reason TEXT
      )`,
      // memory.update: the record a version replaces, and the one that replaced it (memory numbers)
      `ALTER TABLE memories ADD COLUMN supersedes INTEGER`,
      `ALTER TABLE memories ADD COLUMN superseded_by INTEGER`,
    ],
  },
  {
    version: 14,
    name: "the root's event log: one ordered, durable list of what happened to its tasks and runs, written by triggers in the same transaction as the change (src/root/events.ts)",
    sql: [
      `CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        task_id TEXT,
        run_seq INTEGER,
        epoch INTEGER,
        detail TEXT NOT NULL,
        at TEXT NOT NULL
      )`,
      // the filters of events.read, each an index range (never a scan of the whole log)
      `CREATE INDEX events_by_kind ON events(kind, seq)`,
      `CREATE INDEX events_by_task ON events(task_id, seq) WHERE task_id IS NOT NULL`,
      `CREATE INDEX events_by_run ON events(run_seq, seq) WHERE run_seq IS NOT NULL`,
      // every run event (granted, claimed, parked, woken, stale_owner, deadline, budget_exhausted, …) as run.<kind>
      `CREATE TRIGGER events_of_runs AFTER INSERT ON run_events BEGIN
        INSERT INTO events(kind, task_id, run_seq, epoch, detail, at)
        SELECT 'run.' || new.kind, r.task_id, new.run_seq, new.epoch, new.detail, new.at FROM runs r WHERE r.seq = new.run_seq;
      END`,
      // (a state that is not JSON, a damaged row, records no detail and never fails its write)
      // a task row is new (task.start, task.fork, a recovery that found no row)
      `CREATE TRIGGER events_of_new_tasks AFTER INSERT ON tasks BEGIN
        INSERT INTO events(kind, task_id, detail, at)
        VALUES ('task.created', new.task_id, json_object('status', new.status, 'reason', CASE WHEN json_valid(new.state) THEN json_extract(new.state, '$.history[#-1].reason') END), new.updated_at);
      END`,
      `CREATE TRIGGER events_of_task_status AFTER UPDATE OF status ON tasks WHEN old.status IS NOT new.status BEGIN
        INSERT INTO events(kind, task_id, detail, at)
        VALUES ('task.status', new.task_id, json_object('from', old.status, 'to', new.status, 'reason', CASE WHEN json_valid(new.state) THEN json_extract(new.state, '$.history[#-1].reason') END), new.updated_at);
      END`,
      // a newer checkpoint (a recovery to an older one is a task.status or task.created event, not a save)
      `CREATE TRIGGER events_of_checkpoints AFTER UPDATE OF state ON tasks
        WHEN json_valid(new.state) AND json_valid(old.state) AND json_extract(new.state, '$.last_checkpoint.at') IS NOT NULL
          AND (json_extract(old.state, '$.last_checkpoint.at') IS NULL OR json_extract(new.state, '$.last_checkpoint.at') > json_extract(old.state, '$.last_checkpoint.at'))
      BEGIN
        INSERT INTO events(kind, task_id, detail, at)
        VALUES ('task.checkpoint', new.task_id, json_object('checkpoint_id', json_extract(new.state, '$.last_checkpoint.checkpoint_id'),
          'memory_id', json_extract(new.state, '$.last_checkpoint.memory_id'), 'kind', json_extract(new.state, '$.last_checkpoint.kind')), new.updated_at);
      END`,
      // the lease log's newest entry changed: lease.granted, lease.revoked, lease.requested
      `CREATE TRIGGER events_of_leases AFTER UPDATE OF state ON tasks
        WHEN json_valid(new.state) AND json_valid(old.state) AND json_extract(new.state, '$.lease_log[#-1]') IS NOT json_extract(old.state, '$.lease_log[#-1]')
      BEGIN
        INSERT INTO events(kind, task_id, detail, at)
        VALUES ('lease.' || COALESCE(json_extract(new.state, '$.lease_log[#-1].event'), 'changed'), new.task_id, COALESCE(json_extract(new.state, '$.lease_log[#-1]'), '{}'), new.updated_at);
      END`,
    ],
  },
  {
    version: 15,
    name: "approvals as objects: the agent's request before one action and the host's answer (src/ledger/approvals.ts), each an event; a forgotten memory an event too",
    sql: [
      `CREATE TABLE approvals (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        run_seq INTEGER,
        action TEXT NOT NULL,
        args_digest TEXT,
        reason TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected','edited')),
        requested_by TEXT NOT NULL,
        requested_at TEXT NOT NULL,
        answered_by TEXT,
        answered_at TEXT,
        note TEXT,
        edited_args TEXT
      )`,
      `CREATE INDEX approvals_by_task ON approvals(task_id, status, seq)`,
      `CREATE TRIGGER events_of_approval_requests AFTER INSERT ON approvals BEGIN
        INSERT INTO events(kind, task_id, run_seq, detail, at)
        VALUES ('approval.requested', new.task_id, new.run_seq,
          json_object('approval_id', printf('A_%04d', new.seq), 'action', new.action, 'args_digest', new.args_digest, 'reason', new.reason, 'by', new.requested_by), new.requested_at);
      END`,
      // a memory forgotten (memory.forget, or a retention rule): who and why, never its text
      `CREATE TRIGGER events_of_forgetting AFTER INSERT ON memory_tombstones BEGIN
        INSERT INTO events(kind, detail, at)
        VALUES ('memory.forgotten', json_object('memory_id', printf('S_%04d', new.seq), 'by', new.by, 'reason', new.reason), new.forgotten_at);
      END`,
      `CREATE TRIGGER events_of_approval_answers AFTER UPDATE OF status ON approvals WHEN old.status = 'pending' AND new.status IS NOT 'pending' BEGIN
        INSERT INTO events(kind, task_id, run_seq, detail, at)
        VALUES ('approval.answered', new.task_id, new.run_seq,
          json_object('approval_id', printf('A_%04d', new.seq), 'action', new.action, 'status', new.status, 'note', new.note, 'by', new.answered_by), new.answered_at);
      END`,
    ],
  },
  {
    version: 16,
    name: "child runs: a run started by a running run (src/ledger/children.ts), with a slice of its budget and a subset of its grant",
    sql: [
      `ALTER TABLE runs ADD COLUMN child_of INTEGER REFERENCES runs(seq)`,
      `CREATE INDEX runs_by_child_of ON runs(child_of, seq)`,
    ],
  },
  {
    version: 17,
    name: "deleted tasks: what stays of a task the host deleted (src/root/task_delete.ts), and its event",
    sql: [
      `CREATE TABLE task_tombstones (
        task_id TEXT PRIMARY KEY,
        deleted_at TEXT NOT NULL,
        by TEXT NOT NULL,
        reason TEXT
      )`,
      `CREATE TRIGGER events_of_task_deletes AFTER INSERT ON task_tombstones BEGIN
        INSERT INTO events(kind, task_id, detail, at)
        VALUES ('task.deleted', new.task_id, json_object('by', new.by, 'reason', new.reason), new.deleted_at);
      END`,
    ],
  },
  {
    version: 18,
    name: "a run's working summary in full: the methods that failed and the next step, beside what is settled and open",
    sql: [
      `ALTER TABLE run_checkpoints ADD COLUMN failed TEXT NOT NULL DEFAULT '[]'`,
      `ALTER TABLE run_checkpoints ADD COLUMN next_step TEXT NOT NULL DEFAULT ''`,
    ],
  },
  {
    version: 19,
    name: "kept answers name what they are about (src/store/idempotency.ts), so deleting a task drops its answers",
    sql: [`ALTER TABLE idempotency ADD COLUMN names TEXT`],
  },
  {
    version: 20,
    name: "gaps with identity: what a task's drafts do not yet cover, open → closed across runs and versions (src/ledger/gaps.ts)",
    sql: [
      `CREATE TABLE gaps (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        text TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
        opened_at TEXT NOT NULL,
        opened_run_seq INTEGER,
        opened_by TEXT NOT NULL,
        closed_at TEXT,
        closed_run_seq INTEGER,
        closed_by TEXT,
        closed_artifact TEXT,
        closed_version INTEGER,
        note TEXT
      )`,
      `CREATE INDEX gaps_by_task ON gaps(task_id, status, seq)`,
      `CREATE TRIGGER events_of_gaps_opened AFTER INSERT ON gaps BEGIN
        INSERT INTO events(kind, task_id, run_seq, detail, at)
        VALUES ('gap.opened', new.task_id, new.opened_run_seq, json_object('gap_id', printf('G_%04d', new.seq), 'text', new.text, 'by', new.opened_by), new.opened_at);
      END`,
      `CREATE TRIGGER events_of_gaps_closed AFTER UPDATE OF status ON gaps WHEN old.status = 'open' AND new.status = 'closed' BEGIN
        INSERT INTO events(kind, task_id, run_seq, detail, at)
        VALUES ('gap.closed', new.task_id, new.closed_run_seq,
          json_object('gap_id', printf('G_%04d', new.seq), 'by', new.closed_by, 'artifact', new.closed_artifact, 'version', new.closed_version, 'note', new.note), new.closed_at);
      END`,
    ],
  },
  {
    version: 21,
    name: "the request chain: a model request's digest of what was sent, its question and constraints among it (src/ledger/request_chain.ts)",
    sql: [`ALTER TABLE receipts ADD COLUMN sent TEXT`],
  },
];

/** Brings `db` to the newest schema version; a no-op when it is there already. */
export async function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): Promise<number> {
  await db.retryBusy(() =>
    db.execute(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL
      )`,
    )
  );
  let applied = 0;
  for (const m of migrations) {
    const done = await db.write(async (tx) => {
      const rs = await tx.execute({ sql: "SELECT 1 FROM schema_migrations WHERE version = ?", args: [m.version] });
      if (rs.rows.length) return false;
      for (const sql of m.sql) await tx.execute(sql);
      await tx.execute({
        sql: "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
        args: [m.version, m.name, new Date().toISOString()],
      });
      return true;
    });
    if (done) applied++;
  }
  return applied;
}

export async function schemaVersion(db: Database): Promise<number> {
  const rs = await db.execute("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations");
  return Number(rs.rows[0]?.v ?? 0);
}
