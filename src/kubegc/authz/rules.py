"""RBAC's rules and how a request matches them: the vocabulary shared by the RBAC
authorizer (``kubegc.registry.groups.rbac``), the ClusterRole aggregation controller and the tools
that explain a 403 (cf. ``pkg/apis/rbac/v1/evaluation_helpers.go``,
``plugin/pkg/auth/authorizer/rbac/rbac.go`` ``RuleAllows`` and
``component-helpers/auth/rbac/validation/policy_comparator.go`` ``Covers``).

A ``PolicyRule`` is the immutable form of a rule of a Role or ClusterRole; the wire form is
the JSON dict (``from_obj`` / ``to_obj``). A ``RuleResolver`` answers "which rules does this
user hold in this namespace" (upstream's ``authorizer.RuleResolver``), which the
SelfSubjectRulesReview API serves.
May import: ``kubegc.api``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubegc.api.auth import Attributes, UserInfo
from kubegc.api.goformat import go_quote

GROUP = "rbac.authorization.k8s.io"
VERB_ALL = "*"
API_GROUP_ALL = "*"
RESOURCE_ALL = "*"
NON_RESOURCE_ALL = "*"


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(str(v) for v in value if isinstance(v, str))


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """``rbacv1.PolicyRule``."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_obj(cls, rule: Any) -> PolicyRule:
        """The rule of a stored object (fields of the wrong type read as empty, as the
        authorizer cannot fail on what validation let through)."""
        if not isinstance(rule, Mapping):
            return cls()
        return cls(verbs=_strings(rule.get("verbs")), api_groups=_strings(rule.get("apiGroups")),
                   resources=_strings(rule.get("resources")),
                   resource_names=_strings(rule.get("resourceNames")),
                   non_resource_urls=_strings(rule.get("nonResourceURLs")))

    def to_obj(self) -> dict[str, list[str]]:
        """The wire form (``omitempty`` fields left out; ``verbs`` always there)."""
        out: dict[str, list[str]] = {"verbs": list(self.verbs)}
        for key, values in (("apiGroups", self.api_groups), ("resources", self.resources),
                            ("resourceNames", self.resource_names),
                            ("nonResourceURLs", self.non_resource_urls)):
            if values:
                out[key] = list(values)
        return out


def rule(verbs: str, groups: str | None = None, resources: str = "", *, names: str = "",
         urls: str = "") -> PolicyRule:
    """``rbacv1helpers.NewRule(verbs...).Groups(...).Resources(...).Names(...)`` /
    ``.URLs(...)`` from space-separated words (a group of ``""`` is the core group: pass
    ``groups=""``; several groups: ``"apps extensions"``, the core group among them as
    ``'""'``)."""
    group_list: tuple[str, ...] = ()
    if groups is not None:
        group_list = tuple("" if g == '""' else g for g in groups.split()) or ("",)
    return PolicyRule(verbs=tuple(verbs.split()), api_groups=group_list,
                      resources=tuple(resources.split()), resource_names=tuple(names.split()),
                      non_resource_urls=tuple(urls.split()))


def rules_of(obj: Mapping[str, Any]) -> tuple[PolicyRule, ...]:
    """The rules of a Role or ClusterRole object."""
    rules = obj.get("rules")
    if not isinstance(rules, list):
        return ()
    return tuple(PolicyRule.from_obj(r) for r in rules)


# -- matching (evaluation_helpers.go) -------------------------------------------------------


def verb_matches(rule: PolicyRule, verb: str) -> bool:
    return any(v in (VERB_ALL, verb) for v in rule.verbs)


def api_group_matches(rule: PolicyRule, group: str) -> bool:
    return any(g in (API_GROUP_ALL, group) for g in rule.api_groups)


def resource_matches(rule: PolicyRule, combined_resource: str, subresource: str) -> bool:
    """``ResourceMatches``: ``*``, the exact ``resource`` or ``resource/subresource``, or
    ``*/subresource`` for a request of that subresource on any resource."""
    for resource in rule.resources:
        if resource in (RESOURCE_ALL, combined_resource):
            return True
        if subresource and len(resource) == len(subresource) + 2 and (
                resource.startswith("*/") and resource.endswith(subresource)):
            return True
    return False


def resource_name_matches(rule: PolicyRule, name: str) -> bool:
    """No ``resourceNames``: every name (and none: a list or a create)."""
    return not rule.resource_names or name in rule.resource_names


