// Endpoints: the tenant's list with state, breaker and limits, and the form
// that creates one. An endpoint's own page (endpoint.js) edits it.

import { $, api, allPages, MOST_LISTED, tenantPath, el, cell, link, emptyRow, when, pressed } from "./api.js";
import { checkNumber, labelled, policyFieldset, policyOver, showFieldError } from "./forms.js";

/** The endpoint fields besides the policy: [name, label, type, placeholder]. */
const FIELDS = [
  ["url", "URL", "url", "the receiver's URL"],
  ["description", "Description", "text", "for people"],
  ["event_types", "Event types", "text", "order.*, invoice.paid (empty: all)"],
  ["max_in_flight", "Max in flight", "number", "16"],
  ["rate_limit_per_s", "Rate limit per second", "number", "none"],
  ["timeout_ms", "Timeout (ms)", "number", "15000"],
  ["plugin", "Plugin", "text", "name or name@version (none)"],
];

/** The endpoint form's controls: the fields above, then the policy fieldset. */
export function endpointFields(form) {
  for (const [name, text, type, placeholder] of FIELDS) {
    const input = el("input", { name, type, placeholder, autocomplete: "off", required: name === "url" });
    form.append(labelled(text, input, name));
  }
  form.append(policyFieldset());
}

/** A field's value: trimmed text, a number, a list, or undefined when empty. */
export function fieldValue(form, name) {
  checkNumber(form.elements[name]);
  const raw = form.elements[name].value.trim();
  if (raw === "") return undefined;
  if (name === "event_types") return raw.split(",").map((t) => t.trim()).filter(Boolean);
  if (form.elements[name].type === "number") return Number(raw);
  return raw;
}

export const FIELD_NAMES = FIELDS.map(([name]) => name);

/** The create body: only what was filled in. */
function createBody(form) {
  const body = {};
  for (const name of FIELD_NAMES) {
    const value = fieldValue(form, name);
    if (value !== undefined) body[name] = value;
  }
  const policy = policyOver(form, null);
  if (Object.keys(policy).length) body.policy = policy;
  return body;
}

/** A breaker in a few words: its state, and until when it holds. */
export function breakerText(breaker) {
  if (!breaker) return "–";
  if (breaker.state === "closed") return breaker.trips ? `closed (${breaker.trips} trips)` : "closed";
  return `${breaker.state} until ${when(breaker.open_until)} (${breaker.trips} trips)`;
}

/** Every endpoint of the tenant, up to `MOST_LISTED` (for lists and pickers). */
export const allEndpoints = () => allPages(`${tenantPath()}/endpoints`);

/**
 * Fills an endpoint `<select>` (after `first`, the "any" choice), keeping the
 * choice made while the list loaded.
 */
export async function endpointChoices(select, first, label = (ep) => `${ep.id} (${ep.url})`) {
  const endpoints = await allEndpoints();
  const chosen = select.value;
  select.replaceChildren(first, ...endpoints.map((ep) => el("option", { value: ep.id, text: label(ep) })));
  select.value = chosen;
  return endpoints;
}

export async function show(_arg, polled, current) {
  // The secret of the last creation is shown once, not on the next visit.
  if (!polled) $("created-secret").hidden = true;
  const endpoints = await allEndpoints();
  if (!current()) return;
  $("endpoint-list-note").textContent = endpoints.length >= MOST_LISTED ? `The first ${MOST_LISTED} endpoints.` : "";
  $("endpoint-list").replaceChildren(
    ...(endpoints.length
      ? endpoints.map((ep) =>
          el(
            "tr",
            {},
            el("td", {}, link(`#endpoint/${encodeURIComponent(ep.id)}`, ep.id)),
            cell(ep.url),
            cell(ep.disabled ? `disabled${ep.disabled_reason ? ` (${ep.disabled_reason})` : ""}` : "enabled"),
            cell(breakerText(ep.breaker)),
            cell(`${ep.policy_effective.preset}, ${ep.policy_effective.max_attempts} attempts`),
            cell(ep.plugin),
            cell(ep.max_in_flight),
            cell(ep.rate_limit_per_s),
          ),
        )
      : [emptyRow(8, "No endpoints yet: create the first one below.")]),
  );
}

const form = $("endpoint-form");
endpointFields(form);
const createButton = el("button", { type: "submit", text: "Create endpoint" });
form.append(createButton);
form.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(createButton, () => create());
});

/** Creates the endpoint the form describes; a second press meanwhile is ignored. */
async function create() {
  try {
    const created = await api(`${tenantPath()}/endpoints`, "POST", createBody(form));
    showFieldError(form, null);
    form.reset();
    $("created-secret").textContent = created.secret
      ? `Created ${created.id}. Its signing secret, shown this once: ${created.secret}`
      : `Created ${created.id}.`;
    $("created-secret").hidden = false;
    await show(null, true, () => true);
  } catch (error) {
    showFieldError(form, error);
  }
}
