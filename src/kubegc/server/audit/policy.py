"""The audit policy (``audit.k8s.io/v1`` ``Policy``, kube-apiserver's
``--audit-policy-file``): which requests are audited at which level, as upstream's
``k8s.io/apiserver/pkg/audit/policy`` reads (``reader.go``), validates
(``pkg/apis/audit/validation``) and evaluates it (``checker.go``: the first rule that
matches a request decides; none matches: ``None``, not audited).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubegc.api.auth import Attributes

GROUP_VERSION = "audit.k8s.io/v1"


class Level(enum.IntEnum):
    """``audit.Level``, ordered as upstream's ``Level.Less``."""

    NONE = 0
    METADATA = 1
    REQUEST = 2
    REQUEST_RESPONSE = 3

    @property
    def wire(self) -> str:
        return _LEVEL_NAMES[self]

    @classmethod
    def parse(cls, text: str) -> Level:
        for level, name in _LEVEL_NAMES.items():
            if name == text:
                return level
        raise ValueError(text)


_LEVEL_NAMES = {Level.NONE: "None", Level.METADATA: "Metadata", Level.REQUEST: "Request",
                Level.REQUEST_RESPONSE: "RequestResponse"}


class Stage(enum.Enum):
    """``audit.Stage``: when in a request's life an event is written."""

    REQUEST_RECEIVED = "RequestReceived"
    RESPONSE_STARTED = "ResponseStarted"
    RESPONSE_COMPLETE = "ResponseComplete"
    PANIC = "Panic"


class PolicyError(ValueError):
    """A policy file that cannot be used; the message says why, as kube-apiserver's."""


@dataclass(frozen=True, slots=True)
class GroupResources:
    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PolicyRule:
    level: Level
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: tuple[Stage, ...] = ()
    omit_managed_fields: bool | None = None

    def matches(self, attrs: Attributes | None) -> bool:
        """``ruleMatches``; ``attrs`` without a user (a request that failed to
        authenticate) matches no rule that names users or groups."""
        user = attrs.user if attrs is not None else None
        if self.users and (user is None or user.name not in self.users):
            return False
        if self.user_groups and (user is None or not set(user.groups) & set(self.user_groups)):
            return False
        if self.verbs and (attrs is None or attrs.verb not in self.verbs):
            return False
        if self.namespaces or self.resources:
            return attrs is not None and self._matches_resource(attrs)
        if self.non_resource_urls:
            return (attrs is not None and not attrs.resource_request
                    and any(_path_matches(attrs.path, spec) for spec in self.non_resource_urls))
        return True

    def _matches_resource(self, attrs: Attributes) -> bool:
        """``ruleMatchesResource``."""
        if not attrs.resource_request:
            return False
        if self.namespaces and attrs.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        combined = (f"{attrs.resource}/{attrs.subresource}" if attrs.subresource
                    else attrs.resource)
        for gr in self.resources:
            if gr.group != attrs.api_group:
                continue
            if not gr.resources:
                return True
            if gr.resource_names and attrs.name not in gr.resource_names:
                continue
            if any(_resource_matches(res, combined, attrs) for res in gr.resources):
                return True
        return False


def _resource_matches(res: str, combined: str, attrs: Attributes) -> bool:
    if res in (combined, "*"):
        return True
    if attrs.subresource and res.startswith("*/") and attrs.subresource == res[2:]:
        return True
    return res.endswith("/*") and attrs.resource == res[:-2]


def _path_matches(path: str, spec: str) -> bool:
    """``pathMatches``: ``*``, the path itself, or a prefix ending in ``*``."""
    return spec in ("*", path) or (spec.endswith("*") and path.startswith(spec.rstrip("*")))


@dataclass(frozen=True, slots=True)
class RequestAuditConfig:
    """``audit.RequestAuditConfig``: what the policy says of one request."""

    level: Level
    omit_stages: frozenset[Stage] = frozenset()
    omit_managed_fields: bool = False


NOT_AUDITED = RequestAuditConfig(Level.NONE)


@dataclass(frozen=True, slots=True)
class Policy:
    rules: tuple[PolicyRule, ...]
    omit_stages: tuple[Stage, ...] = ()
    omit_managed_fields: bool = False

    def evaluate(self, attrs: Attributes | None) -> RequestAuditConfig:
        """``policyRuleEvaluator.EvaluatePolicyRule``: the first matching rule's level,
        the policy's and the rule's omitted stages, the rule's ``omitManagedFields``
        (else the policy's)."""
        for rule in self.rules:
            if rule.matches(attrs):
                omit = (rule.omit_managed_fields if rule.omit_managed_fields is not None
                        else self.omit_managed_fields)
                return RequestAuditConfig(rule.level,
                                          frozenset((*self.omit_stages, *rule.omit_stages)),
                                          omit)
        return NOT_AUDITED


