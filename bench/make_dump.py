"""Write a ``kubectl get -o json``-like List of N ConfigMaps, for ``kubegc doctor --from``.

Issue 27 (the doctor on a big dump): one owner ConfigMap per 1,000, each dependent with two
labels, a controller ownerReference and 300 bytes of data (~0.7 KB of JSON per object),
without going through a server (``bench_tools.py`` makes its dumps from a live kubegc,
which takes long at 100k). Measure with, for a baseline source tree and this one in turn:

    /usr/bin/time -f "%e s %M KB" env PYTHONPATH=SRC python -m kubegc doctor \\
        --from DUMP -o json > /dev/null
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

import orjson


def configmaps(n: int) -> list[dict[str, object]]:
    items: list[dict[str, object]] = []
    for k in range((n + 999) // 1000):
        items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": f"owner-{k}", "namespace": "bench", "uid": str(uuid.uuid4()),
            "resourceVersion": str(k + 1), "creationTimestamp": "2026-12-06T10:00:00Z"}})
    owners = [(o["metadata"]["name"], o["metadata"]["uid"]) for o in items]  # type: ignore[index]
    for i in range(n):
        name, uid = owners[i // 1000]
        items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": f"dep-{i}", "namespace": "bench", "uid": str(uuid.uuid4()),
            "resourceVersion": str(n + i + 10),
            "creationTimestamp": f"2026-12-06T10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}Z",
            "labels": {"app": "bench", "group": f"g{i // 1000}"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": name,
                                 "uid": uid, "controller": True,
                                 "blockOwnerDeletion": True}]},
            "data": {"payload": "x" * 300}})
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("objects", type=int, help="dependent ConfigMaps (<= 300000)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--indent", action="store_true",
                        help="indented, as kubectl prints it (by 2; kubectl indents by 4)")
    args = parser.parse_args()
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
           "items": configmaps(min(args.objects, 300_000))}
    args.out.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 if args.indent else 0))


if __name__ == "__main__":
    main()
