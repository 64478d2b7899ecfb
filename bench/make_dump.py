"""Write a ``kubectl get -o json``-like List of N ConfigMaps, for ``kubegc doctor --from``.

Issue 27 (the doctor on a big dump): one owner ConfigMap per 1,000, each dependent with two
labels, a controller ownerReference and 300 bytes of data (~0.7 KB of JSON per object),
without going through a server (``bench_tools.py`` makes its dumps from a live kubegc,
which takes long at 100k), written as they are made (a 1M-object dump needs no more memory
than a small one). Measure with, for a baseline source tree and this one in turn:

    /usr/bin/time -f "%e s %M KB" env PYTHONPATH=SRC python -m kubegc doctor \\
        --from DUMP -o json > /dev/null
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson


def iter_configmaps(n: int) -> Iterator[dict[str, object]]:
    """The owners (one per 1,000), then the N dependents, made as they are written."""
    owners = []
    for k in range((n + 999) // 1000):
        owner: dict[str, object] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": f"owner-{k}", "namespace": "bench", "uid": str(uuid.uuid4()),
            "resourceVersion": str(k + 1), "creationTimestamp": "2026-12-06T10:00:00Z"}}
        owners.append((f"owner-{k}", owner["metadata"]["uid"]))  # type: ignore[index]
        yield owner
    for i in range(n):
        name, uid = owners[i // 1000]
        yield {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": f"dep-{i}", "namespace": "bench", "uid": str(uuid.uuid4()),
            "resourceVersion": str(n + i + 10),
            "creationTimestamp": f"2026-12-06T10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}Z",
            "labels": {"app": "bench", "group": f"g{i // 1000}"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": name,
                                 "uid": uid, "controller": True,
                                 "blockOwnerDeletion": True}]},
            "data": {"payload": "x" * 300}}


def configmaps(n: int) -> list[dict[str, object]]:
    return list(iter_configmaps(n))


#: ``List`` documents as ``json.dumps(doc, indent=4)`` (kubectl's indent) prints them,
#: around their items
_HEAD = ('{\n    "apiVersion": "v1",\n    "kind": "List",\n    "metadata": {\n        '
         '"resourceVersion": ""\n    },\n    "items": [')
_COMPACT_HEAD = b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":['


def write_list(n: int, path: Path, *, indent: bool) -> None:
    """The List of ``iter_configmaps(n)`` written as it is made (a 1M-object dump without
    holding its objects): compact as ``orjson.dumps`` writes it, or indented by 4 the bytes
    ``json.dumps(doc, indent=4)`` writes."""
    with path.open("wb") as out:
        if indent:
            out.write(_HEAD.encode())
            sep = "\n"
            for item in iter_configmaps(n):
                text = json.dumps(item, indent=4).replace("\n", "\n        ")
                out.write(f"{sep}        {text}".encode())
                sep = ",\n"
            out.write(b"\n    ]\n}" if n else b"]\n}")
            return
        out.write(_COMPACT_HEAD)
        comma = b""
        for item in iter_configmaps(n):
            out.write(comma + orjson.dumps(item))
            comma = b","
        out.write(b"]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("objects", type=int, help="dependent ConfigMaps (<= 1,000,000)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--indent", action="store_true",
                        help="indented by 4, as kubectl prints it")
    args = parser.parse_args()
    write_list(min(args.objects, 1_000_000), args.out, indent=args.indent)


if __name__ == "__main__":
    main()