def non_resource_url_matches(rule: PolicyRule, path: str) -> bool:
    """``*``, the exact path, or a prefix ending in ``*``."""
    for url in rule.non_resource_urls:
        if url in (NON_RESOURCE_ALL, path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(attrs: Attributes, rule: PolicyRule) -> bool:
    """``RuleAllows``: whether ``rule`` grants the request ``attrs``."""
    if attrs.resource_request:
        combined = (f"{attrs.resource}/{attrs.subresource}" if attrs.subresource
                    else attrs.resource)
        return (verb_matches(rule, attrs.verb) and api_group_matches(rule, attrs.api_group)
                and resource_matches(rule, combined, attrs.subresource)
                and resource_name_matches(rule, attrs.name))
    return verb_matches(rule, attrs.verb) and non_resource_url_matches(rule, attrs.path)


def rules_allow(attrs: Attributes, rules: Iterable[PolicyRule]) -> bool:
    return any(rule_allows(attrs, r) for r in rules)


# -- coverage (policy_comparator.go) ---------------------------------------------------------


def breakdown_rule(rule: PolicyRule) -> list[PolicyRule]:
    """``BreakdownRule``: the rule as rules of at most one verb, resource and name."""
    out: list[PolicyRule] = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                names = rule.resource_names or ("",)
                out.extend(PolicyRule(verbs=(verb,), api_groups=(group,), resources=(resource,),
                                      resource_names=(n,) if n else ()) for n in names)
    out.extend(PolicyRule(verbs=(verb,), non_resource_urls=(url,))
               for url in rule.non_resource_urls for verb in rule.verbs)
    return out


def _resource_covers_all(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    if RESOURCE_ALL in owned or set(wanted) <= set(owned):
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path or "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def _non_resource_url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def _rule_covers(owner: PolicyRule, sub: PolicyRule) -> bool:
    """``ruleCovers``: whether ``owner`` grants all of the broken-down ``sub``."""
    verbs = VERB_ALL in owner.verbs or set(sub.verbs) <= set(owner.verbs)
    groups = API_GROUP_ALL in owner.api_groups or set(sub.api_groups) <= set(owner.api_groups)
    urls = all(any(_non_resource_url_covers(o, p) for o in owner.non_resource_urls)
               for p in sub.non_resource_urls)
    if not sub.resource_names:
        names = not owner.resource_names
    else:
        names = not owner.resource_names or set(sub.resource_names) <= set(owner.resource_names)
    return (verbs and groups and _resource_covers_all(owner.resources, sub.resources)
            and names and urls)


def covers(owner_rules: Sequence[PolicyRule], servant_rules: Iterable[PolicyRule]
           ) -> tuple[bool, list[PolicyRule]]:
    """``Covers``: whether ``owner_rules`` grant everything ``servant_rules`` do, and the
    broken-down rules they do not grant."""
    uncovered = [sub for servant in servant_rules for sub in breakdown_rule(servant)
                 if not any(_rule_covers(owner, sub) for owner in owner_rules)]
    return not uncovered, uncovered


def compact_rules(rules: Iterable[PolicyRule]) -> list[PolicyRule]:
    """``CompactRules``: rules of one group and one resource and nothing but verbs are
    merged into one rule per group/resource (their verbs in order)."""
    compacted: list[PolicyRule] = []
    simple: dict[tuple[str, str], list[str]] = {}
    for r in rules:
        if (not r.resource_names and not r.non_resource_urls and len(r.api_groups) == 1
                and len(r.resources) == 1):
            simple.setdefault((r.api_groups[0], r.resources[0]), []).extend(r.verbs)
        else:
            compacted.append(r)
    compacted.extend(PolicyRule(verbs=tuple(verbs), api_groups=(group,), resources=(resource,))
                     for (group, resource), verbs in simple.items())
    return compacted


def go_quote_list(values: Iterable[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def compact_string(rule: PolicyRule) -> str:
    """``CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}``."""
    parts = [f"{label}:{go_quote_list(values)}" for label, values in (
        ("APIGroups", rule.api_groups), ("Resources", rule.resources),
        ("NonResourceURLs", rule.non_resource_urls), ("ResourceNames", rule.resource_names),
        ("Verbs", rule.verbs)) if values]
    return "{" + ", ".join(parts) + "}"


# -- rule resolution (authorizer.RuleResolver) -------------------------------------------------


@dataclass
class RulesReview:
    """What a ``RuleResolver`` answers (upstream returns resource rules, non-resource rules,
    incomplete, error): the rules held, whether the list may lack some, and the errors met
    while resolving them (each one's text)."""

    resource_rules: list[PolicyRule] = field(default_factory=list)
    non_resource_rules: list[PolicyRule] = field(default_factory=list)
    incomplete: bool = False
    errors: list[str] = field(default_factory=list)

    def extend(self, other: RulesReview) -> None:
        """``union.NewRuleResolvers``: every resolver's rules, incomplete if any is."""
        self.resource_rules += other.resource_rules
        self.non_resource_rules += other.non_resource_rules
        self.incomplete = self.incomplete or other.incomplete
        self.errors += other.errors


class RuleResolver(Protocol):
    """``authorizer.RuleResolver``: the rules ``user`` holds in ``namespace``."""

    def rules_for(self, user: UserInfo, namespace: str) -> RulesReview: ...


def review_of(rules: Iterable[PolicyRule], errors: Sequence[str] = ()) -> RulesReview:
    """``RBACAuthorizer.RulesFor``: a rule with resources is a resource rule, one with
    non-resource URLs a non-resource rule (a rule with neither is neither)."""
    review = RulesReview(errors=list(errors))
    for r in rules:
        if r.resources:
            review.resource_rules.append(r)
        if r.non_resource_urls:
            review.non_resource_rules.append(r)
    return review


#: ``alwaysAllowAuthorizer.RulesFor``: everything
ALL_RULES = (rule("*", "*", "*"), rule("*", urls="*"))


class AllowAllRules:
    """The rules of ``--authorization-mode AlwaysAllow``."""

    def rules_for(self, user: UserInfo, namespace: str) -> RulesReview:
        return review_of(ALL_RULES)


class NoRules:
    """The rules of ``--authorization-mode AlwaysDeny``: none."""

    def rules_for(self, user: UserInfo, namespace: str) -> RulesReview:
        return RulesReview()


@dataclass
class RuleResolvers:
    """``union.NewRuleResolvers``."""

    resolvers: list[RuleResolver]

    def rules_for(self, user: UserInfo, namespace: str) -> RulesReview:
        review = RulesReview()
        for resolver in self.resolvers:
            review.extend(resolver.rules_for(user, namespace))
        return review


def aggregate_error(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several deduplicated
    in brackets."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for message in messages:
        if message not in seen:
            seen.append(message)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"
