// One endpoint: its name, uid, destination (HTTP, or a broker's or AWS
// service's kind, target and who it connects as; never a secret), channels, filter, metadata, headers (sensitive
// values as the API masks them), signature schemes and header names (with the
// `v1a` public key a receiver verifies with), state, breaker, limits, plugin
// binding and effective policy; its delivery history (endpoint_stats.js); the edit form
// (a JSON merge patch of only the fields changed, the API's 422 shown beside
// the field it names); rotate secret, disable or enable, and reset the breaker;
// send a catalog type's example to it as a test event. A portal session sees
// only the controls its capabilities allow (`data-needs` in the page).

import { $, api, can, tenantPath, el, definitions, duration, pressed, showError, showNotice, when } from "./api.js";
import { showFieldError } from "./forms.js";
import { breakerText, endpointName } from "./endpoints.js";
import { endpointForm } from "./endpoint_form.js";
import { filterText } from "./filter_editor.js";
import { destinationText } from "./destination_picker.js";
import { showStats, sinceOf } from "./endpoint_stats.js";
import { allEventTypes } from "./event_types.js";

/** The endpoint shown. */
let current = null;
const form = $("endpoint-edit");
const fields = endpointForm(form);
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

/** `[name, value, note]` triples as a list, or "none". */
function pairList(pairs, kind) {
  if (!pairs.length) return "none";
  return el(
    "ul",
    { class: "pairs", "data-list": kind },
    ...pairs.map(([name, value, note]) => el("li", {}, el("code", { text: name }), `: ${value}`, note ? el("small", { text: ` ${note}` }) : null)),
  );
}

/** The endpoint's own headers; the API masks sensitive values before they reach the page. */
function headerList(ep) {
  const sensitive = ep.sensitive_headers || [];
  const pairs = Object.entries(ep.headers || {}).map(([name, value]) => [name, value, sensitive.includes(name) ? "(sensitive)" : null]);
  return pairList(pairs, "headers");
}

/** The signature setting in words: the schemes, and the header names they go under. */
export function signatureText(signature) {
  const schemes = (signature?.schemes || ["v1"]).join(" and ");
  const names = { webhook: "webhook-*", svix: "svix-*", both: "webhook-* and svix-*" }[signature?.headers || "webhook"];
  return `${schemes} under ${names}`;
}

/** The `v1a` public key, read from the endpoint's secrets; "none" without `v1a`. */
async function publicKeyFact(ep) {
  const box = $("endpoint-public-key");
  if (!box) return;
  if (!(ep.signature?.schemes || []).includes("v1a")) {
    box.textContent = "none (the endpoint does not sign with v1a)";
    return;
  }
  if (!can("read_secrets")) {
    box.textContent = "not shown (this session may not read secrets)";
    return;
  }
  try {
    const secrets = await api(`${path()}/secret`);
    box.replaceChildren(el("code", { text: secrets.public_key || "none" }));
  } catch (error) {
    box.textContent = `not readable: ${error.message || error.code}`;
  }
}

function render(ep) {
  current = ep;
  $("endpoint-title").textContent = endpointName(ep);
  $("endpoint-facts").replaceChildren(
    ...definitions([
      ["Id", ep.id],
      ["Uid", ep.uid],
      ["URL", ep.url],
      ["Destination", destinationText(ep.destination)],
      ["State", ep.disabled ? `disabled${ep.disabled_reason ? ` (${ep.disabled_reason})` : ""}` : "enabled"],
      ["Breaker", breakerText(ep.breaker)],
      ["Event types", ep.event_types.join(", ")],
      ["Channels", (ep.channels || []).join(", ") || "none: every event its types match"],
      ["Filter", ep.filter == null ? "none" : el("pre", { class: "json", "data-json": "filter", text: filterText(ep.filter) })],
      ["Metadata", pairList(Object.entries(ep.metadata || {}), "metadata")],
      ["Headers", headerList(ep)],
      ["Signature", signatureText(ep.signature)],
      ["Public key (v1a)", el("span", { id: "endpoint-public-key", text: "…" })],
      ["Max in flight", String(ep.max_in_flight)],
      ["Rate limit", ep.rate_limit_per_s ? `${ep.rate_limit_per_s}/s` : "none"],
      ["Timeout", duration(ep.timeout_ms)],
      ["Plugin", ep.plugin || "none (the policy decides)"],
      ["Created", when(ep.created_at)],
    ]),
  );
  $("endpoint-policy").replaceChildren(...definitions(policyPairs(ep.policy_effective)));
  $("endpoint-toggle").textContent = ep.disabled ? "Enable" : "Disable";
  publicKeyFact(ep);
}

