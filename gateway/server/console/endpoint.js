// One endpoint: its state, breaker, limits, plugin binding and effective
// policy; the edit form (a JSON merge patch, the API's 422 shown beside the
// field it names; only the fields changed are sent); rotate secret, disable
// or enable, and reset the breaker.

import { $, api, tenantPath, el, definitions, duration, pressed, showNotice, when } from "./api.js";
import { fillPolicy, policyPatch, showFieldError } from "./forms.js";
import { breakerText, endpointFields, fieldValue, FIELD_NAMES } from "./endpoints.js";

/** The endpoint shown, and the text the form was filled with. */
let current = null;
let shown = {};
const form = $("endpoint-edit");
endpointFields(form);
form.append(el("button", { type: "submit", text: "Save changes" }));

/** The shown endpoint's API path; the actions need one to be loaded. */
function path() {
  if (!current) throw { code: "not_loaded", message: "The endpoint is not loaded; open it from the list" };
  return `${tenantPath()}/endpoints/${encodeURIComponent(current.id)}`;
}

/** The effective policy as name/value pairs, durations readable. */
function policyPairs(policy) {
  const text = (name, value) => (name.endsWith("_ms") ? duration(value) : String(value));
  return Object.entries(policy).map(([name, value]) => [
    name,
    Array.isArray(value) ? value.map((v) => text(name, v)).join(", ") || "none" : text(name, value),
  ]);
}

/** The endpoint's own headers, one `name: value` each; the gateway masks
 * sensitive values before they reach the page. */
function headersText(headers) {
  const pairs = Object.entries(headers || {});
  return pairs.length ? pairs.map(([name, value]) => `${name}: ${value}`).join("; ") : "none";
}

function render(ep) {
  current = ep;
  $("endpoint-title").textContent = `Endpoint ${ep.id}`;
  $("endpoint-facts").replaceChildren(
    ...definitions([
      ["URL", ep.url],
      ["State", ep.disabled ? `disabled${ep.disabled_reason ? ` (${ep.disabled_reason})` : ""}` : "enabled"],
      ["Breaker", breakerText(ep.breaker)],
      ["Event types", ep.event_types.join(", ")],
      ["Max in flight", String(ep.max_in_flight)],
      ["Rate limit", ep.rate_limit_per_s ? `${ep.rate_limit_per_s}/s` : "none"],
      ["Headers", headersText(ep.headers)],
      ["Timeout", duration(ep.timeout_ms)],
      ["Plugin", ep.plugin || "none (the policy decides)"],
      ["Created", when(ep.created_at)],
    ]),
  );
  $("endpoint-policy").replaceChildren(...definitions(policyPairs(ep.policy_effective)));
  $("endpoint-toggle").textContent = ep.disabled ? "Enable" : "Disable";
}

/** Fills the edit form from the endpoint as the tenant set it, noting the text put in each field. */
function fill(ep) {
  shown = {};
  for (const name of FIELD_NAMES) {
    const value = ep[name];
    const text = value == null ? "" : Array.isArray(value) ? value.join(", ") : String(value);
    form.elements[name].value = text;
    shown[name] = text;
  }
  Object.assign(shown, fillPolicy(form, ep.policy));
  showFieldError(form, null);
}

export async function show(id, _polled, isCurrent) {
  current = null;
  $("endpoint-secret").hidden = true;
  for (const list of ["endpoint-facts", "endpoint-policy"]) $(list).replaceChildren();
  $("endpoint-title").textContent = `Endpoint ${id}`;
  const ep = await api(`${tenantPath()}/endpoints/${encodeURIComponent(id)}`);
  if (!isCurrent()) return;
  render(ep);
  fill(ep);
}

/**
 * The merge patch: only the fields changed since the form was filled, so a
 * change made elsewhere meanwhile stays. An emptied field is null: its default.
 */
function patchBody() {
  const body = {};
  for (const name of FIELD_NAMES) {
    if (form.elements[name].value.trim() === shown[name]) continue;
    const value = fieldValue(form, name);
    body[name] = value === undefined ? null : value;
  }
  const policy = policyPatch(form, shown);
  if (policy) body.policy = policy;
  return body;
}

const saveButton = form.querySelector("button[type=submit]");
form.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(saveButton, save);
});

async function save() {
  try {
    const ep = await api(path(), "PATCH", patchBody(), "application/merge-patch+json");
    showFieldError(form, null);
    render(ep);
    fill(ep);
    showNotice(`Saved ${ep.id}.`);
  } catch (error) {
    showFieldError(form, error);
  }
}

$("endpoint-toggle").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    const ep = await api(path(), "PATCH", { disabled: !current.disabled }, "application/merge-patch+json");
    render(ep);
    showNotice(ep.disabled ? `${ep.id} is disabled: it gets nothing new.` : `${ep.id} is enabled.`);
  }),
);

$("endpoint-reset").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    const ep = await api(`${path()}/breaker/reset`, "POST");
    render(ep);
    showNotice(`The breaker of ${ep.id} is ${ep.breaker.state}.`);
  }),
);

$("endpoint-rotate").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    const answer = await api(`${path()}/rotate-secret`, "POST", {});
    const box = $("endpoint-secret");
    const old = answer.secrets.filter((s) => s.expires_at).map((s) => `the old one signs until ${when(s.expires_at)}`);
    box.textContent = `New signing secret: ${answer.secret}${old.length ? `; ${old.join("; ")}` : ""}.`;
    box.hidden = false;
    showNotice("Secret rotated.");
  }),
);
