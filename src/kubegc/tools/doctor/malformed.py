"""Objects that break the API's schema (``tools.wellformed``): one ``MalformedObject``
finding per object, naming each field, what is wrong with it and what the tools did
(left it out, or left the object out). An API server refuses such an object on write
(``ValidateObjectMeta``, k8s.io/apimachinery/pkg/api/validation/objectmeta.go), so it
comes from a dump edited by hand or from something that wrote around validation."""

from __future__ import annotations

from kubegc.tools.doctor.findings import Cause, CauseDetail, Finding, FindingKind, Severity
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.wellformed import SKIPPED, InputProblem


def malformed_findings(inv: Inventory, only: ObjRef | None = None) -> list[Finding]:
    """A finding per malformed object (with ``only``: about that object alone)."""
    by_object: dict[ObjRef, list[InputProblem]] = {}
    for problem in inv.problems:
        by_object.setdefault(problem.object, []).append(problem)
    return [_finding(ref, problems, inv.dump) for ref, problems in by_object.items()
            if only is None or (ref.kind, ref.namespace, ref.name)
            == (only.kind, only.namespace, only.name)]


def _finding(ref: ObjRef, problems: list[InputProblem], dump: bool) -> Finding:
    left_out = any(p.effect == SKIPPED for p in problems)
    title = ("breaks the API's schema: left out of the answer" if left_out else
             f"breaks the API's schema: {len(problems)} field"
             f"{'' if len(problems) == 1 else 's'} not read as written")
    facts = [f"{p.field or 'the item'} {p.wrong}: {p.effect}" for p in problems]
    where = f" -n {ref.namespace}" if ref.namespace else ""
    get = f"kubectl get {ref.kind.lower() or 'KIND'} {ref.name or 'NAME'}{where} -o json"
    fix = ([f"the dump was edited by hand or damaged: take the object again from the cluster "
            f"({get}) and read the dump again"] if dump else
           [f"an API server refuses such an object: find what wrote it around validation "
            f"(another API server, a direct write to storage) and write the object again "
            f"({get}, then kubectl replace)"])
    next_ = ["the tools judge the rest of the cluster as it stands, and this object "
             + ("not at all" if left_out else "without the fields named")]
    fields = ", ".join(dict.fromkeys(p.field or "the item" for p in problems))
    cause = Cause(f"breaks the API's schema ({fields})", ref)
    return Finding(FindingKind.MALFORMED_OBJECT, Severity.WARNING, ref, title, next=next_,
                   fix=fix, facts=facts, causes={cause: CauseDetail(next_, fix, at=[ref])})
