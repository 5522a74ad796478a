/**
 * The command line: parses argv and hands off to one command. Commands are imported on demand,
 * so a per-event command (a hook's PreToolUse) never loads libSQL or starts the memory Worker.
 */
import { parseArgs } from "node:util";
import { VERSION } from "../version.ts";

export const HELP = `longrun ${VERSION} - a runtime contract for long-running AI agents

Usage:
  longrun demo                      the three rules in five steps, in a temporary root (no LLM, no key)
  longrun serve [--root DIR] [--max-roots N]
                                    JSON-RPC 2.0 over stdin/stdout, one message per line (you are the host);
                                    at most N roots open at once (default 64, env LONGRUN_MAX_ROOTS)
  longrun http [--root DIR] [--host 127.0.0.1] [--port N] [--allow-root DIR]... [--expose --allowed-host NAME...]
               [--max-roots N] [--log-format text|json] [--login-link] [--rotate-tokens]
                                    HTTP API: POST /rpc, GET /v1/status, MCP at /mcp, GET /metrics (host or
                                    metrics token), GET /health and GET /ready (no token); host and agent
                                    tokens kept in DIR/.longrun/http.json across restarts (--rotate-tokens: new
                                    ones), or LONGRUN_HOST_TOKEN/AGENT_TOKEN/METRICS_TOKEN or their _FILE (read
                                    again on SIGHUP or change); --login-link prints the status page's one-time
                                    link; every flag has a LONGRUN_* variable (docs/http.md: Configuration)
  longrun health [--url URL] [--ready] [--timeout S] [--root DIR]
                                    ask a running longrun http: GET /health (or /ready); exit 0 healthy, 1 not;
                                    URL from DIR/.longrun/http.json, else http://127.0.0.1:8080
  longrun open [--root DIR] [--url URL] [--no-browser]
                                    the status page for a person: a one-time login link from the root's running
                                    longrun http, or serve the root on 127.0.0.1 until Ctrl-C; opens a browser
  longrun mcp [--root DIR] [--tools default|research|all|NAME,...]
                                    MCP server over stdio: agent-side tools only; --tools picks them
                                    (default: the coding set; research adds long-run tools; all: every tool)
  longrun hook claude <Event> [--root DIR]
                                    Claude Code hook (UserPromptSubmit, PreToolUse, SessionStart, Stop, PreCompact)
  longrun hook install claude [--root DIR] [--without-os-sandbox]
                                    write the hooks, deny rules and sandbox into DIR/.claude/settings.local.json,
                                    add /approve as a command, and test each hook once; on Linux it refuses
                                    without bubblewrap and socat unless --without-os-sandbox (best effort)
  longrun hook uninstall claude [--root DIR]
                                    take out what install added (your task and memory stay)
  longrun hook gate [--root DIR] [--idle-exit SECONDS]
                                    the root's resident gate: answers PreToolUse over DIR/.longrun/gate.sock, so
                                    a hook need not decide in its own process (ends after SECONDS idle, default
                                    900); SessionStart starts it when .longrun/hooks.json has "resident_gate": true
  longrun sandbox --mode read|lease --root DIR -- PROGRAM [ARGS...]
                                    run one command inside bubblewrap (bwrap): read mode writes nowhere but a
                                    scratch TMPDIR, lease mode also in DIR; longrun's state, memory.db and
                                    Claude Code's login hidden, .git/config, hooks and .claude/ read-only, no
                                    network; exit 126 (command not run) when the boundary cannot be made
  longrun doctor [--root DIR] [--json]
                                    which protections the OS enforces now (Claude Code's sandbox) and which
                                    are best effort; whether the hooks' program answers and lasts (not in a
                                    venv, temp or build dir); token files 0600; the version; one line each;
                                    exit 0 when all are OS-enforced and every check passed, else 1
  longrun start "description" [--root DIR] [--json]
                                    begin a task as the person at this terminal (memory searched first;
                                    read-only, turn 1); refused while another task is open
  longrun list [--root DIR] [--json]
                                    the root's tasks, newest first (* the current one), and open research runs
  longrun grant "reason" [--scope GLOB,...] [--ttl 10m] [--uses N] [--root DIR] [--json]
                                    grant writes for the open task's current turn, host side (granted_by
                                    host:cli): it ends after --ttl (default 10m, at most 7d), after N writes,
                                    at the turn's end or a checkpoint, whichever comes first
  longrun revoke [--root DIR] [--json]
                                    end the write lease now
  longrun answer [RUN_ID] "text" [--data JSON] [--root DIR] [--json]
                                    answer a research run parked for the user (the only one, or RUN_ID):
                                    it wakes with the answer, which its owner reads in run.get
  longrun approvals [--root DIR] [--json]
                                    the agent's approval requests waiting for an answer (every task's)
  longrun approve A_ID ["note"] [--edit JSON] [--root DIR] [--json]
                                    approve one (with --edit: only with those arguments); final
  longrun reject A_ID "why" [--root DIR] [--json]
                                    refuse one, saying why; final
  longrun events [--after N] [--kinds run.,lease.requested] [--follow] [--root DIR] [--json]
                                    the root's event log, oldest first (--follow: wait for new ones)
  longrun status [--root DIR]       the task, its lease and any pending checkpoint (creates nothing)
  longrun resume [--root DIR]       start a new turn, read-only, replaying a pending checkpoint
  longrun checkpoint --summary S --next-step N [--phase P] [--root DIR]
  longrun finish [--summary S] [--root DIR]
                                    accept the task as completed (also one waiting for verification;
                                    a paused task: resume first)
  longrun recover [--force] [--root DIR]
                                    rebuild a lost or corrupt task state from the last checkpoint in memory;
                                    --force rebuilds it over a readable one
  longrun recover --accept-memory [--root DIR]
                                    memory.db is gone, empty, replaced or unreadable: take the one that is
                                    there now, or begin a new memory (the old file is kept aside)
  longrun --version | --help

DIR must be an existing absolute directory; it defaults to the working directory.
--store URL --project KEY [--state-dir DIR] (or LONGRUN_STORE, LONGRUN_PROJECT, LONGRUN_STATE_DIR;
token in LONGRUN_STORE_TOKEN) put the root on a libSQL server instead (serve, http, mcp, status, resume,
checkpoint, finish, recover, start, list, grant, revoke, answer, events, approvals, approve, reject; hooks read the variables only); see
docs/libsql-server.md.
Everything of a local project lives under DIR: memory.db (task state, memory, run ledger),
.longrun/ (pending checkpoint, settings, tokens), raw_data/ (long bodies). Logs go to stderr; in
serve and mcp modes stdout carries protocol only.
`;

