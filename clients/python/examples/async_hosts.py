"""One asyncio host, three conversations on three roots at once, each with its own ``longrun serve``
child, its own turns and its own lease, and checkpoints in English, Chinese and Korean.

    python3 async_hosts.py [--keep]

The roots are temporary directories, removed at the end (--keep keeps them).
"""
import asyncio
import os
import shutil
import sys
import tempfile

try:
    from longrun import AsyncLongrunClient, WriteGateViolation
except ImportError:  # run from a clone without installing: the package is next to this folder
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from longrun import AsyncLongrunClient, WriteGateViolation

CONVERSATIONS = [
    ("en", "Adapt the supplier interface", ["map the fields", "write the adapter", "test it", "review"]),
    ("zh", "接口适配：接入第二个供应商", ["映射字段", "编写适配器", "测试", "评审"]),
    ("ko", "공급업체 인터페이스를 맞추고 두 번째 공급업체를 연결", ["필드 매핑", "어댑터 작성", "테스트", "검토"]),
]


async def conversation(root: str, lang: str, description: str, plan: list) -> str:
    steps, review = plan[:-1], plan[-1]
    async with AsyncLongrunClient(root, lang=lang) as lr:
        await lr.start_task(description)
        try:
            await lr.require_writable("edit adapters/supplier.py")
        except WriteGateViolation as e:
            print("[%s] refused before approval: %s" % (lang, e.reason))
        await lr.begin_turn("the user answered: go ahead")
        await lr.enable_writes("approved in this turn", scope=["adapters/**"])
        for i, step in enumerate(steps):
            await lr.require_writable("edit adapters/step_%d.py" % i)
            await asyncio.sleep(0.01)  # the model and the tools would run here; the other conversations go on
            await lr.progress("%s: done" % step, steps[i + 1] if i + 1 < len(steps) else "-", data={"step": i + 1})
            print("[%s] step %d: %s" % (lang, i + 1, step))
        cp = await lr.checkpoint("%d steps done" % len(steps), review, phase=description[:40])
        status = await lr.status()
        assert status["task"] is not None and status["task"]["last_checkpoint"] is not None
        assert status["task"]["last_checkpoint"].get("data") == {"step": len(steps)}, "data carried over"
        return "[%s] %s" % (lang, " | ".join(cp["text"].splitlines()[2:5]))


async def main(keep: bool) -> int:
    roots = [tempfile.mkdtemp(prefix="longrun-async-%s-" % lang) for lang, _, _ in CONVERSATIONS]
    try:
        texts = await asyncio.gather(*(conversation(r, lang, d, s) for r, (lang, d, s) in zip(roots, CONVERSATIONS)))
        for t in texts:
            print(t)
        print("%d conversations done, one root each" % len(texts))
        return 0
    finally:
        for r in roots:
            if keep:
                print("kept:", r)
            else:
                shutil.rmtree(r, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main("--keep" in sys.argv[1:])))
