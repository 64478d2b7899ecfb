"""``Authentication.authenticate_token`` (bearertoken over the token union, cf.
k8s.io/apiserver's bearertoken and token/union): who answers, for which audiences, and the
error a refused token reports (a TokenReview's ``status.error``)."""

from __future__ import annotations

from kubegc.api.auth import UserInfo
from kubegc.api.authenticator import AuthenticationError, Response
from kubegc.server.authn import Authentication, static_token

ALICE = UserInfo("alice")


async def refusing(token: str) -> Response | None:
    if token.startswith("jwt"):
        raise AuthenticationError("service account token has expired")
    return None


async def aware(token: str) -> Response | None:
    return Response(UserInfo("robot"), ("vault",)) if token == "robot" else None


def authentication() -> Authentication:
    return Authentication(token_authenticators=[static_token("s3cret", ALICE), refusing, aware],
                          api_audiences=("api",))


async def test_a_known_token_is_its_user_in_system_authenticated() -> None:
    result = await authentication().authenticate_token("s3cret")
    assert result.response is not None and result.error == ""
    assert result.response.user.groups == ("system:authenticated",)
    assert result.response.audiences == ("api",)
    # a static token is for the API's audiences only
    assert (await authentication().authenticate_token("s3cret", ("vault",))).response is None
    robot = await authentication().authenticate_token("robot", ("vault",))
    assert robot.response is not None and robot.response.audiences == ("vault",)


async def test_a_refused_token_reports_upstreams_aggregate() -> None:
    assert (await authentication().authenticate_token("nobody")).error == (
        "invalid bearer token")
    assert (await authentication().authenticate_token("jwt.x.y")).error == (
        "[invalid bearer token, service account token has expired]")


async def test_without_api_audiences_no_audience_is_asked_for() -> None:
    plain = Authentication(token_authenticators=[static_token("s3cret", ALICE)])
    result = await plain.authenticate_token("s3cret")
    assert result.response is not None and result.response.audiences == ()
