"""Authentication: app-portal access (a hookgate portal session, read-only or
with Svix's capabilities), the token used through the SDK, logout, and
expire-all."""

import httpx
from svix.api import AppPortalAccessIn, ApplicationTokenExpireIn, EndpointIn, Svix, SvixOptions
from svix.models import AppPortalCapability

from check import eq, refused


def session_of(ctx, token):
    """The portal session `token` is, as API v1 shows it."""
    r = httpx.get(ctx["base"] + "/v1/portal-session", headers={"authorization": f"Bearer {token}"})
    eq(r.status_code, 200, "the session reads")
    return r.json()


def run(ctx):
    svix, app = ctx["svix"], ctx["app"]
    viewer = svix.authentication.app_portal_access(app, AppPortalAccessIn(read_only=True, expiry=3600))
    eq((viewer.token.startswith("hgp_"), f"#portal={viewer.token}" in viewer.url), (True, True), "a portal token and URL")
    eq(session_of(ctx, viewer.token)["capabilities"], ["view"], "read only is view")
    caps = [AppPortalCapability.VIEW_BASE, AppPortalCapability.VIEW_ENDPOINT_SECRET]
    secrets = svix.authentication.app_portal_access(app, AppPortalAccessIn(capabilities=caps))
    eq(sorted(session_of(ctx, secrets.token)["capabilities"]), ["read_secrets", "view"], "Svix's capabilities mapped")
    e = refused(lambda: svix.authentication.app_portal_access(app, AppPortalAccessIn(feature_flags=["beta"])), 422, "feature flags")
    eq(e.detail[0].loc, ["body", "featureFlags"], "the refused field")

    # The portal token drives the SDK within its tenant and capabilities.
    as_viewer = Svix(viewer.token, SvixOptions(server_url=ctx["base"], retry_schedule=[]))
    eq(as_viewer.application.get(app).id, app, "the viewer reads its application")
    denied = refused(lambda: as_viewer.endpoint.create(app, EndpointIn(url=ctx["receiver"])), 403, "a viewer may not write")
    eq((denied.code, "manage_endpoints" in denied.detail), ("forbidden", True), "the refusal names the capability")
    as_viewer.authentication.logout()
    refused(lambda: as_viewer.application.get(app), 401, "a logged-out token")
    svix.authentication.expire_all(app, ApplicationTokenExpireIn())
    as_secrets = Svix(secrets.token, SvixOptions(server_url=ctx["base"], retry_schedule=[]))
    refused(lambda: as_secrets.application.get(app), 401, "an expired-all token")
