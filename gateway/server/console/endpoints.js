// Endpoints: the tenant's list, each by its name (description, uid or id)
// with its uid, channels, filter, state, breaker and limits, and the form that
// creates one. An endpoint's own page (endpoint.js) edits it.

import { $, api, allPages, can, MOST_LISTED, tenantPath, el, cell, link, emptyRow, when, pressed } from "./api.js";
import { showFieldError } from "./forms.js";
import { endpointForm } from "./endpoint_form.js";

/** What people call an endpoint: its description, else its uid, else its id. */
export const endpointName = (ep) => ep.description || ep.uid || ep.id;

/** A filter in one line, for a table cell. */
const filterLine = (filter) => (filter == null ? null : JSON.stringify(filter));

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
export async function endpointChoices(select, first, label = (ep) => `${endpointName(ep)} (${ep.url})`) {
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
            el("td", {}, link(`#endpoint/${encodeURIComponent(ep.id)}`, endpointName(ep)), endpointName(ep) === ep.id ? null : el("small", { class: "id", text: ep.id })),
            cell(ep.uid),
            el("td", { class: "url", text: ep.url }),
            cell((ep.channels || []).join(", ")),
            el("td", {}, ep.filter == null ? "–" : el("code", { text: filterLine(ep.filter) })),
            cell(ep.disabled ? `disabled${ep.disabled_reason ? ` (${ep.disabled_reason})` : ""}` : "enabled"),
            cell(breakerText(ep.breaker)),
            cell(`${ep.policy_effective.preset}, ${ep.policy_effective.max_attempts} attempts`),
            cell(ep.plugin),
            cell(ep.max_in_flight),
            cell(ep.rate_limit_per_s),
          ),
        )
      : [emptyRow(11, "No endpoints yet: create the first one below.")]),
  );
}

const form = $("endpoint-form");
const fields = endpointForm(form);
const createButton = el("button", { type: "submit", text: "Create endpoint" });
form.append(createButton);
form.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(createButton, () => create());
});

/** Creates the endpoint the form describes; a second press meanwhile is ignored. */
async function create() {
  try {
    const created = await api(`${tenantPath()}/endpoints`, "POST", fields.createBody());
    showFieldError(form, null);
    fields.reset();
    const name = endpointName(created);
    const key = created.public_key ? ` Its v1a public key, for the receiver: ${created.public_key}` : "";
    // A portal session without read_secrets is not shown the secret.
    $("created-secret").textContent = created.secret && can("read_secrets")
      ? `Created ${name}. Its signing secret, shown this once: ${created.secret}${key}`
      : `Created ${name}.`;
    $("created-secret").hidden = false;
    await show(null, true, () => true);
  } catch (error) {
    showFieldError(form, error);
  }
}
