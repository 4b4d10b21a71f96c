// One endpoint: its state, breaker, limits, plugin binding and effective
// policy; the edit form (a JSON merge patch, the API's 422 shown beside the
// field it names); rotate secret, disable or enable, and reset the breaker.

import { $, api, tenantPath, el, definitions, duration, pressed, showNotice, when } from "./api.js";
import { fillPolicy, policyPatch, showFieldError } from "./forms.js";
import { breakerText, endpointFields, fieldValue, FIELD_NAMES } from "./endpoints.js";

let current = null;
const form = $("endpoint-edit");
endpointFields(form);
form.append(el("button", { type: "submit", text: "Save changes" }));

const path = () => `${tenantPath()}/endpoints/${encodeURIComponent(current.id)}`;

/** The effective policy as name/value pairs, durations readable. */
function policyPairs(policy) {
  return Object.entries(policy).map(([name, value]) => [
    name,
    name.endsWith("_ms") ? duration(value) : Array.isArray(value) ? value.join(", ") || "none" : String(value),
  ]);
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
      ["Timeout", duration(ep.timeout_ms)],
      ["Plugin", ep.plugin || "none (the policy decides)"],
      ["Created", when(ep.created_at)],
    ]),
  );
  $("endpoint-policy").replaceChildren(...definitions(policyPairs(ep.policy_effective)));
  $("endpoint-toggle").textContent = ep.disabled ? "Enable" : "Disable";
}

/** Fills the edit form from the endpoint as the tenant set it. */
function fill(ep) {
  for (const name of FIELD_NAMES) {
    const value = ep[name];
    form.elements[name].value = value == null ? "" : Array.isArray(value) ? value.join(", ") : String(value);
  }
  fillPolicy(form, ep.policy);
  showFieldError(form, null);
}

export async function show(id) {
  $("endpoint-secret").hidden = true;
  const ep = await api(`${tenantPath()}/endpoints/${encodeURIComponent(id)}`);
  render(ep);
  fill(ep);
}

/** The merge patch: every field as the form has it (an emptied one resets). */
function patchBody() {
  const body = {};
  for (const name of FIELD_NAMES) {
    const value = fieldValue(form, name);
    const was = current[name];
    if (value !== undefined) body[name] = value;
    else if (was !== undefined && was !== null && name !== "url") body[name] = null;
  }
  const policy = policyPatch(form, current.policy);
  if (policy) body.policy = policy;
  return body;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const ep = await api(path(), "PATCH", patchBody(), "application/merge-patch+json");
    showFieldError(form, null);
    render(ep);
    fill(ep);
    showNotice(`Saved ${ep.id}.`);
  } catch (error) {
    showFieldError(form, error);
  }
});

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
