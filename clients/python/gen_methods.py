"""Writes longrun/_methods*.py: the protocol's methods as typed Python methods, sync and async.

What each method sends comes from ``system.describe``, checked in as methods.json (one method a
line): which params it takes, which are required, and their types (a string is ``str``, a list of
strings ``Sequence[str]``, an enum the ``Literal`` of longrun.types with exactly its values, an
object the ``TypedDict`` OBJECTS names). The tables of method_table.py add only what describe cannot say: each
method's Python name and docstring, the order of its Python arguments, its result type, and the
aliases (``progress``, ``recover_from_memory``). The same methods are written twice, once for the
threaded and HTTP clients (``ContractMethods``) and once for the asyncio clients
(``AsyncContractMethods``), so the two never drift apart. Tests check that methods.json is what the
binary describes and that the generated file is what this script writes.

    python3 clients/python/gen_methods.py              # rewrite longrun/_methods*.py from methods.json
    python3 clients/python/gen_methods.py --describe   # first refresh methods.json from dist/longrun ($LONGRUN_BIN)
    python3 clients/python/gen_methods.py --check      # exit 1 if the generated file is out of date
"""
import ast
import glob
import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from method_table import DELIVERABLE_METHODS, RUN_METHODS, TASK_METHODS, M

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "longrun")
DESCRIBED = os.path.join(HERE, "methods.json")
BIN = os.path.abspath(os.environ.get("LONGRUN_BIN") or os.path.join(HERE, "..", "..", "dist", "longrun"))

REQUIRED = object()
UNSET = object()  # a param that is sent even as None (JSON null) when given, left out when not


class P(NamedTuple):
    name: str
    type: str
    default: object = None  # REQUIRED, None (dropped when None) or UNSET


class Typed(NamedTuple):
    """A method with its Python arguments resolved against describe."""
    py: str
    wire: str
    result: str
    params: Tuple[P, ...]
    doc: str
    fixed: Tuple[Tuple[str, str], ...] = ()


#: The TypedDict of each object param whose fields describe lists (by param name; inside a list: its items).
OBJECTS = {
    "bounds": "TaskBounds",
    "budget": "BudgetLimits",
    "answer": "HostAnswerIn",
    "items": "MemoryItem",
    "attachments": "AttachmentInput",
    "sent": "SentDigest",
}

METHODS: Tuple[M, ...] = TASK_METHODS + RUN_METHODS + DELIVERABLE_METHODS


def describe_binary(binary: str = BIN) -> List[Dict[str, Any]]:
    """``system.describe``'s methods, asked of the binary over stdio in a scratch root."""
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "system.describe"}) + "\n"
    with tempfile.TemporaryDirectory(prefix="longrun-describe-") as root:
        out = subprocess.run([binary, "serve", "--root", root], input=request, capture_output=True, text=True, timeout=120, check=True)
    return list(json.loads(out.stdout.splitlines()[0])["result"]["methods"])


def methods_json(methods: List[Dict[str, Any]]) -> str:
    """methods.json's text: one described method a line, as the server gives it."""
    return '{"methods": [\n' + ",\n".join(json.dumps(m, ensure_ascii=False) for m in methods) + "\n]}\n"


def load_described(path: str = DESCRIBED) -> Dict[str, Dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return {m["name"]: m for m in json.load(f)["methods"]}


def literals() -> Dict[Tuple[str, ...], str]:
    """Every ``Name = Literal[...]`` of the package, by its values (read, not imported: the package may be mid-regeneration)."""
    found: Dict[Tuple[str, ...], str] = {}
    for path in sorted(glob.glob(os.path.join(HERE, "longrun", "*.py"))):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript) and getattr(node.value.value, "id", None) == "Literal":
                values = ast.literal_eval(node.value.slice)
                found[tuple(values) if isinstance(values, tuple) else (values,)] = node.targets[0].id  # type: ignore[attr-defined]
    return found


