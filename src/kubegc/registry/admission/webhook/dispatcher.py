"""The two webhook admission plugins' dispatchers (cf. webhook/validating/dispatcher.go and
webhook/mutating/dispatcher.go): validating webhooks are called in parallel and the first
refusal wins; mutating webhooks one after another, each one's JSONPatch applied before the
next is called, and those with ``reinvocationPolicy: IfNeeded`` called once more when a
later one changed the object.

A webhook that cannot be asked fails the request with 500 ``failed calling webhook "x":
...`` under ``failurePolicy: Fail`` and is skipped under ``Ignore``; a refusal is
``admission webhook "x" denied the request: <its message>``; a dry-run request is refused
by a webhook whose ``sideEffects`` are neither ``None`` nor ``NoneOnDryRun``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kubegc.api import errors
from kubegc.api.errors import StatusError
from kubegc.api.types import Obj, clone
from kubegc.api.warning import add_warning
from kubegc.registry.admission.webhook.accessors import Webhook
from kubegc.registry.admission.webhook.client import CallingWebhookError, WebhookClient
from kubegc.registry.admission.webhook.matching import (
    NamespaceGetter,
    exempt,
    matched_version,
    matches_namespace_selector,
    matches_object_selector,
)
from kubegc.registry.admission.webhook.review import (
    InvalidResponse,
    Result,
    admission_review,
    review_version,
    to_status_error,
    verify_admission_response,
)
from kubegc.registry.fieldmanager.json_patch import apply_json_patch
from kubegc.registry.generic.attributes import Attributes

log = logging.getLogger(__name__)


def _at_version(a: Attributes, obj: Obj | None, version: str) -> Obj | None:
    if obj is None:
        return None
    if version == a.obj_version:
        return clone(obj)
    t = a.t
    return t.from_storage(t.to_storage(clone(obj)), version)


class Dispatcher:
    """Ownership: the registry's ``Admission`` holds one; it reads the configurations at
    each call (the list is replaced, never edited, on a configuration's write)."""

    def __init__(self, client: WebhookClient, get_namespace: NamespaceGetter | None) -> None:
        self.client = client
        self.get_namespace = get_namespace

    async def _invocations(self, hooks: tuple[Webhook, ...], a: Attributes
                           ) -> list[tuple[Webhook, str]]:
        """``ShouldCallHook`` for each hook: (hook, version) of those to call."""
        out: list[tuple[Webhook, str]] = []
        for hook in hooks:
            version = matched_version(hook, a)
            if version is None or not matches_object_selector(hook, a):
                continue
            if not await matches_namespace_selector(hook, a, self.get_namespace):
                continue
            out.append((hook, version))
        return out

    async def _ask(self, hook: Webhook, a: Attributes, version: str) -> Result:
        """``callHook``: the verified answer (raises ``CallingWebhookError`` or the
        dry-run refusal)."""
        if a.dry_run and hook.side_effects not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        review_api_version = review_version(hook.admission_review_versions)
        if review_api_version is None:
            raise CallingWebhookError(hook.name, (
                "could not create admission objects: webhook does not accept known "
                f"AdmissionReview versions {list(hook.admission_review_versions)}"))
        uid, review = admission_review(a, version, _at_version(a, a.obj, version),
                                       _at_version(a, a.old, version),
                                       review_api_version=review_api_version)
        answer = await self.client.call(hook, review)
        try:
            result = verify_admission_response(uid, hook.mutating, answer,
                                               api_version=review_api_version)
        except InvalidResponse as e:
            raise CallingWebhookError(hook.name, f"received invalid webhook response: {e}",
                                      code=503) from None
        for text in result.warnings:
            add_warning(text)
        if not result.allowed:
            raise to_status_error(hook.name, result.status)
        return result

    # -- validating ----------------------------------------------------------------------

    async def validate(self, hooks: tuple[Webhook, ...], a: Attributes) -> None:
        """``validatingDispatcher.Dispatch``."""
        if not hooks or exempt(a):
            return
        invocations = await self._invocations(hooks, a)
        if not invocations:
            return
        outcomes = await asyncio.gather(
            *(self._validate_one(hook, a, version) for hook, version in invocations))
        for failure in outcomes:
            if failure is not None:
                raise failure

    async def _validate_one(self, hook: Webhook, a: Attributes, version: str
                            ) -> StatusError | None:
        try:
            await self._ask(hook, a, version)
        except CallingWebhookError as e:
            if hook.failure_policy == "Ignore":
                log.warning("Failed calling webhook, failing open %s: %s", hook.name, e)
                return None
            return errors.internal_error(str(e))
        except StatusError as e:
            return e
        return None

    # -- mutating ------------------------------------------------------------------------

    async def admit(self, hooks: tuple[Webhook, ...], a: Attributes) -> None:
        """``mutatingDispatcher.Dispatch``, with upstream's one reinvocation round: a
        patched object replaces ``a.obj`` (``a.mutated``)."""
        if not hooks or exempt(a):
            return
        reinvocable: set[str] = set()
        reinvoke: set[str] = set()
        for hook, version in await self._invocations(hooks, a):
            if await self._admit_one(hook, a, version):
                reinvoke |= reinvocable
            if hook.reinvocation_policy == "IfNeeded":
                reinvocable.add(hook.uid)
        if not reinvoke:
            return
        for hook, version in await self._invocations(hooks, a):
            if hook.uid in reinvoke:
                await self._admit_one(hook, a, version)

    async def _admit_one(self, hook: Webhook, a: Attributes, version: str) -> bool:
        """Call one mutating webhook; whether its patch changed the object."""
        try:
            result = await self._ask(hook, a, version)
        except CallingWebhookError as e:
            if hook.failure_policy == "Ignore":
                log.warning("Failed calling webhook, failing open %s: %s", hook.name, e)
                return False
            raise errors.internal_error(str(e)) from None
        if not result.patch:
            return False
        if a.obj is None:
            raise errors.internal_error(
                f'admission webhook "{hook.name}" attempted to modify the object, which is '
                "not supported for this operation")
        return self._apply(a, result.patch, version)

    def _apply(self, a: Attributes, patch: list[dict[str, Any]], version: str) -> bool:
        before = _at_version(a, a.obj, version)
        if before is None:
            return False
        try:
            patched = apply_json_patch(before, patch)
        except StatusError as e:
            raise errors.internal_error(e.message) from None
        except (ValueError, TypeError, KeyError, IndexError) as e:  # a malformed operation
            raise errors.internal_error(f"{type(e).__name__}: {e}") from None
        if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
            raise errors.internal_error("the patched object is not an object")
        if (patched.get("apiVersion"), patched.get("kind")) != (
                before.get("apiVersion"), before.get("kind")):
            raise errors.internal_error(
                "the patched object's apiVersion or kind differs from the object's")
        if patched == before:
            return False
        if version != a.obj_version:
            patched = a.t.from_storage(a.t.to_storage(patched), a.obj_version)
        a.obj = patched
        a.mutated = True
        return True


__all__ = ["Dispatcher"]
