"""Label selectors, as apimachinery's ``pkg/labels`` (``labels.Parse``, ``SelectorFromSet``)
and ``metav1.LabelSelectorAsSelector``.

Contract:
  * ``parse_label_selector(text)`` accepts upstream's grammar (``=``, ``==``, ``!=``,
    ``in (a,b)``, ``notin (a,b)``, ``key``, ``!key``, ``gt``/``lt`` as ``>``/``<``; comma is
    AND) and fails with a 400 BadRequest whose message is upstream's parser error, e.g.
    ``unable to parse requirement: found '', expected: identifier``.
  * ``label_selector_from_dict`` converts a ``metav1.LabelSelector`` like
    ``LabelSelectorAsSelector``: ``None`` selects nothing, ``{}`` selects everything.
  * ``selector_from_set`` is ``labels.SelectorFromSet``; ``new_requirement`` validates keys
    and values with upstream's messages (``labels.NewRequirement``).
  * Keys and values are checked by ``kubegc.api.content`` (``IsQualifiedName``,
    ``IsValidLabelValue``).
  * ``Operator`` is apimachinery's ``selection.Operator``; field selectors (``api.fields``)
    share it.
Selectors are immutable values; requirements are kept sorted by key, as upstream does.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubegc.api import errors
from kubegc.api.content import is_qualified_name, is_valid_label_value


class Operator(enum.StrEnum):
    """``selection.Operator`` values (their upstream spelling)."""

    IN = "in"
    NOT_IN = "notin"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = "gt"
    LESS_THAN = "lt"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


@dataclass(frozen=True, slots=True)
class Requirement:
    """One label requirement: ``key`` related to ``values`` by ``operator``."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        return self._matches_inequality(labels)

    def _matches_inequality(self, labels: Mapping[str, str]) -> bool:
        if self.key not in labels or len(self.values) != 1:
            return False
        have, want = _parse_int64(labels[self.key]), _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if self.operator is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        joined = ",".join(sorted(self.values))
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({joined})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{joined}"


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``, None where it fails (Python's ``int`` would also
    take ``1_0``, surrounding spaces and non-ASCII digits)."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """AND of requirements. ``nothing`` is ``labels.Nothing()`` (matches no object)."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict the selection (``Everything``)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The value ``key`` must have when a requirement pins it (``=``, ``==``, ``in (v)``)."""
        for r in self.requirements:
            if r.key == key:
                pinning = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
                return r.values[0] if r.operator in pinning and len(r.values) == 1 else None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)

def _invalid(path: str, value: str | list[str] | None, detail: str, *,
             go_type: str = "string") -> str:
    """``field.Invalid(path, value, detail).Error()``."""
    cause = errors.field_error("FieldValueInvalid", path, detail, value, go_type=go_type)
    return f"{cause.field}: {cause.message}"


def _invalid_values(values: list[str], detail: str) -> str:
    """``field.Invalid(values, vals, detail)``: ``vals`` printed as a ``[]string``, an empty
    one as the nil slice ``LabelSelectorAsSelector`` passes (``[]string(nil)``); the parser
    never passes an empty one to a check that fails."""
    return _invalid("values", values or None, detail, go_type="[]string")