/** Fills the edit form from the endpoint as the tenant set it. */
function fill(ep) {
  fields.fill(ep);
  showFieldError(form, null);
}

export async function show(id, _polled, isCurrent) {
  current = null;
  $("endpoint-secret").hidden = true;
  for (const list of ["endpoint-facts", "endpoint-policy", "endpoint-stats"]) $(list).replaceChildren();
  $("endpoint-title").textContent = `Endpoint ${id}`;
  const base = `${tenantPath()}/endpoints/${encodeURIComponent(id)}`;
  const ep = await api(base);
  if (!isCurrent()) return;
  render(ep);
  fill(ep);
  if (can("manage_endpoints")) exampleChoices(isCurrent).catch((error) => isCurrent() && showError(error));
  // The history comes after the rest; its failure leaves the rest in place.
  statsOf = { base, isCurrent };
  showEndpointStats();
}

/** The endpoint shown and its page's liveness, for a new time range. */
let statsOf = null;
const statsRange = $("endpoint-stats-range");

/** The shown endpoint's history over the chosen range. */
function showEndpointStats() {
  if (!statsOf) return;
  const { base, isCurrent } = statsOf;
  showStats($("endpoint-stats"), base, sinceOf(statsRange), isCurrent).catch((error) => isCurrent() && showError(error));
}

// A new range is read at once.
statsRange.addEventListener("change", showEndpointStats);

const sendForm = $("send-example");
const sendButton = sendForm.querySelector("button[type=submit]");

/** Fills the test-event picker with the catalog's types that have an example (archived ones left out). */
async function exampleChoices(isCurrent) {
  const select = sendForm.elements.event_type;
  const chosen = select.value;
  const types = (await allEventTypes()).filter((t) => !t.archived && t.example != null);
  if (!isCurrent()) return;
  select.replaceChildren(...types.map((t) => el("option", { value: t.name, text: t.name })));
  if (types.some((t) => t.name === chosen)) select.value = chosen;
  select.disabled = sendButton.disabled = types.length === 0;
  $("send-example-note").textContent = types.length
    ? "The type's example from the catalog, delivered to this endpoint alone and marked as a test."
    : "No type of the catalog has an example to send: the admin adds examples through the API.";
}

sendForm.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(sendButton, async () => {
    const type = sendForm.elements.event_type.value;
    const answer = await api(`${path()}/send-example`, "POST", { event_type: type });
    const delivery = answer.deliveries.length ? `; its delivery is ${answer.deliveries[0].id}` : "";
    showNotice(`Sent the example of ${type} to ${endpointName(current)} as test event ${answer.id}${delivery}.`);
  });
});

const saveButton = form.querySelector("button[type=submit]");
form.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(saveButton, save);
});

async function save() {
  try {
    const ep = await api(path(), "PATCH", fields.patchBody(), "application/merge-patch+json");
    showFieldError(form, null);
    render(ep);
    fill(ep);
    showNotice(`Saved ${endpointName(ep)}.`);
  } catch (error) {
    showFieldError(form, error);
  }
}

$("endpoint-toggle").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    const ep = await api(path(), "PATCH", { disabled: !current.disabled }, "application/merge-patch+json");
    render(ep);
    showNotice(ep.disabled ? `${endpointName(ep)} is disabled: it gets nothing new.` : `${endpointName(ep)} is enabled.`);
  }),
);

$("endpoint-reset").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    const ep = await api(`${path()}/breaker/reset`, "POST");
    render(ep);
    showNotice(`The breaker of ${endpointName(ep)} is ${ep.breaker.state}.`);
  }),
);

$("endpoint-rotate").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    const answer = await api(`${path()}/rotate-secret`, "POST", {});
    const box = $("endpoint-secret");
    const old = answer.secrets.filter((s) => s.expires_at).map((s) => `the old one signs until ${when(s.expires_at)}`);
    const key = answer.public_key ? ` New v1a public key: ${answer.public_key}.` : "";
    box.textContent = `New signing secret: ${answer.secret}${old.length ? `; ${old.join("; ")}` : ""}.${key}`;
    box.hidden = false;
    showNotice("Secret rotated.");
  }),
);
