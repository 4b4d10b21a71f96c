// Form pieces shared by the endpoint and policy pages: the retry-policy fields,
// reading them into the API's policy object, and the API's 422 shown beside
// the field it names.

import { el, showError } from "./api.js";

const PRESETS = ["default", "seed-classic", "svix", "ladder", "aggressive-short"];
const STRATEGIES = ["exponential", "linear", "fixed", "schedule"];
const JITTERS = ["none", "full", "equal", "decorrelated", "proportional"];

/** The policy fields: [name, label, kind, choices or placeholder]. */
const FIELDS = [
  ["preset", "Preset", "select", PRESETS],
  ["max_attempts", "Max attempts", "number", "1–100"],
  ["strategy", "Strategy", "select", STRATEGIES],
  ["base_ms", "First delay", "duration", "5s, 500ms or ms"],
  ["factor", "Factor", "number", "2"],
  ["max_delay_ms", "Max delay", "duration", "1h"],
  ["retry_window_ms", "Retry window", "duration", "3d"],
  ["jitter", "Jitter", "select", JITTERS],
];

export const PRESET_NAMES = PRESETS;

/** A label with its control and the span for the API's message about `field`. */
export function labelled(text, control, field) {
  return el("div", { class: "field" }, el("label", {}, `${text} `, control), el("span", { class: "field-error", "data-field": field, "aria-live": "polite" }));
}

/** The policy fields as a fieldset; names are `policy.<field>`. */
export function policyFieldset(legend = "Retry policy (empty: the default's)") {
  const set = el("fieldset", { class: "policy" }, el("legend", { text: legend }));
  for (const [name, text, kind, extra] of FIELDS) {
    const full = `policy.${name}`;
    const control =
      kind === "select"
        ? el("select", { name: full }, el("option", { value: "", text: "(default)" }), ...extra.map((v) => el("option", { value: v, text: v })))
        : el("input", { name: full, type: kind === "number" ? "number" : "text", step: name === "factor" ? "any" : undefined, placeholder: extra, autocomplete: "off" });
    set.append(labelled(text, control, full));
  }
  return set;
}

/** Throws the API's kind of error when a number field holds what is not a number. */
export function checkNumber(control) {
  if (control.validity && control.validity.badInput) {
    throw { code: "validation_failed", field: control.name, message: `${control.name} is not a number` };
  }
}

/** A field's value as the API takes it: digits are ms (or a number), the rest a duration string. */
function read(form, name) {
  const control = form.elements[`policy.${name}`];
  if (!control) return undefined;
  checkNumber(control);
  const raw = control.value.trim();
  if (raw === "") return undefined;
  const kind = FIELDS.find(([n]) => n === name)[2];
  if (kind === "number" || (kind === "duration" && /^\d+$/.test(raw))) return Number(raw);
  return raw;
}

/**
 * A merge patch of the fields changed since `fillPolicy` (`shown`: the text it
 * put in each): a changed field sends its value, an emptied one null (the
 * default's). Untouched fields are left out, so they stay as stored.
 */
export function policyPatch(form, shown) {
  const patch = {};
  for (const [name] of FIELDS) {
    const full = `policy.${name}`;
    if (form.elements[full].value.trim() === (shown[full] ?? "")) continue;
    const value = read(form, name);
    patch[name] = value === undefined ? null : value;
  }
  return Object.keys(patch).length ? patch : undefined;
}

/**
 * `policy` (or nothing) laid under the filled fields: a new endpoint's policy,
 * or what a simulation of "this policy as edited" sends. Fields the form lacks
 * (`retry_on`, `schedule_ms`, ...) stay.
 */
export function policyOver(form, policy) {
  const merged = { ...(policy || {}) };
  for (const [name] of FIELDS) {
    const value = read(form, name);
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}

/** Fills the fields from a policy object as the tenant set it; returns the text put in each. */
export function fillPolicy(form, policy) {
  const shown = {};
  for (const [name] of FIELDS) {
    const control = form.elements[`policy.${name}`];
    const value = policy ? policy[name] : undefined;
    const text = value === undefined || value === null ? "" : String(value);
    // A stored value this build has no option for is kept as one.
    if (control.tagName === "SELECT" && text && ![...control.options].some((o) => o.value === text)) {
      control.append(el("option", { value: text, text }));
    }
    control.value = text;
    shown[control.name] = text;
  }
  return shown;
}

/** Whether `span` is where the error about `field` goes: its own field, or (with `data-prefix`) a place inside it. */
function placeOf(span, field) {
  const own = span.dataset.field;
  if (!field) return null;
  if (field === own) return "own";
  const inside = field.startsWith(`${own}.`) || field.startsWith(`${own}[`);
  return span.dataset.prefix === "yes" && inside ? "inside" : null;
}

/**
 * Shows the API's error beside the field it names (its `field`), and in the
 * alert line. An error about a place inside a field (`filter.$or[1].a.$gt`,
 * `headers.X-Bad`) goes beside that field, the place named before the message.
 */
export function showFieldError(form, error) {
  let named = error && error.field ? form.elements[error.field] : null;
  for (const span of form.querySelectorAll(".field-error")) {
    const place = placeOf(span, error && error.field);
    span.textContent = place === "own" ? error.message : place === "inside" ? `${error.field}: ${error.message}` : "";
    if (place && !(named && named.focus)) named = span.closest(".field, fieldset")?.querySelector("textarea, input");
  }
  showError(error);
  if (named && named.focus) named.focus();
}