type Values = Record<string, string | boolean | string[] | undefined>;

function parse(rest: string[], positionals: boolean): { values: Values; positionals: string[] } {
  return parseArgs({
    args: rest,
    options: {
      root: { type: "string" },
      summary: { type: "string" },
      "next-step": { type: "string" },
      phase: { type: "string" },
      keep: { type: "boolean" },
      host: { type: "string" },
      port: { type: "string" },
      "allow-root": { type: "string", multiple: true },
      expose: { type: "boolean" },
      "allowed-host": { type: "string", multiple: true },
      force: { type: "boolean" },
      "accept-memory": { type: "boolean" },
      "max-roots": { type: "string" },
      "log-format": { type: "string" },
      "login-link": { type: "boolean" },
      "rotate-tokens": { type: "boolean" },
      store: { type: "string" },
      project: { type: "string" },
      "state-dir": { type: "string" },
      tools: { type: "string" },
      json: { type: "boolean" },
      scope: { type: "string" },
      ttl: { type: "string" },
      uses: { type: "string" },
      data: { type: "string" },
      after: { type: "string" },
      kinds: { type: "string" },
      follow: { type: "boolean" },
      edit: { type: "string" },
    },
    allowPositionals: positionals,
    strict: true,
  });
}

function usage(message: string): number {
  process.stderr.write(`longrun: ${message.replace(/\s*\n\s*/g, " ")}; see longrun --help\n`);
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    const { target, commit } = (await import("../version.ts")).buildInfo();
    process.stdout.write(`longrun ${VERSION} (${target}, commit ${commit})\n`);
    return 0;
  }
  if (command === "hook") {
    // Hooks answer on stdout in their host's format even when their arguments are wrong.
    const { runHook } = await import("../hooks/command.ts");
    return runHook(rest);
  }
  if (command === "sandbox") {
    // per command, like a hook: its own arguments (everything after -- is the command's), no libSQL
    return (await import("./sandbox.ts")).runSandbox(rest);
  }
  if (command === "doctor") return (await import("./doctor.ts")).runDoctorCommand(rest);
  if (command === "health") return (await import("./health.ts")).runHealthCommand(rest);
  if (command === "open") return (await import("./open.ts")).runOpenCommand(rest);
  let values: Values;
  let words: string[];
  try {
    ({ values, positionals: words } = parse(rest, ["start", "grant", "answer", "approve", "reject"].includes(command)));
  } catch (e) {
    return usage((e as Error).message);
  }
  const person = (await import("./person/args.ts")).personFlagsMisused(command, values);
  if (person) return usage(person);
  const root = typeof values.root === "string" ? values.root : null;
  if (values.tools !== undefined && command !== "mcp") return usage(`--tools is an option of longrun mcp, not of ${command}`);
  const maxRootsText = (values["max-roots"] as string | undefined) ?? process.env.LONGRUN_MAX_ROOTS;
  const maxRoots = maxRootsText === undefined || maxRootsText === "" ? undefined : Number(maxRootsText);
  if (maxRoots !== undefined && (!Number.isInteger(maxRoots) || maxRoots < 1 || maxRoots > 100_000)) {
    return usage(`--max-roots (or LONGRUN_MAX_ROOTS) must be a whole number from 1 to 100000, got ${JSON.stringify(maxRootsText)}`);
  }
  // a root on a libSQL server instead of a directory: --store/--project or LONGRUN_STORE/LONGRUN_PROJECT
  const { serverStoreFrom, StoreConfigError } = await import("../store/server_config.ts");
  // a --root flag names a local root even where LONGRUN_STORE is set (a flag beats the environment)
  if (root !== null && values.store !== undefined) return usage("--root and --store name two different roots; pass one of them");
  if (values.store === undefined && (values.project !== undefined || values["state-dir"] !== undefined) && root !== null) {
    return usage("--project and --state-dir go with --store (a root on a libSQL server), not with --root");
  }
  let server = null;
  try {
    if (root === null) server = serverStoreFrom({ store: values.store as string | undefined, project: values.project as string | undefined, stateDir: values["state-dir"] as string | undefined });
  } catch (e) {
    if (!(e instanceof StoreConfigError)) throw e;
    return usage(e.message);
  }
  switch (command) {
    case "serve":
      return (await import("./serve.ts")).runServe({ root, maxRoots, server });
    case "mcp":
      return (await import("./mcp.ts")).runMcp({ root, tools: values.tools as string | undefined, server });
    case "http": {
      // flags, else LONGRUN_* variables (src/cli/http_config.ts); a bad value is one line and exit 2
      const { ConfigError, httpConfig } = await import("./http_config.ts");
      let config;
      try {
        config = httpConfig(values as import("./http_config.ts").HttpFlags, process.env, maxRoots);
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        return usage(e.message);
      }
      return (await import("./http.ts")).runHttp({ ...config, server });
    }
    case "demo":
      return (await import("./demo.ts")).runDemo(undefined, values.keep === true);
    case "status":
    case "resume":
    case "checkpoint":
    case "finish":
    case "recover":
      return (await import("./human.ts")).runHuman(command, {
        root,
        summary: values.summary as string | undefined,
        nextStep: values["next-step"] as string | undefined,
        phase: values.phase as string | undefined,
        force: values.force === true,
        acceptMemory: values["accept-memory"] === true,
        server,
      });
    case "start":
    case "list":
    case "grant":
    case "revoke":
    case "answer":
    case "events":
    case "approvals":
    case "approve":
    case "reject":
      return (await import("./person/args.ts")).runPersonVerb(command, { root, server, json: values.json === true }, words, values);
    default:
      return usage(`unknown command ${JSON.stringify(command)}`);
  }
}
