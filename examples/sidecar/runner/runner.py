"""An agent runner next to a longrun sidecar: it reaches the HTTP API by the service name and
reads the bearer tokens from the volume both containers share. Standard library only.

    LONGRUN_URL          the API (compose: http://longrun:8080)
    LONGRUN_TOKEN_FILE   the server's token file on the shared volume (/data/.longrun/http.json)

It plays both sides of the contract in one process to show them: the agent (task.start,
memory.save, writes.require, task.checkpoint, memory.search) and the host (writes.enable, the
lease for this turn). A real runner keeps the host token away from the model's tools.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("LONGRUN_URL", "http://longrun:8080").rstrip("/")
TOKEN_FILE = os.environ.get("LONGRUN_TOKEN_FILE", "/data/.longrun/http.json")
WAIT_SECONDS = float(os.environ.get("LONGRUN_WAIT_SECONDS", "60"))


class RpcError(Exception):
    def __init__(self, error):
        super().__init__(f"{error.get('message')} ({error.get('data', {}).get('kind')})")
        self.error = error


def tokens():
    """The host and agent tokens, once the server has written its token file."""
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


def call(token, method, **params):
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


def wait_for_api(agent):
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            return call(agent, "task.status")
        except (urllib.error.URLError, ConnectionError) as e:
            if time.monotonic() > deadline:
                sys.exit(f"runner: {URL} does not answer after {WAIT_SECONDS:.0f} s ({e})")
            time.sleep(0.5)


def main():
    host, agent = tokens()
    wait_for_api(agent)
    started = call(agent, "task.start", description="Sidecar demo: adapt the supplier interface", keywords=["supplier"])
    print("task:", started["task"]["task_id"], "gate:", started["task"]["access_mode"])
    try:
        call(agent, "writes.require", action="edit adapters/supplier.py")
    except RpcError as e:
        print("gate before a lease:", e.error["data"]["reason"])
    lease = call(host, "writes.enable", reason="plan approved by the runner", scope=["adapters/**"])
    print("lease for turn", lease["lease"]["turn"])
    call(agent, "writes.require", action="edit adapters/supplier.py")
    saved = call(agent, "memory.save", type="note", title="supplier field mapping", content="part_no maps to sku")
    checkpoint = call(agent, "task.checkpoint", summary="adapter mapped", next_step="connect supplier 2", phase="adapter")
    print("checkpoint saved as", checkpoint["memory_id"])
    hits = call(agent, "memory.search", query="supplier")["hits"]
    print("memory.search supplier:", ", ".join(h["id"] for h in hits))
    if saved["id"] not in [h["id"] for h in hits]:
        sys.exit("runner: the saved note was not found")
    print("OK: the runner used longrun over HTTP")


if __name__ == "__main__":
    main()