def new_requirement(key: str, operator: Operator, values: list[str]) -> Requirement:
    """``labels.NewRequirement``: validate and build; errors are a ``field.ErrorList``
    aggregate, raised as ValueError carrying upstream's text (values printed as Go prints
    them, ``%q`` and ``%#v``)."""
    errs: list[str] = []
    if key_errs := is_qualified_name(key):
        errs.append(_invalid("key", key, "; ".join(key_errs)))
    n = len(values)
    if operator in (Operator.IN, Operator.NOT_IN) and n == 0:
        errs.append(_invalid_values(values, "for 'in', 'notin' operators, values set can't be"
                                    " empty"))
    elif operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS) and n != 1:
        errs.append(_invalid_values(values, "exact-match compatibility requires one single"
                                    " value"))
    elif operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and n != 0:
        errs.append(_invalid_values(values, "values set must be empty for exists and does not"
                                    " exist"))
    elif operator in (Operator.GREATER_THAN, Operator.LESS_THAN):
        if n != 1:
            errs.append(_invalid_values(values, "for 'Gt', 'Lt' operators, exactly one value is"
                                        " required"))
        for i, v in enumerate(values):
            if _parse_int64(v) is None:
                errs.append(_invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value"
                                     " must be an integer"))
    for i, v in enumerate(values):
        if value_errs := is_valid_label_value(v):
            errs.append(_invalid(f"values[{i}][{key}]", v, "; ".join(value_errs)))
    if errs:
        unique = list(dict.fromkeys(errs))
        raise ValueError(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")
    return Requirement(key, operator, tuple(values))


# --- the label selector lexer and parser (labels/selector.go) ------------------------

_SPECIAL = "=!(),><"
_WHITESPACE = " \t\r\n"
_TOKENS = {")": "CLOSE", ",": "COMMA", "!": "NOT", "==": "DEQ", "=": "EQ", ">": "GT",
           "in": "IN", "<": "LT", "!=": "NEQ", "notin": "NOTIN", "(": "OPEN"}
_OPERATOR_TOKENS = {"IN": Operator.IN, "EQ": Operator.EQUALS, "DEQ": Operator.DOUBLE_EQUALS,
                    "GT": Operator.GREATER_THAN, "LT": Operator.LESS_THAN,
                    "NOTIN": Operator.NOT_IN, "NEQ": Operator.NOT_EQUALS}


def _lex(text: str) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            items.append(("END", ""))
            return items
        start = pos
        if text[pos] in _SPECIAL:
            # The longest run of special characters that is still a token (``!=``, ``==``).
            best = ""
            while pos < n and text[pos] in _SPECIAL and text[start:pos + 1] in _TOKENS:
                pos += 1
                best = text[start:pos]
            items.append((_TOKENS[best], best))
            continue
        while pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        word = text[start:pos]
        items.append((_TOKENS.get(word, "ID"), word))


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        return self._as(self.items[self.pos], values)

    def consume(self, values: bool = True) -> tuple[str, str]:
        self.pos += 1
        return self._as(self.items[self.pos - 1], values)

    @staticmethod
    def _as(item: tuple[str, str], values: bool) -> tuple[str, str]:
        # ``in``/``notin`` are plain identifiers where a key or value is expected.
        tok, lit = item
        return ("ID", lit) if values and tok in ("IN", "NOTIN") else (tok, lit)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok == "END":
                return requirements
            if tok not in ("ID", "NOT"):
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except ValueError as err:
                raise ValueError(f"unable to parse requirement: {err}") from None
            tok, lit = self.consume()
            if tok == "END":
                return requirements
            if tok != "COMMA":
                raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            tok2, lit2 = self.lookahead()
            if tok2 not in ("ID", "NOT"):
                raise ValueError(f"found '{lit2}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        operator: Operator | None = None
        tok, key = self.consume()
        if tok == "NOT":
            operator = Operator.DOES_NOT_EXIST
            tok, key = self.consume()
        if tok != "ID":
            raise ValueError(f"found '{key}', expected: identifier")
        if key_errs := is_qualified_name(key):
            raise ValueError(_invalid("<nil>", key, "; ".join(key_errs)))
        if operator is None and self.lookahead()[0] in ("END", "COMMA"):
            operator = Operator.EXISTS
        if operator is not None:
            return new_requirement(key, operator, [])
        tok, lit = self.consume(values=False)
        if tok not in _OPERATOR_TOKENS:
            raise ValueError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        operator = _OPERATOR_TOKENS[tok]
        values = self.value_set() if operator in (Operator.IN, Operator.NOT_IN) else (
            self.exact_value())
        return new_requirement(key, operator, sorted(values))

    def value_set(self) -> set[str]:
        tok, lit = self.consume()
        if tok != "OPEN":
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == "CLOSE":
            self.consume()
            return {""}
        if tok not in ("ID", "COMMA"):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.identifiers()
        if self.consume()[0] != "CLOSE":
            raise ValueError(f"found '{lit}', expected: ')'")
        return values

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == "ID":
                values.add(lit)
                tok2, lit2 = self.lookahead()
                if tok2 == "CLOSE":
                    return values
                if tok2 != "COMMA":
                    raise ValueError(f"found '{lit2}', expected: ',' or ')'")
            elif tok == "COMMA":
                # "(,", ",)" and ",," each stand for an empty value.
                if not values:
                    values.add("")
                if self.lookahead()[0] == "CLOSE":
                    values.add("")
                    return values
                if self.lookahead()[0] == "COMMA":
                    values.add("")
            else:
                raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.lookahead()[0] in ("END", "COMMA"):
            return {""}
        tok, lit = self.consume()
        if tok == "ID":
            return {lit}
        raise ValueError(f"found '{lit}', expected: identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """``labels.Parse``; raises 400 BadRequest with upstream's message when invalid."""
    try:
        requirements = _Parser(text).parse()
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


_EXPRESSION_OPERATORS = {"In": Operator.IN, "NotIn": Operator.NOT_IN,
                         "Exists": Operator.EXISTS, "DoesNotExist": Operator.DOES_NOT_EXIST}


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: ``None`` → nothing, ``{}`` → everything."""
    if selector is None:
        return NOTHING
    match_labels: Mapping[str, str] = selector.get("matchLabels") or {}
    expressions: list[Mapping[str, Any]] = selector.get("matchExpressions") or []
    requirements: list[Requirement] = []
    try:
        for key, value in match_labels.items():
            requirements.append(new_requirement(key, Operator.EQUALS, [value]))
        for expr in expressions:
            op_name = expr.get("operator", "")
            if op_name not in _EXPRESSION_OPERATORS:
                raise ValueError(f'"{op_name}" is not a valid label selector operator')
            values = list(expr.get("values") or [])
            requirements.append(new_requirement(expr.get("key", ""),
                                                _EXPRESSION_OPERATORS[op_name], values))
    except ValueError as err:
        raise errors.bad_request(str(err)) from None
    return LabelSelector(tuple(sorted(requirements, key=lambda r: r.key)))


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """``labels.SelectorFromSet``: every label must equal; empty or None selects everything."""
    reqs = (Requirement(k, Operator.EQUALS, (v,)) for k, v in (labels or {}).items())
    return LabelSelector(tuple(sorted(reqs, key=lambda r: r.key)))
