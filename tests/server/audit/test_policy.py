"""The audit policy as upstream's checker evaluates it (``policy/checker_test.go``'s
cases) and as its reader refuses bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.api.auth import Attributes, UserInfo
from kubegc.server.audit.policy import Level, PolicyError, Stage, load_policy

ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))


def attrs(verb: str = "get", resource: str = "pods", subresource: str = "",
          namespace: str = "default", name: str = "p", group: str = "") -> Attributes:
    return Attributes(user=ALICE, verb=verb, namespace=namespace, api_group=group,
                      api_version="v1", resource=resource, subresource=subresource, name=name)


def policy(tmp_path: Path, rules: str, extra: str = "") -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(f"apiVersion: audit.k8s.io/v1\nkind: Policy\n{extra}rules:\n{rules}")
    return path


@pytest.mark.parametrize(("rule", "request_attrs", "level"), [
    ("- level: Metadata\n  users: [alice]", attrs(), Level.METADATA),
    ("- level: Metadata\n  users: [bob]", attrs(), Level.NONE),
    ("- level: Request\n  userGroups: [devs]", attrs(), Level.REQUEST),
    ("- level: Request\n  verbs: [delete]", attrs(), Level.NONE),
    ("- level: Request\n  resources: [{resources: ['pods/*']}]", attrs(subresource="log"),
     Level.REQUEST),
    ("- level: Request\n  resources: [{resources: ['*/log']}]", attrs(subresource="log"),
     Level.REQUEST),
    ("- level: Request\n  resources: [{resources: [pods]}]", attrs(subresource="log"),
     Level.NONE),
    ("- level: Request\n  resources: [{resources: [pods], resourceNames: [q]}]", attrs(),
     Level.NONE),
    ("- level: Request\n  resources: [{group: apps}]", attrs(), Level.NONE),
    ("- level: Request\n  namespaces: ['']", attrs(namespace=""), Level.REQUEST),
    ("- level: Request\n  nonResourceURLs: ['/healthz*']", attrs(), Level.NONE),
])
def test_the_first_matching_rule_decides(tmp_path: Path, rule: str,
                                        request_attrs: Attributes, level: Level) -> None:
    assert load_policy(policy(tmp_path, rule)).evaluate(request_attrs).level is level


def test_non_resource_urls_match_a_prefix(tmp_path: Path) -> None:
    loaded = load_policy(policy(tmp_path, "- level: Metadata\n  nonResourceURLs: ['/readyz*']"))
    req = Attributes(user=ALICE, verb="get", resource_request=False, path="/readyz/ping")
    assert loaded.evaluate(req).level is Level.METADATA


def test_omitted_stages_are_the_policys_and_the_rules(tmp_path: Path) -> None:
    loaded = load_policy(policy(tmp_path, "- level: Metadata\n  omitStages: [ResponseStarted]",
                                "omitStages: [RequestReceived]\n"))
    assert loaded.evaluate(attrs()).omit_stages == {Stage.REQUEST_RECEIVED,
                                                    Stage.RESPONSE_STARTED}


def test_a_request_without_a_user_matches_no_user_rule(tmp_path: Path) -> None:
    loaded = load_policy(policy(tmp_path, "- level: Request\n  userGroups: [devs]\n"
                                          "- level: Metadata"))
    assert loaded.evaluate(None).level is Level.METADATA


@pytest.mark.parametrize(("rules", "message"), [
    ("[]", "loaded illegal policy with 0 rules"),
    ("- level: Everything", "rules[0].level: Unsupported value: 'Everything'"),
    ("- level: Metadata\n  nonResourceURLs: ['/x']\n  namespaces: [a]",
     "rules cannot apply to both regular resources and non-resource URLs"),
    ("- level: Metadata\n  omitStages: [Later]", "rules[0].omitStages[0]: Unsupported value"),
])
def test_a_bad_policy_is_refused_with_upstreams_reason(tmp_path: Path, rules: str,
                                                       message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: {rules}\n"
                    if rules == "[]" else
                    f"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n{rules}\n")
    with pytest.raises(PolicyError, match=message.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(")):
        load_policy(path)


def test_a_policy_of_another_kind_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: []\n")
    with pytest.raises(PolicyError, match="unknown group version"):
        load_policy(path)
