/**
 * The status page's script, run in the browser: login with a one-time code, the live stream, the
 * pickers, the lease panel, the host's actions and memory search; client_views.ts draws the rest.
 * Served as `(pageScript)((pageViews)())` from the functions' own text, so it is type-checked with
 * the rest of the sources and needs no build step: each function must stay self-contained (only
 * browser globals and its own inner functions; type imports are erased).
 *
 * Everything it shows comes from the server as data and is put on the page as text (never as
 * HTML): task descriptions, tool names and adjustments are the agent's or the user's words.
 */
import type { PageViews } from "./client_views.ts";
import type { Snapshot } from "./snapshot.ts";

export function pageScript(views: PageViews): void {
  type Snap = Snapshot;
  type Run = Snap["runs"][number];
  type Approval = Snap["approvals"][number];
  const { h, fill, badge, clock, ago, when } = views;

  const KEY_STORE = "longrun.page.key";
  const $ = (id: string) => document.getElementById(id)!;
  const params = new URLSearchParams(location.search);
  let selRoot = params.get("root") ?? "";
  let selTask = params.get("task") ?? "";
  let snap: Snap | null = null;
  const shown: Record<string, string> = {};
  let stream: AbortController | null = null;
  let retry: ReturnType<typeof setTimeout> | undefined;
  /** Why a login link in the address did not work (shown only if this browser has no session either). */
  let loginProblem: string | undefined;

  setInterval(() => {
    for (const el of Array.from(document.querySelectorAll<HTMLElement>("[data-ago]"))) el.textContent = `(${ago(el.dataset.ago!)})`;
  }, 1000);
  const key = () => localStorage.getItem(KEY_STORE);
  const headers = (): Record<string, string> => {
    const k = key();
    return k ? { "x-longrun-key": k } : {};
  };
  const query = (extra: Record<string, string> = {}) => {
    const q = new URLSearchParams();
    if (selRoot) q.set("root", selRoot);
    if (selTask) q.set("task", selTask);
    for (const [k, val] of Object.entries(extra)) q.set(k, val);
    return q.toString();
  };

  let noticeTimer: ReturnType<typeof setTimeout> | undefined;
  /** A message above the page: an error stays until the next one; a confirmation goes after a few seconds. */
  function notice(text: string | null, ok = false) {
    const el = $("notice");
    clearTimeout(noticeTimer);
    if (ok) noticeTimer = setTimeout(() => notice(null), 6000);
    el.hidden = text === null;
    el.className = ok ? "notice ok" : "notice";
    el.setAttribute("role", ok ? "status" : "alert");
    el.textContent = text ?? "";
  }
  function live(on: boolean, text: string) {
    const el = $("live");
    el.className = on ? "live on" : "live off";
    el.textContent = text;
  }
  /** Not logged in: only the notice shows (no empty dashboard, no pickers, no "Log out"). */
  function loggedOut(why = "This page is not logged in.") {
    document.body.classList.add("logged-out");
    live(false, "not logged in");
    $("who").textContent = "not logged in";
    notice(`${why} Run \`longrun open\` in the project for a new login link (each link works once), or mint one: POST /page/link with a token.`);
  }

  // --- live updates: server-sent events read with fetch (which, unlike EventSource, sends the key header)
  async function connect() {
    clearTimeout(retry);
    stream?.abort();
    const ctrl = new AbortController();
    stream = ctrl;
    const again = (ms: number) => {
      if (stream === ctrl) retry = setTimeout(connect, ms);
    };
    try {
      const res = await fetch(`/page/events?${query()}`, { headers: headers(), signal: ctrl.signal, cache: "no-store" });
      if (res.status === 401) return loggedOut(loginProblem);
      if (!res.ok || !res.body) {
        const p = (await res.json().catch(() => null)) as { detail?: string } | null;
        live(false, "not live");
        notice(p?.detail ?? `The server answered ${res.status}`);
        return again(3000);
      }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let at: number;
        while ((at = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, at);
          buf = buf.slice(at + 2);
          let event = "message";
          let data = "";
          for (const line of frame.split("\n")) {
            if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (event === "state") {
            render(JSON.parse(data) as Snap);
            live(true, `live · changed ${clock(new Date().toISOString())}`);
          } else if (event === "problem") {
            notice(`Reading the state failed: ${(JSON.parse(data) as { message: string }).message}`);
          }
        }
      }
      if (stream === ctrl) live(false, "reconnecting…");
      again(300);
    } catch {
      if (stream !== ctrl) return;
      live(false, "reconnecting…");
      again(1000);
    }
  }

  function select(root: string, task: string) {
    selRoot = root;
    selTask = task;
    history.replaceState(null, "", `/${query() ? `?${query()}` : ""}`);
    for (const k of Object.keys(shown)) delete shown[k];
    fill($("search-view"));
    live(false, "loading…");
    void connect();
  }

  // --- rendering: a section is drawn again only when its part of the snapshot changed
  function section(name: string, data: unknown, draw: () => void) {
    const text = JSON.stringify(data);
    if (shown[name] === text) return;
    shown[name] = text;
    draw();
  }

  function render(s: Snap) {
    snap = s;
    const who = $("who");
    who.textContent = s.side === "host" ? "host's view: can grant" : "agent's view: look only";
    who.className = s.side === "host" ? "who host" : "who";
    section("pickers", [s.roots, s.root, s.tasks.map((t) => [t.task_id, t.status, t.current, t.description]), s.tasks_total, s.task?.task_id], () => drawPickers(s));
    section("lease", [s.lease, s.task?.status, s.task?.task_id, s.current, asked(s), s.side], () => drawLease(s));
    section("task", [s.task, s.current, s.pending_checkpoint, s.problems], () => fill($("task-view"), ...views.task(s)));
    section("runs", [s.runs, s.runs_total, s.side, s.task?.task_id], () => fill($("runs-view"), ...views.runs(s, s.side === "host" ? cancelButton : undefined)));
    section("approvals", [s.approvals, s.side, s.task?.task_id], () => fill($("approvals-view"), ...views.approvals(s, s.side === "host" ? approvalButtons : undefined)));
    section("turns", s.timeline, () => fill($("turns-view"), ...views.turns(s)));
    section("artifacts", [s.artifacts, s.artifacts_total], () => fill($("artifacts-view"), ...views.artifacts(s)));
    section("adjustments", [s.adjustments, s.adjustments_total], () => fill($("adjustments-view"), ...views.adjustments(s)));
  }

  function drawPickers(s: Snap) {
    const root = $("pick-root") as HTMLSelectElement;
    root.replaceChildren(...s.roots.map((r) => h("option", { value: r, selected: r === s.root }, r)));
    const task = $("pick-task") as HTMLSelectElement;
    const label = (t: Snap["tasks"][number]) => {
      const d = t.description.replace(/\s+/g, " ");
      return `${t.current ? "● " : ""}${t.status} · ${d.length > 60 ? `${d.slice(0, 59)}…` : d}`;
    };
    task.replaceChildren(...(s.tasks.length ? s.tasks.map((t) => h("option", { value: t.task_id, selected: t.task_id === s.task?.task_id }, label(t))) : [h("option", { value: "" }, "no task yet")]));
    if (s.tasks_total > s.tasks.length) task.append(h("option", { disabled: true }, `${s.tasks_total - s.tasks.length} older tasks not listed`));
    task.disabled = s.tasks.length === 0;
  }

  /** The agent's latest request for writes in this turn, if no grant came after it. */
  function asked(s: Snap) {
    const log = s.task?.lease_log ?? [];
    const last = log[log.length - 1];
    return last && last.event === "requested" && last.turn === s.task?.turn_index ? last : null;
  }

  const WHY: Record<string, string> = {
    read_only: "No write lease in this turn.",
    stale_lease: "The lease was for an earlier turn; it ended when this turn began.",
    expired: "The lease's time to live ran out.",
    uses_exhausted: "The lease's writes are all used.",
    not_in_progress: "The task is not in progress, so nothing may be written.",
  };

  function drawLease(s: Snap) {
    const box = $("lease");
    const view = $("lease-view");
    const t = s.task;
    const l = s.lease;
    if (!t || !l) {
      box.className = "lease none";
      fill(view, h("p", { class: "mode" }, "NO TASK"), h("p", { class: "lease-line" }, "Nothing to write to: no task in this root yet (an agent starts one with task.start)."));
    } else if (l.writable && l.lease) {
      const lease = l.lease;
      box.className = "lease rw";
      fill(
        view,
        h("p", { class: "mode" }, "WRITABLE"),
        h("p", { class: "lease-line" }, `The agent may write in turn ${l.turn}${lease.scope ? ", inside the scope below" : ""}.`),
        h(
          "dl",
          { class: "facts" },
          h("dt", null, "Granted by"), h("dd", null, lease.granted_by),
          h("dt", null, "For turn"), h("dd", null, String(lease.turn)),
          h("dt", null, "When"), h("dd", null, when(lease.granted_at)),
          h("dt", null, "Reason"), h("dd", null, lease.reason),
          h("dt", null, "Scope"), h("dd", null, lease.scope ? h("span", { class: "mono" }, lease.scope.join(", ")) : "anything (no scope)"),
          h("dt", null, "Ends"), h("dd", null, lease.expires_at ? h("span", null, "with the turn, or at ", when(lease.expires_at)) : "with the turn"),
          lease.max_uses !== null && h("dt", null, "Writes"), lease.max_uses !== null && h("dd", null, `${lease.uses} of ${lease.max_uses} used`),
        ),
      );
    } else {
      box.className = "lease ro";
      const req = asked(s);
      fill(
        view,
        h("p", { class: "mode" }, "READ-ONLY"),
        h("p", { class: "lease-line" }, `The agent may read, not write, in turn ${l.turn}.`),
        h("p", null, WHY[l.why ?? "read_only"] ?? `Refused: ${l.why}`, s.current ? "" : " (This is not the current task: the conversation's lease belongs to the current one.)"),
        req && h("p", { class: "asked" }, h("strong", null, "The agent asked for writes: "), `“${req.reason}”`, req.scope ? ` in ${req.scope.join(", ")}` : "", " ", when(req.at)),
      );
    }
    drawHostControls(s);
  }

  /** Host actions: built only for the host's view (the agent's page has no such controls at all). */
  function drawHostControls(s: Snap) {
    const slot = $("host-controls");
    if (s.side !== "host") {
      if (!slot.firstChild) slot.replaceChildren(h("p", { class: "host-box muted" }, "Look only: granting, revoking and cancelling are the host's, on a page opened with the host's link."));
      return;
    }
    if (!s.task || !s.current || s.task.status !== "in_progress") {
      slot.replaceChildren();
      return;
    }
    let form = document.getElementById("grant") as HTMLFormElement | null;
    if (!form) {
      const reason = h("input", { id: "grant-reason", name: "reason", type: "text", required: true, maxlength: 500, autocomplete: "off", placeholder: "why you allow it, in your words" }) as HTMLInputElement;
      const scope = h("input", { id: "grant-scope", name: "scope", type: "text", maxlength: 2000, autocomplete: "off", placeholder: "e.g. src/**, docs/*.md", "aria-describedby": "scope-help" }) as HTMLInputElement;
      form = h(
        "form",
        { id: "grant", class: "host-box", "aria-labelledby": "grant-h" },
        h("h3", { id: "grant-h" }, "Grant writes"),
        h("label", { for: "grant-reason" }, "Reason (recorded with the grant)"),
        h("p", { id: "grant-asked", class: "muted", hidden: true }),
        reason,
        h("label", { for: "grant-scope" }, "Scope (optional)"),
        scope,
        h("p", { id: "scope-help", class: "muted" }, "Comma-separated patterns; empty: anything. Ends with the turn."),
        h(
          "div",
          { class: "buttons" },
          h("button", { id: "grant-button", type: "submit" }, "Grant"),
          h("button", { id: "revoke", type: "button", class: "secondary", onclick: () => act({ action: "revoke" }, "Writes revoked: the turn ended") }, "Revoke now"),
        ),
        h("p", { id: "act-status", class: "act-status", role: "status" }),
      ) as HTMLFormElement;
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const list = scope.value.split(",").map((x) => x.trim()).filter(Boolean);
        void act({ action: "grant", reason: reason.value.trim(), ...(list.length ? { scope: list } : {}) }, "Writes granted for this turn").then((ok) => {
          if (ok) reason.value = scope.value = "";
        });
      });
      slot.replaceChildren(form);
    }
    if (form.dataset.task !== s.task.task_id) {
      form.dataset.task = s.task.task_id;
      $("act-status").textContent = "";
    }
    $("grant-button").textContent = `Grant writes for turn ${s.task.turn_index}`;
    ($("revoke") as HTMLButtonElement).hidden = !s.lease?.writable;
    // the agent's own words are shown beside the field, never as its placeholder (which looked filled in)
    const req = asked(s);
    const askedLine = $("grant-asked");
    askedLine.hidden = !req;
    if (req) {
      const use = h("button", { type: "button", class: "secondary link", onclick: () => (($("grant-reason") as HTMLInputElement).value = req.reason) }, "Use these words");
      askedLine.replaceChildren(`The agent asked: “${req.reason}” `, use);
    }
  }

  /** What an action did, next to the controls (the page-wide notice when they are gone). */
  function said(text: string, ok: boolean) {
    const line = document.getElementById("act-status");
    if (!line) return notice(text, ok);
    line.textContent = text;
    line.className = ok ? "act-status ok" : "act-status bad";
    line.setAttribute("role", ok ? "status" : "alert");
  }

  async function act(body: Record<string, unknown>, done: string): Promise<boolean> {
    const buttons = Array.from(document.querySelectorAll<HTMLButtonElement>("#host-controls button, .run-cancel, .run-decide, .approval-decide"));
    for (const b of buttons) b.disabled = true;
    try {
      const res = await fetch("/page/act", {
        method: "POST",
        headers: { ...headers(), "content-type": "application/json" },
        body: JSON.stringify({ ...body, ...(selRoot ? { root: selRoot } : {}) }),
      });
      const out = (await res.json().catch(() => null)) as { detail?: string } | null;
      if (!res.ok) {
        said(`Refused: ${out?.detail ?? `the server answered ${res.status}`}`, false);
        return false;
      }
      said(`${done} (${clock(new Date().toISOString())})`, true);
      return true;
    } catch (e) {
      said(`The server could not be reached: ${e}`, false);
      return false;
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  }

  /** A pending approval: approve it, or reject it with a note (the note is asked for: a rejection says why). */
  function approvalButtons(a: Approval): HTMLElement {
    const note = h("input", { type: "text", class: "approval-note", "aria-label": `Note for ${a.approval_id}`, maxlength: 2000, placeholder: "a note for the agent (a rejection needs one)" }) as HTMLInputElement;
    const approve = h("button", { type: "button", class: "approval-decide", "data-approval": a.approval_id }, `Approve ${a.approval_id}`) as HTMLButtonElement;
    const reject = h("button", { type: "button", class: "danger approval-decide", "data-approval": a.approval_id }, `Reject ${a.approval_id}`) as HTMLButtonElement;
    approve.addEventListener("click", () => void act({ action: "approve", approval_id: a.approval_id, ...(note.value.trim() ? { note: note.value.trim() } : {}) }, `${a.approval_id} approved`));
    reject.addEventListener("click", () => {
      if (!note.value.trim()) {
        note.focus();
        return said(`Say why ${a.approval_id} is rejected: the agent reads the note`, false);
      }
      void act({ action: "reject", approval_id: a.approval_id, note: note.value.trim() }, `${a.approval_id} rejected`);
    });
    return h("p", null, note, " ", approve, " ", reject);
  }

  /** A run parked for the user: the user's answer wakes it. */
  function answerBox(r: Run): HTMLElement {
    const text = h("input", { type: "text", class: "run-answer", "aria-label": `Answer for ${r.run_id}`, maxlength: 2000, placeholder: "your answer" }) as HTMLInputElement;
    const send = h("button", { type: "button", class: "run-decide", "data-run": r.run_id }, `Answer ${r.run_id}`) as HTMLButtonElement;
    send.addEventListener("click", () => {
      if (!text.value.trim()) {
        text.focus();
        return said(`Type the answer ${r.run_id} waits for`, false);
      }
      void act({ action: "answer_run", run_id: r.run_id, text: text.value.trim() }, `Run ${r.run_id} answered`);
    });
    return h("p", null, text, " ", send);
  }

  /** A requested run: grant it as asked, or refuse it; one parked for the user: answer it (or cancel); any other open run: cancel it. */
  function cancelButton(r: Run): HTMLElement {
    if (r.status === "parked" && r.parked_for_user) return h("div", null, answerBox(r), cancelOnly(r));
    if (r.status !== "requested") return cancelOnly(r);
    const grant = h("button", { type: "button", class: "run-decide", "data-run": r.run_id }, `Grant run ${r.run_id} as asked`) as HTMLButtonElement;
    const refuse = h("button", { type: "button", class: "danger run-decide", "data-run": r.run_id }, `Refuse run ${r.run_id}`) as HTMLButtonElement;
    grant.addEventListener("click", () => void act({ action: "grant_run", run_id: r.run_id, reason: "granted on the status page" }, `Run ${r.run_id} granted`));
    refuse.addEventListener("click", () => void act({ action: "refuse_run", run_id: r.run_id, reason: "refused on the status page" }, `Run ${r.run_id} refused`));
    return h("p", null, grant, " ", refuse);
  }

  function cancelOnly(r: Run): HTMLElement {
    const b = h("button", { type: "button", class: "danger run-cancel", "data-run": r.run_id }, `Cancel run ${r.run_id}…`) as HTMLButtonElement;
    let armed = false;
    b.addEventListener("click", () => {
      if (!armed) {
        armed = true;
        b.textContent = `Confirm: cancel ${r.run_id} (stops the whole run)`;
        setTimeout(() => {
          armed = false;
          b.textContent = `Cancel run ${r.run_id}…`;
        }, 6000);
        return;
      }
      void act({ action: "cancel_run", run_id: r.run_id }, `Run ${r.run_id} cancelled`);
    });
    return b;
  }

  // --- memory search
  $("search").addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = ($("q") as HTMLInputElement).value.trim();
    const view = $("search-view");
    if (!q) return;
    fill(view, views.empty("Searching…"));
    try {
      const res = await fetch(`/page/search?${query({ q })}`, { headers: headers(), cache: "no-store" });
      const out = (await res.json()) as { hits?: { id: string; type: string; title: string; snippet: string; created_at?: string }[]; detail?: string };
      if (!res.ok) return fill(view, h("p", { class: "notice" }, out.detail ?? `Search refused (${res.status})`));
      const hits = out.hits ?? [];
      fill(
        view,
        h("p", { class: "muted" }, `${hits.length} hit${hits.length === 1 ? "" : "s"} for “${q}”`),
        hits.length > 0 &&
          h("ul", { class: "plain" }, ...hits.map((x) => h("li", null, h("strong", null, x.title), " ", badge(x.type, ""), h("div", null, x.snippet), h("span", { class: "muted mono" }, x.id, " "), when(x.created_at)))),
      );
    } catch (err) {
      fill(view, h("p", { class: "notice" }, `Search failed: ${err}`));
    }
  });

  $("pick-root").addEventListener("change", (e) => select((e.target as HTMLSelectElement).value, ""));
  $("pick-task").addEventListener("change", (e) => select(selRoot || (snap?.root ?? ""), (e.target as HTMLSelectElement).value));

  // --- log out: the session ends on the server (cookie and key), the key leaves this origin's storage
  $("logout").addEventListener("click", async () => {
    clearTimeout(retry);
    const s = stream;
    stream = null;
    s?.abort();
    await fetch("/page/logout", { method: "POST", headers: { ...headers(), "content-type": "application/json" }, body: "{}" }).catch(() => null);
    localStorage.removeItem(KEY_STORE);
    loggedOut("You logged out.");
  });

  // --- login: a one-time code in the address becomes a session (cookie) and a key (this origin's storage)
  async function start() {
    const code = params.get("login");
    if (code !== null) {
      params.delete("login");
      const rest = params.toString();
      history.replaceState(null, "", `/${rest ? `?${rest}` : ""}`);
      const res = await fetch("/page/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
      const out = (await res.json().catch(() => null)) as { key?: string; detail?: string } | null;
      if (res.ok && out?.key) localStorage.setItem(KEY_STORE, out.key);
      else if (!key()) return loggedOut(out?.detail ?? "This login link did not work.");
      else loginProblem = out?.detail ?? "This login link did not work.";
    }
    void connect();
  }
  void start();
}
