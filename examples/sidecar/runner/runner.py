"""An agent runner next to a longrun sidecar: it reaches the HTTP API by the service name and
reads the bearer tokens once, at start: from the secret files both containers mount, or from the
server's token file on the volume they share. Standard library only.

    LONGRUN_URL                the API (compose: http://longrun:8080)
    LONGRUN_HOST_TOKEN_FILE    the host token's secret file (compose: /run/secrets/longrun_host_token)
    LONGRUN_AGENT_TOKEN_FILE   the agent token's secret file; without these two, the tokens come from
    LONGRUN_TOKEN_FILE         the server's token file on the shared volume (/data/.longrun/http.json)
    LONGRUN_PAUSE_FILE         wait for this file to exist between the first turn and the second
                               (a test restarts longrun meanwhile)

It plays both sides of the contract in one process to show them: the agent (task.start,
memory.save, writes.require, task.checkpoint, memory.search, task.resume) and the host
(writes.enable, the lease for a turn). A real runner keeps the host token away from the model's
tools. Calls made while longrun restarts are tried again until it answers (LONGRUN_WAIT_SECONDS).
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("LONGRUN_URL", "http://longrun:8080").rstrip("/")
TOKEN_FILE = os.environ.get("LONGRUN_TOKEN_FILE", "/data/.longrun/http.json")
SECRET_FILES = (os.environ.get("LONGRUN_HOST_TOKEN_FILE"), os.environ.get("LONGRUN_AGENT_TOKEN_FILE"))
PAUSE_FILE = os.environ.get("LONGRUN_PAUSE_FILE")
WAIT_SECONDS = float(os.environ.get("LONGRUN_WAIT_SECONDS", "60"))


class RpcError(Exception):
    def __init__(self, error):
        super().__init__(f"{error.get('message')} ({error.get('data', {}).get('kind')})")
        self.error = error


def secret(path):
    """A token from a secret file: its content less one trailing newline (as longrun reads it)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text


def tokens():
    """The host and agent tokens: from the secret files, else once the server has written its token file."""
    if all(SECRET_FILES):
        return secret(SECRET_FILES[0]), secret(SECRET_FILES[1])
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            with open(TOKEN_FILE, encoding="utf-8") as f:
                info = json.load(f)
            return info["host_token"], info["agent_token"]
        except (OSError, ValueError, KeyError) as e:
            if time.monotonic() > deadline:
                sys.exit(f"runner: no token file at {TOKEN_FILE} after {WAIT_SECONDS:.0f} s ({e}); is the longrun service up?")
            time.sleep(0.5)


_ids = iter(range(1, 1_000_000))


def call_once(token, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}).encode()
    req = urllib.request.Request(URL + "/rpc", data=body, method="POST",
                                 headers={"content-type": "application/json", "authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            answer = json.load(r)
    except urllib.error.HTTPError as e:
        answer = json.load(e)
    if "error" in answer:
        raise RpcError(answer["error"])
    return answer["result"]


def call(token, method, **params):
    """One call; while longrun does not answer (it is restarting), tried again until WAIT_SECONDS pass."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            return call_once(token, method, params)
        except (urllib.error.URLError, ConnectionError) as e:
            if time.monotonic() > deadline:
                sys.exit(f"runner: {URL} does not answer after {WAIT_SECONDS:.0f} s ({e})")
            time.sleep(0.5)


def turn(host, agent, first):
    """One turn: read-only until the host grants the lease, then a write, a note and a checkpoint."""
    if first:
        task = call(agent, "task.start", description="Sidecar demo: adapt the supplier interface", keywords=["supplier"])["task"]
    else:
        task = call(agent, "task.resume")["task"]
    print("turn", task["turn_index"], "of", task["task_id"], "gate:", task["access_mode"])
    try:
        call(agent, "writes.require", action="edit adapters/supplier.py")
    except RpcError as e:
        print("gate before a lease:", e.error["data"]["reason"])
    lease = call(host, "writes.enable", reason="plan approved by the runner", scope=["adapters/**"])
    print("lease for turn", lease["lease"]["turn"])
    call(agent, "writes.require", action="edit adapters/supplier.py")
    saved = call(agent, "memory.save", type="note", title=f"supplier field mapping, turn {task['turn_index']}", content="part_no maps to sku")
    checkpoint = call(agent, "task.checkpoint", summary="adapter mapped", next_step="connect supplier 2", phase="adapter")
    print("checkpoint saved as", checkpoint["memory_id"])
    hits = call(agent, "memory.search", query="supplier")["hits"]
    print("memory.search supplier:", ", ".join(h["id"] for h in hits))
    if saved["id"] not in [h["id"] for h in hits]:
        sys.exit("runner: the saved note was not found")


def main():
    host, agent = tokens()  # read once: they must keep working across a restart of longrun
    call(agent, "task.status")
    turn(host, agent, first=True)
    if PAUSE_FILE:
        print("waiting for", PAUSE_FILE, flush=True)
        while not os.path.exists(PAUSE_FILE):
            time.sleep(0.1)
        turn(host, agent, first=False)
    print("OK: the runner used longrun over HTTP")


if __name__ == "__main__":
    main()
