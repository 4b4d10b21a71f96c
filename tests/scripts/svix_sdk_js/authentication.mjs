// Authentication: app-portal access (a hookgate portal session, read-only or
// with Svix's capabilities), the token used through the SDK, logout, and
// expire-all.
import { AppPortalCapability } from "svix";

import { client, eq, raw, refused, shaped, sorted } from "./check.mjs";

/** The portal session `token` is, as hookgate's API v1 shows it (as in Python). */
async function sessionOf(ctx, token) {
  const [code, session] = await raw({ ...ctx, token }, "GET", "/v1/portal-session");
  eq(code, 200, "the session reads");
  return session;
}

export async function run(ctx) {
  const { svix, status, app } = ctx;
  const viewer = shaped("AppPortalAccessOut", await svix.authentication.appPortalAccess(app, { readOnly: true, expiry: 3600 }));
  eq([viewer.token.startsWith("hgp_"), viewer.url.includes(`#portal=${viewer.token}`)], [true, true], "a portal token and URL");
  eq((await sessionOf(ctx, viewer.token)).capabilities, ["view"], "read only is view");
  const capabilities = [AppPortalCapability.ViewBase, AppPortalCapability.ViewEndpointSecret];
  const secrets = await svix.authentication.appPortalAccess(app, { capabilities });
  eq(sorted((await sessionOf(ctx, secrets.token)).capabilities), ["read_secrets", "view"], "Svix's capabilities mapped");
  const e = await refused(() => svix.authentication.appPortalAccess(app, { featureFlags: ["beta"] }), 422, "feature flags");
  eq(e.detail[0].loc, ["body", "featureFlags"], "the refused field");

  // The portal token drives the SDK within its tenant and capabilities.
  const asViewer = client(ctx.base, viewer.token).svix;
  eq((await asViewer.application.get(app)).id, app, "the viewer reads its application");
  const denied = await refused(() => asViewer.endpoint.create(app, { url: ctx.receiver }), 403, "a viewer may not write");
  eq([denied.code, denied.detail.includes("manage_endpoints")], ["forbidden", true], "the refusal names the capability");
  await asViewer.authentication.logout();
  await refused(() => asViewer.application.get(app), 401, "a logged-out token");
  await svix.authentication.expireAll(app, {});
  eq(status(), 204, "every session expired");
  const asSecrets = client(ctx.base, secrets.token).svix;
  await refused(() => asSecrets.application.get(app), 401, "an expired-all token");
}
