/**
 * The HTTP server's metrics, kept in plain maps and rendered in the Prometheus text format at
 * `GET /metrics` (host token). Every label value comes from a bounded set the server defines
 * (route names, method names it knows, error kinds, gate reasons): nothing a caller sends becomes
 * a label, so the series cannot grow without bound.
 */

/** Latency buckets in seconds: a gate check takes well under a millisecond, a checkpoint an fsync or two. */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

class Histogram {
  /** Per bucket (not cumulative), the last one for observations above every bound. */
  readonly counts = new Float64Array(LATENCY_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

/** A counter family with two labels, as nested maps (no key strings built per observation). */
class Counter2<B extends string | number = string> {
  readonly #m = new Map<string, Map<B, number>>();
  inc(a: string, b: B): void {
    let inner = this.#m.get(a);
    if (!inner) this.#m.set(a, (inner = new Map()));
    inner.set(b, (inner.get(b) ?? 0) + 1);
  }
  *entries(): Generator<[string, B, number]> {
    for (const [a, inner] of this.#m) for (const [b, n] of inner) yield [a, b, n];
  }
}

class Histograms {
  readonly #m = new Map<string, Histogram>();
  observe(label: string, seconds: number): void {
    let h = this.#m.get(label);
    if (!h) this.#m.set(label, (h = new Histogram()));
    h.observe(seconds);
  }
  entries(): IterableIterator<[string, Histogram]> {
    return this.#m.entries();
  }
}

const escape = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const num = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : n < 0 ? "-Inf" : "NaN");

/** Methods whose job is a checkpoint (for `longrun_checkpoints_total`). */
export const CHECKPOINT_METHODS: ReadonlySet<string> = new Set(["task.checkpoint", "run.checkpoint"]);

export class Metrics {
  readonly #startedAt = Date.now() / 1000;
  readonly #http = new Counter2<number>(); // route, status
  readonly #httpLatency = new Histograms(); // route
  readonly #rpc = new Counter2(); // method, outcome
  readonly #rpcLatency = new Histograms(); // method
  /** Per gate and decision (http allowed, http refused, write allowed, write refused): counts by reason. */
  readonly #gate = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
  readonly #checkpoints = new Counter2(); // method, outcome
  #checkpointFailures = 0;
  #ready: number | null = null;

  /** One HTTP request: its route (a fixed name, "other" for anything unknown), status and duration. */
  http(route: string, status: number, seconds: number): void {
    this.#http.inc(route, status);
    this.#httpLatency.observe(route, seconds);
  }

  /** One JSON-RPC call (over /rpc, /v1/status or /mcp): its method, outcome ("ok" or the error kind) and duration. */
  rpc(method: string, outcome: string, seconds: number): void {
    this.#rpc.inc(method, outcome);
    this.#rpcLatency.observe(method, seconds);
    if (CHECKPOINT_METHODS.has(method)) this.#checkpoints.inc(method, outcome);
    if (outcome === "checkpoint_write_error") this.#checkpointFailures++;
  }

  /** A decision of a gate: `http` (Host, Origin, body size, token) or `write` (writes.require). */
  gate(gate: "http" | "write", decision: "allowed" | "refused", reason: string): void {
    const m = this.#gate[(gate === "http" ? 0 : 2) + (decision === "allowed" ? 0 : 1)]!;
    m.set(reason, (m.get(reason) ?? 0) + 1);
  }

  /** The last readiness answer (1 ready, 0 not). */
  ready(ok: boolean): void {
    this.#ready = ok ? 1 : 0;
  }

  /** The Prometheus text exposition (format 0.0.4). */
  render(gauges: { openRoots: number }): string {
    const out: string[] = [];
    const head = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    const histogram = (name: string, label: string, family: Histograms) => {
      for (const [value, h] of family.entries()) {
        const l = `${label}="${escape(value)}"`;
        let cumulative = 0;
        for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
          cumulative += h.counts[i]!;
          out.push(`${name}_bucket{${l},le="${LATENCY_BUCKETS[i]}"} ${cumulative}`);
        }
        out.push(`${name}_bucket{${l},le="+Inf"} ${h.count}`, `${name}_sum{${l}} ${num(h.sum)}`, `${name}_count{${l}} ${h.count}`);
      }
    };

    head("longrun_http_requests_total", "counter", "HTTP requests by route and status code.");
    for (const [route, status, n] of this.#http.entries()) out.push(`longrun_http_requests_total{route="${escape(route)}",status="${status}"} ${n}`);
    head("longrun_http_request_duration_seconds", "histogram", "Time from a request's arrival to its response, by route.");
    histogram("longrun_http_request_duration_seconds", "route", this.#httpLatency);

    head("longrun_rpc_requests_total", "counter", 'JSON-RPC calls by method and outcome ("ok" or the error kind).');
    for (const [method, outcome, n] of this.#rpc.entries()) out.push(`longrun_rpc_requests_total{method="${escape(method)}",outcome="${escape(outcome)}"} ${n}`);
    head("longrun_rpc_duration_seconds", "histogram", "JSON-RPC call duration by method (validation, root, lane wait and handler).");
    histogram("longrun_rpc_duration_seconds", "method", this.#rpcLatency);

    head("longrun_gate_decisions_total", "counter", "Gate decisions: http (Host, Origin, body size, token) and write (writes.require), allowed or refused, by reason.");
    const gates = [["http", "allowed"], ["http", "refused"], ["write", "allowed"], ["write", "refused"]] as const;
    gates.forEach(([gate, decision], i) => {
      for (const [reason, n] of this.#gate[i]!) out.push(`longrun_gate_decisions_total{gate="${gate}",decision="${decision}",reason="${escape(reason)}"} ${n}`);
    });

    head("longrun_checkpoints_total", "counter", 'Checkpoint calls (task.checkpoint, run.checkpoint) by outcome ("ok" or the error kind).');
    for (const [method, outcome, n] of this.#checkpoints.entries()) out.push(`longrun_checkpoints_total{method="${escape(method)}",outcome="${escape(outcome)}"} ${n}`);
    head("longrun_checkpoint_failures_total", "counter", "Checkpoints whose memory save failed (checkpoint_write_error, from any method); the checkpoint waits in its pending file.");
    out.push(`longrun_checkpoint_failures_total ${this.#checkpointFailures}`);

    head("longrun_open_roots", "gauge", "Roots open (or opening) in this process.");
    out.push(`longrun_open_roots ${gauges.openRoots}`);
    if (this.#ready !== null) {
      head("longrun_ready", "gauge", "The last /ready answer: 1 ready, 0 not.");
      out.push(`longrun_ready ${this.#ready}`);
    }
    head("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.");
    out.push(`process_start_time_seconds ${this.#startedAt}`);
    head("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    out.push(`process_resident_memory_bytes ${process.memoryUsage().rss}`);
    return out.join("\n") + "\n";
  }
}
