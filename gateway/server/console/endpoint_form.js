// The endpoint form, shared by create (endpoints.js) and edit (endpoint.js):
// the destination (HTTP to the URL, or a broker: destination_picker.js), the
// plain fields, the event types (ticked from the catalog or typed),
// channels, metadata and header rows, the signature choices, the payload
// filter and the retry policy; read as the create body, or as a merge patch of only
// what changed since the form was filled, so a change made elsewhere
// meanwhile stays.

import { el } from "./api.js";
import { checkNumber, fillPolicy, labelled, policyFieldset, policyOver, policyPatch } from "./forms.js";
import { rowsEditor } from "./rows_editor.js";
import { filterEditor, filterText, readFilter } from "./filter_editor.js";
import { eventTypePicker } from "./event_type_picker.js";
import { destinationPicker } from "./destination_picker.js";

/** The plain fields: [name, label, type, placeholder]. */
const FIELDS = [
  ["url", "URL", "url", "the receiver's URL"],
  ["description", "Name (description)", "text", "shown as its name"],
  ["uid", "Uid", "text", "your own id for it: A-Z a-z 0-9 _ . -"],
  ["channels", "Channels", "text", "eu, account:42 (empty: every event)"],
  ["max_in_flight", "Max in flight", "number", "16"],
  ["rate_limit_per_s", "Rate limit per second", "number", "none"],
  ["timeout_ms", "Timeout (ms)", "number", "15000"],
  ["plugin", "Plugin", "text", "name or name@version (none)"],
];
/** The signature choices: [name, label, [value, text] options]; "" is the default. */
const SIGNATURE = [
  ["signature_schemes", "Signature schemes", [["", "v1 (default)"], ["v1a", "v1a (ed25519)"], ["v1,v1a", "v1 and v1a"]]],
  ["signature_headers", "Signature headers", [["", "webhook-* (default)"], ["svix", "svix-*"], ["both", "webhook-* and svix-*"]]],
];

/** The signature setting the selects show, as the API takes it. */
function readSignature(form) {
  const schemes = form.elements.signature_schemes.value || "v1";
  const headers = form.elements.signature_headers.value || "webhook";
  return { schemes: schemes.split(","), headers };
}

/** The selects' values for an endpoint's signature setting. */
function signatureValues(signature) {
  const schemes = (signature?.schemes || ["v1"]).join(",");
  const headers = signature?.headers || "webhook";
  return { signature_schemes: schemes === "v1" ? "" : schemes, signature_headers: headers === "webhook" ? "" : headers };
}

/** Fields written as a comma list and sent as a JSON list. */
const LISTS = ["channels"];

/** A plain field's value: trimmed text, a number, a list, or undefined when empty. */
function fieldValue(form, name) {
  checkNumber(form.elements[name]);
  const raw = form.elements[name].value.trim();
  if (raw === "") return undefined;
  if (LISTS.includes(name)) return raw.split(",").map((t) => t.trim()).filter(Boolean);
  if (form.elements[name].type === "number") return Number(raw);
  return raw;
}

/**
 * Lays the controls into `form` and returns the form's reader:
 * `{ createBody(), fill(endpoint), patchBody() }`.
 */
export function endpointForm(form) {
  const types = eventTypePicker();
  const destination = destinationPicker(form);
  for (const [name, text, type, placeholder] of FIELDS) {
    // Where deliveries go comes first; the URL is HTTP's.
    if (name === "url") form.append(destination.element);
    const input = el("input", { name, type, placeholder, autocomplete: "off", required: name === "url" });
    form.append(labelled(text, input, name));
    // The event types come after the names, before the channels that narrow them.
    if (name === "uid") form.append(types.element);
  }
  // The form is laid out before sign-in: the catalog is read each time its page opens.
  const page = form.closest("section");
  new MutationObserver(() => {
    if (!page.hidden) types.load();
  }).observe(page, { attributes: true, attributeFilter: ["hidden"] });
  for (const [name, text, options] of SIGNATURE) {
    const select = el("select", { name }, ...options.map(([value, label]) => el("option", { value, text: label })));
    form.append(labelled(text, select, `signature.${name.replace("signature_", "")}`));
  }
  const metadata = rowsEditor({ field: "metadata", legend: "Metadata (your own strings; hookgate never reads them)", noun: "metadata key", keyLabel: "Key" });
  const headers = rowsEditor({ field: "headers", legend: "Headers sent with every attempt", noun: "header", keyLabel: "Header name", sensitive: true });
  form.append(metadata.element, headers.element, filterEditor(), policyFieldset());
  destination.reset();
  /** The text each plain field, the filter and the policy fields were filled with. */
  let shown = {};

  return {
    /** The create body: only what was filled in. */
    createBody() {
      const body = {};
      const broker = destination.read();
      if (broker) body.destination = broker;
      for (const [name] of FIELDS) {
        // A broker's address is its destination's.
        if (name === "url" && broker) continue;
        const value = fieldValue(form, name);
        if (value !== undefined) body[name] = value;
      }
      const names = types.read();
      if (names.length) body.event_types = names;
      Object.assign(body, metadata.read(), headers.read());
      if (SIGNATURE.some(([name]) => form.elements[name].value !== "")) body.signature = readSignature(form);
      const filter = readFilter(form);
      if (filter !== undefined) body.filter = filter;
      const policy = policyOver(form, null);
      if (Object.keys(policy).length) body.policy = policy;
      return body;
    },

    /** Fills the form from the endpoint as the tenant set it, noting what each field shows. */
    fill(ep) {
      shown = {};
      for (const [name] of FIELDS) {
        const value = ep[name];
        const text = value == null ? "" : Array.isArray(value) ? value.join(", ") : String(value);
        form.elements[name].value = text;
        shown[name] = text;
      }
      destination.fill(ep.destination);
      types.fill(ep.event_types || []);
      metadata.fill(ep.metadata, []);
      headers.fill(ep.headers, ep.sensitive_headers || []);
      for (const [name, value] of Object.entries(signatureValues(ep.signature))) {
        form.elements[name].value = shown[name] = value;
      }
      form.elements.filter.value = shown.filter = filterText(ep.filter);
      Object.assign(shown, fillPolicy(form, ep.policy));
    },

    /** The merge patch: the fields changed since `fill`; an emptied one is null, its default. */
    patchBody() {
      const body = {};
      const changed = destination.patch();
      if (changed !== undefined) body.destination = changed;
      for (const [name] of FIELDS) {
        if (form.elements[name].value.trim() === shown[name]) continue;
        // A broker endpoint's URL is its destination's.
        if (name === "url" && destination.kind() !== "http") continue;
        const value = fieldValue(form, name);
        body[name] = value === undefined ? null : value;
      }
      const names = types.patch();
      if (names !== undefined) body.event_types = names;
      Object.assign(body, metadata.patch(), headers.patch());
      if (SIGNATURE.some(([name]) => form.elements[name].value !== shown[name])) body.signature = readSignature(form);
      if (form.elements.filter.value.trim() !== shown.filter) {
        const filter = readFilter(form);
        body.filter = filter === undefined ? null : filter;
      }
      const policy = policyPatch(form, shown);
      if (policy) body.policy = policy;
      return body;
    },

    /** Empties every field and row (after a create). */
    reset() {
      form.reset();
      destination.reset();
      types.fill([]);
      metadata.fill({}, []);
      headers.fill({}, []);
    },
  };
}