def load_policy(path: Path) -> Policy:
    """``policy.LoadPolicyFromFile``: a YAML or JSON ``audit.k8s.io/v1`` Policy with at
    least one rule; ``PolicyError`` otherwise."""
    try:
        text = path.read_text()
    except OSError as e:
        raise PolicyError(f"failed to read file path {str(path)!r}: {e.strerror}") from None
    try:
        doc = yaml.safe_load(text) if not text.lstrip().startswith("{") else json.loads(text)
    except (yaml.YAMLError, json.JSONDecodeError) as e:
        raise PolicyError(f"failed decoding file {str(path)!r}: "
                          f"{str(e).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise PolicyError(f"failed decoding file {str(path)!r}: not an object")
    if doc.get("kind") != "Policy" or doc.get("apiVersion") != GROUP_VERSION:
        raise PolicyError(
            f"failed decoding file {str(path)!r}: unknown group version field "
            f"{doc.get('apiVersion')!r} kind {doc.get('kind')!r} in policy (wants "
            f"apiVersion {GROUP_VERSION}, kind Policy)")
    policy = _policy(doc)
    if not policy.rules:
        raise PolicyError(f"loaded illegal policy with 0 rules from file {path}")
    return policy


def _policy(doc: dict[str, Any]) -> Policy:
    errs: list[str] = []
    rules = tuple(_rule(r, f"rules[{i}]", errs) for i, r in enumerate(doc.get("rules") or []))
    omit = _stages(doc.get("omitStages"), "omitStages", errs)
    if errs:
        raise PolicyError("; ".join(errs))
    return Policy(rules, omit, bool(doc.get("omitManagedFields", False)))


def _strings(value: Any, path: str, errs: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errs.append(f"{path}: Invalid value: a list of strings is required")
        return ()
    return tuple(value)


def _stages(value: Any, path: str, errs: list[str]) -> tuple[Stage, ...]:
    stages = []
    for i, name in enumerate(_strings(value, path, errs)):
        try:
            stages.append(Stage(name))
        except ValueError:
            valid = [s.value for s in Stage]
            errs.append(f"{path}[{i}]: Unsupported value: {name!r}: supported values: "
                        + ", ".join(f'"{v}"' for v in valid))
    return tuple(stages)


def _rule(raw: Any, path: str, errs: list[str]) -> PolicyRule:
    if not isinstance(raw, dict):
        errs.append(f"{path}: Invalid value: a rule must be an object")
        return PolicyRule(Level.NONE)
    try:
        level = Level.parse(raw.get("level", ""))
    except (ValueError, TypeError):
        errs.append(f"{path}.level: Unsupported value: {raw.get('level')!r}: supported "
                    'values: "None", "Metadata", "Request", "RequestResponse"')
        level = Level.NONE
    urls = _strings(raw.get("nonResourceURLs"), f"{path}.nonResourceURLs", errs)
    namespaces = _strings(raw.get("namespaces"), f"{path}.namespaces", errs)
    resources = tuple(_group_resources(g, f"{path}.resources[{i}]", errs)
                      for i, g in enumerate(raw.get("resources") or []))
    if urls and (resources or namespaces):
        errs.append(f"{path}.nonResourceURLs: Invalid value: {list(urls)!r}: rules cannot "
                    "apply to both regular resources and non-resource URLs")
    for i, url in enumerate(urls):
        if (not url.startswith("/") and url != "*") or "*" in url[:-1]:
            errs.append(f"{path}.nonResourceURLs[{i}]: Invalid value: {url!r}: non-resource "
                        "URL rules must begin with a '/' character, and a '*' may only be "
                        "the last character")
    omit_managed = raw.get("omitManagedFields")
    return PolicyRule(
        level=level, users=_strings(raw.get("users"), f"{path}.users", errs),
        user_groups=_strings(raw.get("userGroups"), f"{path}.userGroups", errs),
        verbs=_strings(raw.get("verbs"), f"{path}.verbs", errs), resources=resources,
        namespaces=namespaces, non_resource_urls=urls,
        omit_stages=_stages(raw.get("omitStages"), f"{path}.omitStages", errs),
        omit_managed_fields=None if omit_managed is None else bool(omit_managed))


def _group_resources(raw: Any, path: str, errs: list[str]) -> GroupResources:
    if not isinstance(raw, dict):
        errs.append(f"{path}: Invalid value: must be an object")
        return GroupResources()
    group = raw.get("group", "")
    if not isinstance(group, str) or "/" in group:
        errs.append(f"{path}.group: Invalid value: {group!r}: group name must not contain "
                    "'/'")
        group = ""
    resources = _strings(raw.get("resources"), f"{path}.resources", errs)
    names = _strings(raw.get("resourceNames"), f"{path}.resourceNames", errs)
    if names and any("*" in r or "/" in r for r in resources):
        errs.append(f"{path}.resourceNames: Invalid value: {list(names)!r}: using "
                    "resourceNames with wildcards or subresources is not allowed")
    return GroupResources(group, resources, names)