def py_type(where: str, name: str, schema: Dict[str, Any], named: Dict[Tuple[str, ...], str]) -> str:
    """The Python type of one described param (or of its items)."""
    if "anyOf" in schema:
        return "Union[%s]" % ", ".join(py_type(where, name, s, named) for s in schema["anyOf"])
    if "enum" in schema:
        if tuple(schema["enum"]) not in named:
            raise ValueError("%s: no Literal in longrun.types has the values %s" % (where, schema["enum"]))
        return named[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind in ("string", "integer", "number", "boolean"):
        return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}[kind]
    if kind == "array":
        return "Sequence[%s]" % py_type(where + "[]", name, schema["items"], named)
    if kind == "object" and schema.get("properties"):
        if name not in OBJECTS:
            raise ValueError("%s: an object with fields; name its TypedDict in OBJECTS" % where)
        return OBJECTS[name]
    if kind == "object":
        return "Mapping[str, Any]"
    if not schema:
        return "Any"
    raise ValueError("%s: no Python type for %s" % (where, json.dumps(schema)))


def params_of(m: M, described: Dict[str, Dict[str, Any]], named: Dict[Tuple[str, ...], str]) -> Tuple[P, ...]:
    """The method's Python arguments: names and order from the table, type and requiredness from describe."""
    if m.wire not in described:
        raise ValueError("%s: %s is not a method the server describes" % (m.py, m.wire))
    schema = described[m.wire]["params"]
    out = []
    for word in m.params.split():
        name, _, default = word.partition("=")
        if name not in schema.get("properties", {}):
            raise ValueError("%s: %s takes no param %s" % (m.py, m.wire, name))
        t = py_type("%s.%s" % (m.wire, name), name, schema["properties"][name], named)
        if default == "UNSET":
            out.append(P(name, t, UNSET))
        elif name in schema.get("required", []):
            out.append(P(name, t, REQUIRED))
        else:
            out.append(P(name, "Optional[%s]" % t, None))
    return tuple(out)


def check_coverage(described: Dict[str, Dict[str, Any]]) -> None:
    """Every described method and param (but ``root``) is sent by some method of the tables."""
    sent: Dict[str, set] = {}
    for m in METHODS:
        sent.setdefault(m.wire, set()).update([k for k, _ in m.fixed] + [w.partition("=")[0] for w in m.params.split()])
    for wire, d in sorted(described.items()):
        missing = set(d["params"].get("properties", {})) - {"root"} - sent.get(wire, set())
        if wire not in sent or missing:
            raise ValueError("no typed method sends %s%s: add it to a table in method_table.py" % (wire, "(%s)" % ", ".join(sorted(missing)) if missing else ""))


def _signature(m: "Typed") -> str:
    parts = ["self"]
    for p in m.params:
        if p.default is REQUIRED:
            parts.append("%s: %s" % (p.name, p.type))
        elif p.default is UNSET:
            parts.append("%s: %s = UNSET" % (p.name, p.type))
        else:
            parts.append("%s: %s = None" % (p.name, p.type))
    return ", ".join(parts)


def _params_dict(m: "Typed") -> str:
    items = ['"%s": %s' % (k, v) for k, v in m.fixed] + ['"%s": %s' % (p.name, p.name) for p in m.params]
    return "{" + ", ".join(items) + "}"


def _doc(doc: str, indent: str) -> List[str]:
    lines = doc.split("\n")
    if len(lines) == 1:
        return [indent + '"""%s"""' % lines[0]]
    return [indent + '"""' + lines[0]] + [(indent + l) if l else "" for l in lines[1:]] + [indent + '"""']


def _method(m: "Typed", is_async: bool) -> List[str]:
    d = "async def" if is_async else "def"
    aw = "await " if is_async else ""
    keep = [p.name for p in m.params if p.default is UNSET]
    clean = "clean(%s%s)" % (_params_dict(m), (", keep=%r" % (tuple(keep),)) if keep else "")
    return (
        ["    %s %s(%s) -> %s:" % (d, m.py, _signature(m), m.result)]
        + _doc(m.doc, "        ")
        + ['        return cast(%s, %sself._request("%s", %s))' % (m.result, aw, m.wire, clean), ""]
    )


#: The generated modules, one per area: (file, class name stem, methods).
AREAS = (
    ("_methods_tasks.py", "Task", TASK_METHODS, "system.describe, tasks, turns and the write lease, memory"),
    ("_methods_runs.py", "Run", RUN_METHODS, "runs, receipts, budgets"),
    ("_methods_deliverables.py", "Deliverable", DELIVERABLE_METHODS, "adjustments, artifacts, context"),
)
HEADER = "Generated by clients/python/gen_methods.py from methods.json (system.describe) and method_table.py: do not edit by hand."
NOT_TYPES = ("Optional", "Sequence", "Mapping", "Union", "Any")


