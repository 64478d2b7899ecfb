"""The TokenRequest REST (``Registry.create_token``; cf. upstream's token_test.go and
the TokenRequest validation tests): defaults, refusals with upstream's messages and codes,
binding, and the tokens it answers with."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.registry import Registry, Target
from kubegc.registry.groups.core.token import TokenIssuer
from kubegc.tokens import JWTTokenGenerator, ServiceAccountKey
from kubegc.tokens.jws import b64decode

from ...conftest import manifest
from ...conftest import target as _target

ISSUER = "https://kubegc.test"


def target(registry: Registry, resource: str) -> Target:
    return (registry.target("", "v1", resource, "default") if resource == "serviceaccounts"
            else _target(registry, resource))


@pytest.fixture
async def issuing(registry: Registry, clock: ManualClock) -> Registry:
    registry.token_issuer = TokenIssuer(JWTTokenGenerator(ISSUER, ServiceAccountKey()),
                                        api_audiences=(ISSUER,), clock=clock)
    await registry.create(target(registry, "serviceaccounts"),
                          {"metadata": {"name": "robot"}})
    return registry


def payload(answer: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(b64decode(answer["status"]["token"].split(".")[1])))


def request(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}


async def test_a_token_request_is_answered_with_the_defaults(issuing: Registry,
                                                             clock: ManualClock) -> None:
    sa = await issuing.get(target(issuing, "serviceaccounts"), "robot")
    answer = await issuing.create_token("default", "robot", request())
    assert list(answer) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert answer["metadata"] == {"name": "robot", "namespace": "default",
                                  "uid": sa["metadata"]["uid"],
                                  "creationTimestamp": answer["metadata"]["creationTimestamp"]}
    assert answer["spec"] == {"audiences": [ISSUER], "expirationSeconds": 3600,
                              "boundObjectRef": None}
    claims = payload(answer)
    assert claims["iss"] == ISSUER and claims["exp"] - claims["iat"] == 3600
    assert claims["kubernetes.io"]["serviceaccount"] == {"name": "robot",
                                                         "uid": sa["metadata"]["uid"]}


@pytest.mark.parametrize("body, code, message", [
    (request(expirationSeconds=60), 422,
     'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
     "value: 60: may not specify a duration less than 10 minutes"),
    (request(expirationSeconds=(1 << 32) + 1), 422,
     "may not specify a duration larger than 2^32 seconds"),
    (request(expirationSeconds="x"), 400,
     'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot '
     "unmarshal string into Go struct field TokenRequestSpec.spec.expirationSeconds of type "
     "int64"),
    ({**request(), "metadata": {"name": "other"}}, 422,
     'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: '
     '"other": must match the service account name if specified'),
    ({**request(), "metadata": {"uid": "nope"}}, 409,
     'Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "robot": the UID '
     "in the token request (nope) does not match the UID of the service account"),
    (request(boundObjectRef={"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}), 400,
     "cannot bind token to object of type /v1, Kind=ConfigMap"),
    (request(boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "gone"}), 404,
     'pods "gone" not found'),
], ids=["too-short", "too-long", "wrong-type", "other-name", "other-uid", "unbindable-kind",
        "bound-pod-missing"])
async def test_refusals(issuing: Registry, body: dict[str, Any], code: int,
                        message: str) -> None:
    with pytest.raises(StatusError) as caught:
        await issuing.create_token("default", "robot", body)
    assert caught.value.code == code
    assert message in caught.value.message


async def test_an_unknown_service_account_is_not_found(issuing: Registry) -> None:
    with pytest.raises(StatusError, match='serviceaccounts "ghost" not found'):
        await issuing.create_token("default", "ghost", request())


async def test_a_pod_bound_token_names_the_pod_and_its_node(issuing: Registry) -> None:
    pods, nodes = target(issuing, "pods"), issuing.target("", "v1", "nodes")
    node = await issuing.create(nodes, {"metadata": {"name": "n1"}})
    pod = manifest("pods", "web")
    pod["spec"].update(serviceAccountName="robot", nodeName="n1")
    pod = await issuing.create(pods, pod)
    other = manifest("pods", "other")
    await issuing.create(pods, other)
    answer = await issuing.create_token("default", "robot", request(
        boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "web"}))
    private = payload(answer)["kubernetes.io"]
    assert private["pod"] == {"name": "web", "uid": pod["metadata"]["uid"]}
    assert private["node"] == {"name": "n1", "uid": node["metadata"]["uid"]}
    with pytest.raises(StatusError, match=re.escape(
            'cannot bind token for serviceaccount "robot" to pod running with different '
            "serviceaccount name.")):
        await issuing.create_token("default", "robot", request(
            boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "other"}))
    with pytest.raises(StatusError) as caught:
        await issuing.create_token("default", "robot", request(
            boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "web", "uid": "x"}))
    assert caught.value.code == 409 and caught.value.message == (
        'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference '
        "(x) does not match the UID in record. The object might have been deleted and then "
        "recreated")


async def test_the_kubelets_pod_token_is_extended_and_warned_after(issuing: Registry) -> None:
    """``--service-account-extend-token-expiration``: 3607 s pod-bound tokens for the API
    live a year, with ``warnafter`` at the asked expiry; the answer says the asked one."""
    pod = manifest("pods", "web")
    pod["spec"]["serviceAccountName"] = "robot"
    await issuing.create(target(issuing, "pods"), pod)
    answer = await issuing.create_token("default", "robot", request(
        expirationSeconds=3607, boundObjectRef={"kind": "Pod", "apiVersion": "v1",
                                                "name": "web"}))
    claims = payload(answer)
    assert claims["exp"] - claims["iat"] == 365 * 24 * 3600
    assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607
    assert answer["spec"]["expirationSeconds"] == 3607


async def test_without_an_issuer_the_subresource_is_not_served(registry: Registry) -> None:
    with pytest.raises(StatusError) as caught:
        await registry.create_token("default", "default", request())
    assert caught.value.code == 404
