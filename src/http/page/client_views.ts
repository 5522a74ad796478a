/**
 * How the status page draws each part of a snapshot, in the browser: the task, runs with their
 * receipts and budgets, the agent's approval requests, recent turns and grants, artifacts and adjustments. One self-contained
 * function (browser globals only, type imports erased), served beside client.ts from its own text.
 *
 * Everything comes from the server as data and goes on the page as text nodes, never as HTML:
 * descriptions, tool names and adjustments are the agent's or the user's words.
 */
import type { Snapshot } from "./snapshot.ts";

export type PageViews = ReturnType<typeof pageViews>;

export function pageViews() {
  type Kid = Node | string | null | undefined | false;
  type Props = Record<string, string | number | boolean | null | undefined | EventListener>;
  type Snap = Snapshot;
  type Run = Snap["runs"][number];
  type Approval = Snap["approvals"][number];

  function h(tag: string, props?: Props | null, ...kids: Kid[]): HTMLElement {
    const el = document.createElement(tag);
    for (const [k, val] of Object.entries(props ?? {})) {
      if (val === null || val === undefined || val === false) continue;
      if (k === "class") el.className = String(val);
      else if (k.startsWith("on") && typeof val === "function") el.addEventListener(k.slice(2), val);
      else el.setAttribute(k, val === true ? "" : String(val));
    }
    for (const kid of kids) if (kid !== null && kid !== undefined && kid !== false) el.append(kid);
    return el;
  }
  const fill = (el: HTMLElement, ...kids: Kid[]) => {
    el.replaceChildren();
    for (const kid of kids) if (kid !== null && kid !== undefined && kid !== false) el.append(kid);
  };
  const badge = (text: string, cls: string) => h("span", { class: `badge ${cls}` }, text);
  const empty = (text: string) => h("p", { class: "empty" }, text);
  const num = (n: number) => (Number.isInteger(n) ? n.toLocaleString("en-US") : n.toLocaleString("en-US", { maximumFractionDigits: 4 }));

  function clock(iso: string): string {
    const d = new Date(iso);
    const sameDay = d.toDateString() === new Date().toDateString();
    const t = d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    return sameDay ? t : `${d.toISOString().slice(0, 10)} ${t}`;
  }
  function ago(iso: string): string {
    const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
    const a = Math.abs(s);
    const span = a < 5 ? "" : a < 60 ? `${a} s` : a < 3600 ? `${Math.floor(a / 60)} min` : a < 86400 ? `${Math.floor(a / 3600)} h` : `${Math.floor(a / 86400)} d`;
    return span === "" ? "just now" : s >= 0 ? `${span} ago` : `in ${span}`;
  }
  /** A time as the clock shows it, with how long ago (the page keeps that fresh: `data-ago`). */
  const when = (iso: string | null | undefined) =>
    iso ? h("time", { datetime: iso, title: iso }, `${clock(iso)} `, h("span", { class: "muted", "data-ago": iso }, `(${ago(iso)})`)) : null;

  function task(s: Snap): Kid[] {
    const t = s.task;
    const problems = s.problems.map((p) => h("p", { class: "notice" }, `${p.section}: ${p.kind}: ${p.message}`));
    if (!t) return [...problems, empty("No task in this root yet.")];
    const pending = s.pending_checkpoint as { path?: string; error?: string | null } | null;
    return [
      ...problems,
      h("div", { class: "card-head" }, badge(t.status.replace(/_/g, " "), `st-${t.status}`), s.current ? badge("current", "") : badge("not current", "warn"), h("span", { class: "mono muted" }, t.task_id)),
      h("p", { class: "desc" }, t.description),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Phase"), h("dd", null, t.phase || "—"),
        h("dt", null, "Next step"), h("dd", null, t.next_step || "—"),
        h("dt", null, "Turn"), h("dd", null, String(t.turn_index)),
        h("dt", null, "Updated"), h("dd", null, when(t.updated_at), ` · version ${t.version}`),
        h("dt", null, "Checkpoint"), h("dd", null, t.last_checkpoint ? h("span", null, `${t.last_checkpoint.kind ?? "checkpoint"} `, when(t.last_checkpoint.at)) : "none yet"),
      ),
      pending && h("p", { class: "notice" }, `A checkpoint is waiting to be saved (${pending.path ?? ""})${pending.error ? `: ${pending.error}` : ""}; task.resume replays it.`),
    ];
  }

  const DIMS: [string, string][] = [["requests", "Requests"], ["input_tokens", "Input tokens"], ["output_tokens", "Output tokens"], ["tool_calls", "Tool calls"], ["cost", "Cost"]];

  /** A bar's width is set through the style object: the content security policy refuses style attributes. */
  function bar(cls: string, pct: number): HTMLElement {
    const el = h("div", { class: cls });
    el.style.width = `${pct}%`;
    return el;
  }

  function budgetOf(r: Run): HTMLElement {
    const b = r.budget;
    const limits = b.limits as Record<string, unknown>;
    const spent = b.spent as Record<string, number>;
    const uncertain = new Set<string>(b.uncertain);
    const rows = DIMS.filter(([d]) => typeof limits[d] === "number" || (spent[d] ?? 0) > 0 || uncertain.has(d)).map(([d, label]) => {
      const limit = typeof limits[d] === "number" ? (limits[d] as number) : null;
      const used = spent[d] ?? 0;
      const unk = uncertain.has(d);
      const pct = limit ? Math.min(100, (used / limit) * 100) : 0;
      const unknownText = b.unknown_charges > 0 ? ` + ${b.unknown_charges} unknown charge${b.unknown_charges === 1 ? "" : "s"}` : " + unknown";
      const text = `${num(used)}${unk ? unknownText : ""}${limit !== null ? ` of ${num(limit)}` : " (no limit)"}`;
      const label_ = h("span", { class: "dim-label" }, label, unk ? " " : "", unk && badge("unknown", "k-unknown"));
      if (limit === null && !unk) return h("div", { class: "dim" }, label_, h("span", null, text));
      return h(
        "div",
        { class: "dim" },
        label_,
        h("div", { class: "track", "aria-hidden": "true" }, bar(`fill${limit !== null && used >= limit ? " full" : ""}`, pct), unk && bar("fill unk", Math.max(0, 100 - pct))),
        h("span", { class: "dim-text" }, text),
      );
    });
    return h(
      "div",
      { class: "budget" },
      h("h4", { class: "sub" }, "Budget"),
      ...(rows.length ? rows : [empty("No budget limits and nothing spent yet.")]),
      b.unknown_charges > 0 &&
        h("p", { class: "muted" }, `${b.unknown_charges} charge${b.unknown_charges === 1 ? "" : "s"} of unknown amount (${b.unknown_charge_ids.join(", ")}): counted as unknown, never as zero, until budget.reconcile records what ${b.unknown_charges === 1 ? "it" : "they"} cost.`),
      !b.effects_allowed && (r.status === "running" || r.status === "parked") && h("p", null, badge("new effects refused", "bad"), " ", b.policy),
    );
  }

  function receiptsOf(r: Run): HTMLElement {
    const g = r.receipts;
    if (!g) return empty("Receipts could not be read.");
    const group = (k: "completed" | "failed" | "unknown", title: string) =>
      h(
        "div",
        { class: `group k-${k}` },
        h("h4", null, badge(`${g[k].count}`, `k-${k}`), ` ${title}`),
        g[k].count === 0
          ? h("p", { class: "empty" }, "none")
          : h(
              "ul",
              null,
              ...g[k].items.map((x) => h("li", null, h("strong", null, x.tool), ` ${x.receipt_id} · `, k === "completed" ? `→ ${x.result_ref}` : k === "failed" ? (x.error ?? "failed") : "ran or not: reconcile before running again")),
              g[k].count > g[k].items.length && h("li", { class: "muted" }, `and ${g[k].count - g[k].items.length} more`),
            ),
      );
    return h(
      "div",
      null,
      h("h4", { class: "sub" }, "Receipts (tool effects)"),
      h("div", { class: "groups" }, group("completed", "completed"), group("failed", "failed"), group("unknown", "unknown")),
      g.begun.count > 0 && h("p", { class: "muted" }, `${g.begun.count} in flight (begun, not yet settled): `, g.begun.items.map((x) => `${x.tool} ${x.receipt_id}`).join(", ")),
    );
  }

  /** `cancel`: the host's cancel control for an open run (none on the agent's page). */
  function runs(s: Snap, cancel?: (r: Run) => HTMLElement): Kid[] {
    if (!s.runs.length) return [empty(s.task ? "No runs for this task." : "No task.")];
    return [
      ...s.runs.map((r) => {
        const open = r.status === "running" || r.status === "parked" || r.status === "requested";
        const g = r.grant;
        const asked = g && `tools ${g.request.authorization.tools.join(", ") || "none"} · sources ${g.request.authorization.sources.join(", ") || "none"} · send to ${g.request.authorization.send.join(", ") || "nowhere"}`;
        return h(
          "article",
          { class: "card", "aria-labelledby": `run-${r.run_id}` },
          h(
            "div",
            { class: "card-head" },
            h("h3", { id: `run-${r.run_id}`, class: "mono" }, r.run_id),
            badge(r.status, `st-${r.status}`),
            h("span", { class: "muted" }, `owner ${r.owner} · epoch ${r.epoch}${r.parent_run_id ? ` · continues ${r.parent_run_id}` : ""} · started `, when(r.created_at)),
          ),
          g && g.state === "requested" && h("p", null, badge("waiting for the host", "bad"), ` asked by ${g.requested_by}: ${asked}`),
          g && g.state !== "requested" && h("p", { class: "muted" }, `${g.state} by ${g.decided_by ?? "?"}`, g.standing ? ` (standing allowance ${g.standing})` : "", g.reason ? `: “${g.reason}”` : ""),
          r.stale_owner && h("p", null, badge("owner stale", "bad"), ` ${r.owner} has not beaten since `, when(r.owner_beat_at ?? r.created_at), ` (time to live ${r.owner_ttl_seconds} s); the host or a named standby may claim it`),
          r.parked_on && h("p", null, r.parked_for_user ? "Parked for the user, waiting for: " : "Parked, waiting for: ", r.parked_on),
          r.wake_at && h("p", { class: "muted" }, "Wakes at ", when(r.wake_at)),
          r.outcome && h("p", null, "Outcome: ", r.outcome),
          r.gaps.length > 0 && h("p", null, "Gaps left open: ", r.gaps.join("; ")),
          receiptsOf(r),
          budgetOf(r),
          open && cancel?.(r),
        );
      }),
      s.runs_total > s.runs.length && empty(`${s.runs_total - s.runs.length} older runs not shown.`),
    ];
  }


  function turns(s: Snap): Kid[] {
    if (!s.timeline.length) return [empty("Nothing yet.")];
    return [
      h(
        "ul",
        { class: "plain" },
        ...s.timeline.map((e) =>
          h(
            "li",
            null,
            badge(`turn ${e.turn}`, ""), " ", badge(e.event === "status" ? "status" : e.event, `e-${e.event}`), " ",
            e.by ? h("strong", null, e.by, " ") : "",
            e.event === "status" || e.event === "ended" ? e.text : `“${e.text}”`,
            e.scope ? h("span", { class: "mono" }, ` [${e.scope.join(", ")}]`) : "",
            " ", h("span", { class: "muted" }, when(e.at)),
          ),
        ),
      ),
    ];
  }

  function artifacts(s: Snap): Kid[] {
    if (!s.artifacts.length) return [empty("No artifacts yet.")];
    const names = [...new Set(s.artifacts.map((a) => a.name))];
    return [
      ...names.map((name) =>
        h(
          "div",
          { class: "card" },
          h("h3", { class: "mono" }, name),
          h(
            "ul",
            { class: "plain" },
            ...s.artifacts
              .filter((a) => a.name === name)
              .sort((a, b) => b.version - a.version)
              .map((a) =>
                h(
                  "li",
                  null,
                  h("strong", null, `v${a.version}`), " ", badge(a.kind, a.kind === "full" ? "ok" : ""), " ",
                  a.superseded_by !== null ? badge(`superseded by v${a.superseded_by}`, "") : "", " ",
                  ...a.marks.map((m) => [badge(`${m.mark}${m.ok ? " ✓" : " ✗ failed"}`, m.ok ? "ok" : "bad"), " "]).flat(),
                  a.marks.length === 0 ? h("span", { class: "muted" }, "not yet previewed, saved, exported or opened ") : "",
                  h("span", { class: "muted" }, `${num(a.size)} B · `, when(a.created_at)),
                  a.attachments.length > 0 &&
                    h("div", { class: "muted" }, `Attachments: `, a.attachments.map((x) => `${x.name}${x.status === "failed" ? ` (failed: ${x.error ?? "?"})` : ""}`).join(", ")),
                ),
              ),
          ),
        ),
      ),
      s.artifacts_total > s.artifacts.length && empty(`${s.artifacts_total - s.artifacts.length} older versions not shown.`),
    ];
  }

  function adjustments(s: Snap): Kid[] {
    if (!s.adjustments.length) return [empty("No adjustments from the user.")];
    const stage = (label: string, at: string | null | undefined, detail: string) =>
      h("span", { class: `stage ${at ? "done" : "todo"}` }, at ? `✓ ${label}${detail ? ` ${detail}` : ""} · ${clock(at)}` : `${label}: not yet`);
    return [
      ...s.adjustments.map((a) =>
        h(
          "div",
          { class: "card" },
          h("blockquote", null, a.text),
          h(
            "div",
            { class: "stages", "aria-label": "Stages" },
            stage("received", a.received_at, a.run_id ? `for ${a.run_id}` : ""),
            stage("handed", a.handed?.at, a.handed ? `in ${a.handed.request_id}` : ""),
            stage("satisfied", a.satisfied?.at, a.satisfied ? `by ${a.satisfied.artifact} v${a.satisfied.version}` : ""),
          ),
          h("p", { class: "muted mono" }, a.adjustment_id),
        ),
      ),
      s.adjustments_total > s.adjustments.length && empty(`${s.adjustments_total - s.adjustments.length} older adjustments not shown.`),
    ];
  }

  /** The task's approval requests and their answers; `answer`: the host's controls for a pending one (none on the agent's page). */
  function approvals(s: Snap, answer?: (a: Approval) => HTMLElement): Kid[] {
    if (!s.approvals.length) return [empty(s.task ? "The agent has asked for no approval in this task." : "No task.")];
    return s.approvals.map((a) =>
      h(
        "article",
        { class: "card", "aria-labelledby": `approval-${a.approval_id}` },
        h(
          "div",
          { class: "card-head" },
          h("h3", { id: `approval-${a.approval_id}`, class: "mono" }, a.approval_id),
          badge(a.status === "pending" ? "waiting for the host" : a.status, a.status === "pending" ? "bad" : `st-${a.status}`),
          h("span", { class: "muted" }, `asked by ${a.requested_by}${a.run_id ? ` in ${a.run_id}` : ""} · `, when(a.requested_at)),
        ),
        h("p", null, h("strong", null, a.action), a.args_digest ? h("span", { class: "mono muted" }, ` [${a.args_digest}]`) : "", ": “", a.reason, "”"),
        a.status !== "pending" && h("p", { class: "muted" }, `${a.status} by ${a.answered_by ?? "?"}`, a.note ? `: “${a.note}”` : "", a.edited_args ? ` · only with ${JSON.stringify(a.edited_args)}` : ""),
        a.status === "pending" && answer?.(a),
      )
    );
  }

  return { h, fill, badge, empty, clock, ago, when, task, runs, approvals, turns, artifacts, adjustments };
}