def _area(stem: str, what: str, typed: List[Typed]) -> str:
    names = set()
    for m in typed:
        names.add(m.result)
        for p in m.params:
            names.update(w for w in p.type.replace("[", " ").replace("]", " ").replace(",", " ").split() if w[:1].isupper() and w not in NOT_TYPES)
    out = ['"""The protocol\'s methods of one area (%s), typed, sync and async.' % what, "", HEADER, '"""', "# fmt: off",
           "from __future__ import annotations", "", "from typing import Any, Dict, Mapping, Optional, Sequence, Union, cast", "",
           "from ._unset import %sclean" % ("UNSET, " if any(p.default is UNSET for m in typed for p in m.params) else ""), "from .types import ("]
    out += ["    %s," % n for n in sorted(names)] + [")", "", ""]
    for is_async in (False, True):
        out += [
            "class %s%sMethods:" % ("Async" if is_async else "", stem),
            '    """%s over ``_request``%s; part of %sContractMethods."""' % (what[0].upper() + what[1:], " (awaitable)" if is_async else "", "Async" if is_async else ""),
            "",
            "    %s _request(self, method: str, params: Dict[str, Any]) -> Any:" % ("async def" if is_async else "def"),
            "        raise NotImplementedError",
            "",
        ]
        for m in typed:
            out += _method(m, is_async)
        out[-1:] = ["", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _face(typed: List[Typed]) -> str:
    out = ['"""The protocol\'s methods as typed Python methods, sync and async: the classes the clients build on.', "", HEADER, '"""',
           "# fmt: off", "from __future__ import annotations", "", "from typing import Dict, Tuple", ""]
    out += ["from %s import %sMethods, Async%sMethods" % (f[:-3].replace("_methods", "._methods", 1), stem, stem) for f, stem, _, _ in AREAS]
    out += ["from ._unset import UNSET", "", '__all__ = ["UNSET", "METHOD_PARAMS", "ContractMethods", "AsyncContractMethods"]', "",
            "#: Every wire method these classes call, with the params they may send (checked against system.describe).",
            "METHOD_PARAMS: Dict[str, Tuple[str, ...]] = {"]
    seen: Dict[str, List[str]] = {}
    for m in typed:
        ps = seen.setdefault(m.wire, [])
        ps += [n for n in [k for k, _ in m.fixed] + [p.name for p in m.params] if n not in ps]
    out += ['    "%s": (%s),' % (wire, "".join('"%s", ' % p for p in seen[wire]).rstrip(" ")) for wire in sorted(seen)]
    out += ["}", ""]
    for prefix, what in (("", "the threaded stdio client and the HTTP client"), ("Async", "awaitable: the asyncio clients")):
        bases = ", ".join("%s%sMethods" % (prefix, stem) for _, stem, _, _ in AREAS)
        out += ["", "class %sContractMethods(%s):" % (prefix, bases),
                '    """Every method of the protocol over ``_request`` (%s). Results are the server\'s, unchanged."""' % what, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def render(described: Optional[Dict[str, Dict[str, Any]]] = None) -> Dict[str, str]:
    """Every generated file (path under longrun/) with the text it should hold."""
    described = load_described() if described is None else described
    check_coverage(described)
    named = literals()

    def typed(methods: Tuple[M, ...]) -> List[Typed]:
        return [Typed(m.py, m.wire, m.result, params_of(m, described, named), m.doc, m.fixed) for m in methods]

    files = {f: _area(stem, what, typed(methods)) for f, stem, methods, what in AREAS}
    files["_methods.py"] = _face(typed(METHODS))
    return files


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--describe" in argv:
        with open(DESCRIBED, "w", encoding="utf-8") as f:
            f.write(methods_json(describe_binary()))
    stale = []
    for name, text in render().items():
        path = os.path.join(PACKAGE, name)
        if "--check" not in argv:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        elif not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            stale.append(path)
    for path in stale:
        print("%s is out of date: run python3 clients/python/gen_methods.py" % path, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
