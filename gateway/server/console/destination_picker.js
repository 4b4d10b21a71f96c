// The endpoint form's destination picker (docs/destinations.md): HTTP (a
// signed POST to the endpoint's URL), RabbitMQ, NATS JetStream, Redis
// Streams, Amazon SQS, SNS or Kinesis, each showing only its own fields; read
// as the API's `destination` object, or as a merge patch of what changed
// since the form was filled. Secrets are never filled in: an empty password,
// token, secret access key or session token keeps the stored one.

import { el } from "./api.js";
import { checkNumber, labelled } from "./forms.js";

/** The kinds: [type, label, the broker URL's placeholder, what it publishes to]. */
const KINDS = [
  ["http", "HTTP", null, "a signed POST to the URL"],
  ["rabbitmq", "RabbitMQ", "amqp://rabbit.example.com:5672/%2f", "an exchange"],
  ["nats", "NATS JetStream", "nats://nats.example.com:4222", "a subject a stream captures"],
  ["redis", "Redis Streams", "redis://redis.example.com:6379/0", "a stream"],
  ["sqs", "Amazon SQS", null, "a queue"],
  ["sns", "Amazon SNS", null, "a topic"],
  ["kinesis", "Amazon Kinesis", null, "a data stream"],
];

/** The kinds that publish to a broker at a URL, and those that send to an AWS service. */
const BROKERS = ["rabbitmq", "nats", "redis"];
const AWS = ["sqs", "sns", "kinesis"];

/** Each kind's name as people read it. */
export const KIND_LABELS = Object.fromEntries(KINDS.map(([type, label]) => [type, label]));

/** The settings: [field, label, input type, placeholder, the kinds that take it]. */
const SETTINGS = [
  ["url", "Broker URL", "text", "without credentials", BROKERS],
  ["queue_url", "Queue URL", "text", "the queue's URL: sqs.REGION.amazonaws.com/ACCOUNT/NAME", ["sqs"]],
  ["topic_arn", "Topic ARN", "text", "arn:aws:sns:us-east-1:123456789012:orders", ["sns"]],
  ["exchange", "Exchange", "text", "empty: the default exchange", ["rabbitmq"]],
  ["routing_key", "Routing key", "text", "empty: the event's type", ["rabbitmq"]],
  ["subject", "Subject", "text", "orders.created (no wildcards)", ["nats"]],
  ["stream", "Stream", "text", "the stream's key", ["redis", "kinesis"]],
  ["max_len", "Max length", "number", "none: never trimmed", ["redis"]],
  ["region", "Region", "text", "us-east-1", AWS],
  ["endpoint_url", "AWS endpoint URL", "text", "empty: the region's (e.g. an emulator's)", AWS],
  ["message_group_path", "Message group path", "text", "FIFO only: a JSON pointer, /customer/id", ["sqs", "sns"]],
  ["partition_key_path", "Partition key path", "text", "a JSON pointer, /customer/id", ["kinesis"]],
];

/** A setting's placeholder where a kind reads it otherwise than the first kind that takes it. */
const PLACEHOLDERS = { kinesis: { stream: "the stream's name or ARN" } };

/** The credentials: [field, label, input type, placeholder, the kinds that take it]. */
const CREDENTIALS = [
  ["username", "Username", "text", "none", BROKERS],
  ["password", "Password", "password", "none", BROKERS],
  ["token", "Token", "password", "none", ["nats"]],
  ["access_key_id", "Access key id", "text", "AKIA…", AWS],
  ["secret_access_key", "Secret access key", "password", "the access key id's", AWS],
  ["session_token", "Session token", "password", "temporary keys only", AWS],
  ["name", "Credentials name", "text", "named in the gateway's config", [...BROKERS, ...AWS]],
];

/** The credentials fieldset's legend, by family. */
const CREDENTIALS_LEGEND = {
  broker: "Broker credentials: a username and password, a token (NATS), or a name the operator gave",
  aws: "AWS credentials: an access key id and secret access key (and a session token for temporary keys), or a name the operator gave",
};

/** Secrets: shown masked by the API, so never filled in; empty keeps the stored one. */
const SECRETS = ["password", "token", "secret_access_key", "session_token"];

/** The credentials that are no secret: filled in, and shown. */
const PLAIN_CREDENTIALS = ["username", "access_key_id", "name"];

const setting = (field) => `destination.${field}`;
const credential = (field) => `destination.credentials.${field}`;

/** The last segment of a path or of a name after `sep`: a queue URL's or an ARN's name. */
const lastOf = (text, sep) => String(text).split(/[?#]/)[0].split(sep).filter(Boolean).pop() || String(text);

/**
 * What an AWS destination sends to, by name: `queue orders` (the queue
 * URL's last segment), `topic orders` (the topic ARN's name), `stream orders`
 * (a stream ARN's name, or the name given); empty for another kind.
 */
export function awsTarget(d) {
  if (d.type === "sqs" && d.queue_url) return `queue ${lastOf(d.queue_url, "/")}`;
  if (d.type === "sns" && d.topic_arn) return `topic ${lastOf(d.topic_arn, ":")}`;
  if (d.type === "kinesis" && d.stream) return `stream ${d.stream.startsWith("arn:") ? lastOf(d.stream, "/") : d.stream}`;
  return "";
}

/** A destination's settings and credentials in a few words: its target and who it connects as. */
export function destinationText(destination) {
  const d = destination || { type: "http" };
  if (d.type === "http") return "HTTP: a signed POST to the URL";
  const parts = [];
  if (d.type === "rabbitmq") {
    parts.push(d.exchange ? `exchange ${d.exchange}` : "the default exchange");
    parts.push(d.routing_key ? `routing key ${d.routing_key}` : "routing key: the event's type");
  }
  if (AWS.includes(d.type)) {
    const target = awsTarget(d);
    if (target) parts.push(target);
    if (d.region) parts.push(`region ${d.region}`);
    if (d.message_group_path) parts.push(`message group ${d.message_group_path}`);
    if (d.partition_key_path) parts.push(`partition key ${d.partition_key_path}`);
  } else {
    if (d.subject) parts.push(`subject ${d.subject}`);
    if (d.stream) parts.push(`stream ${d.stream}`);
    if (d.max_len) parts.push(`max length ~${d.max_len}`);
  }
  const c = d.credentials;
  if (c?.name) parts.push(`credentials ${c.name} (named by the operator)`);
  else if (c?.username) parts.push(`as user ${c.username}`);
  else if (c?.token) parts.push("with a token");
  else if (c?.access_key_id) parts.push(`as key ${c.access_key_id}${c.session_token ? " (temporary)" : ""}`);
  return `${KIND_LABELS[d.type] || d.type}: ${parts.join(", ")}`;
}

/**
 * The picker for `form`, whose own URL field (`url`) is for HTTP alone:
 * `{ element, kind(), read(), fill(destination), patch(), reset() }`.
 */
export function destinationPicker(form) {
  const radios = KINDS.map(([type, label, , hint]) =>
    el(
      "label",
      { class: "inline kind" },
      el("input", { type: "radio", name: "destination.type", value: type, checked: type === "http" }),
      el("span", {}, label, el("small", { text: ` (${hint})` })),
    ),
  );
  const kinds = el(
    "fieldset",
    { class: "destination-kinds" },
    el("legend", { text: "Deliver to" }),
    ...radios,
    el("span", { class: "field-error", "data-field": "destination.type", "aria-live": "polite" }),
  );
  /** Each field's wrapper, by its control's name, with the kinds that take it. */
  const places = [];
  const control = (name, type, placeholder) =>
    el("input", { name, type, placeholder, autocomplete: type === "password" ? "new-password" : "off", min: type === "number" ? "1" : undefined });
  const settings = SETTINGS.map(([field, label, type, placeholder, takers]) => {
    const place = labelled(label, control(setting(field), type, placeholder), setting(field));
    places.push([place, takers]);
    return place;
  });
  const credentials = CREDENTIALS.map(([field, label, type, placeholder, takers]) => {
    const place = labelled(label, control(credential(field), type, placeholder), credential(field));
    places.push([place, takers]);
    return place;
  });
  const credentialLegend = el("legend", { text: CREDENTIALS_LEGEND.broker });
  const credentialSet = el(
    "fieldset",
    { class: "destination-credentials" },
    credentialLegend,
    ...credentials,
    el("span", { class: "field-error", "data-field": "destination.credentials", "aria-live": "polite" }),
  );
  const broker = el("div", { class: "destination-settings" }, ...settings, credentialSet);
  const element = el(
    "fieldset",
    { class: "destination" },
    el("legend", { text: "Destination" }),
    kinds,
    broker,
    el("span", { class: "field-error", "data-field": "destination", "aria-live": "polite" }),
  );

  const value = (name) => form.elements[name].value.trim();
  /** The type and the text each field was filled with. */
  let shown = { type: "http" };
  /** The endpoint's URL as filled in for a destination other than HTTP: its address, no place to post to. */
  let filledAddress = "";
  /** The kind chosen; a kind this page does not know (none chosen) is the one filled in. */
  const kind = () => form.elements["destination.type"].value || shown.type;
  const known = (type) => KINDS.some(([t]) => t === type);

  /** Shows the chosen kind's fields; the endpoint's own URL only for HTTP. */
  function update() {
    const type = kind();
    broker.hidden = type === "http" || !known(type);
    for (const [place, takers] of places) place.hidden = !takers.includes(type);
    const urlPlace = form.elements.url.closest(".field");
    urlPlace.hidden = type !== "http";
    form.elements.url.required = type === "http";
    const placeholder = KINDS.find(([t]) => t === type)?.[2];
    if (placeholder) form.elements[setting("url")].placeholder = placeholder;
    for (const [field, , , fallback] of SETTINGS) {
      if (field !== "url") form.elements[setting(field)].placeholder = PLACEHOLDERS[type]?.[field] ?? fallback;
    }
    credentialLegend.textContent = AWS.includes(type) ? CREDENTIALS_LEGEND.aws : CREDENTIALS_LEGEND.broker;
    // A broker's or AWS service's address is no place to post to.
    const url = form.elements.url.value;
    if (type === "http" && (/^(amqps?|nats|tls|rediss?):/.test(url) || (filledAddress && url === filledAddress))) form.elements.url.value = "";
  }
  for (const radio of radios) radio.querySelector("input").addEventListener("change", update);

  /** The settings and credentials `type` takes, by field, as typed (empty ones left out). */
  function typed(type) {
    const out = {};
    for (const [field, , , , takers] of SETTINGS) {
      if (!takers.includes(type)) continue;
      checkNumber(form.elements[setting(field)]);
      const text = value(setting(field));
      if (text !== "") out[field] = field === "max_len" ? Number(text) : text;
    }
    // The exchange is always named: empty is the default exchange.
    if (type === "rabbitmq") out.exchange = value(setting("exchange"));
    return out;
  }

  /** The credentials as typed, for `type`; undefined when none are. */
  function typedCredentials(type) {
    const out = {};
    for (const [field, , , , takers] of CREDENTIALS) {
      const text = value(credential(field));
      if (takers.includes(type) && text !== "") out[field] = text;
    }
    return Object.keys(out).length ? out : undefined;
  }

  /** A merge patch of the credentials, against those filled in (secrets never are). */
  function credentialsPatch(type) {
    const had = CREDENTIALS.some(([f]) => shown[credential(f)]);
    const taken = (f) => CREDENTIALS.find(([n]) => n === f)[4].includes(type);
    const patch = {};
    for (const [field] of CREDENTIALS) {
      const text = taken(field) ? value(credential(field)) : "";
      if (SECRETS.includes(field)) {
        if (text !== "") patch[field] = text;
        // A stored secret a kind does not take goes (a token, or AWS keys after a switch).
        else if (shown[credential(field)] && !taken(field)) patch[field] = null;
      } else if (text !== (shown[credential(field)] || "")) {
        patch[field] = text === "" ? null : text;
      }
    }
    // One form of credentials replaces another.
    if (patch.name) {
      const given = AWS.includes(type) ? ["access_key_id", "secret_access_key", "session_token"] : ["username", "password", "token"];
      for (const f of given) patch[f] = null;
    }
    if (patch.token) Object.assign(patch, { username: null, password: null, name: null });
    if ((patch.username || patch.password) && shown[credential("token")]) patch.token = null;
    if ((patch.access_key_id || patch.secret_access_key) && shown[credential("name")] && !("name" in patch)) patch.name = null;
    // New keys: a stored session token was the old keys'.
    if (patch.access_key_id && !patch.session_token && shown[credential("session_token")]) patch.session_token = null;
    // With no username, key id or name left, and no secret typed or kept, none are left.
    const kept = (f) => patch[f] || (shown[credential(f)] && taken(f) && patch[f] !== null);
    const left = PLAIN_CREDENTIALS.some((f) => taken(f) && value(credential(f)) !== "") || SECRETS.some(kept);
    if (had && !left) return null;
    return Object.keys(patch).length ? patch : undefined;
  }

  return {
    element,
    kind,

    /** The create body's `destination`: undefined for HTTP (the default). */
    read() {
      const type = kind();
      if (type === "http") return undefined;
      const destination = { type, ...typed(type) };
      const credentials = typedCredentials(type);
      if (credentials) destination.credentials = credentials;
      return destination;
    },

    /** Fills the fields from the endpoint's destination; secrets stay empty, marked as stored. */
    fill(destination) {
      const d = destination || { type: "http" };
      shown = { type: d.type };
      filledAddress = d.type === "http" ? "" : form.elements.url.value.trim();
      for (const radio of form.elements["destination.type"]) radio.checked = radio.value === d.type;
      for (const [field] of SETTINGS) {
        const text = d[field] == null ? "" : String(d[field]);
        form.elements[setting(field)].value = shown[setting(field)] = text;
      }
      for (const [field, , , placeholder] of CREDENTIALS) {
        const stored = d.credentials?.[field];
        const input = form.elements[credential(field)];
        if (SECRETS.includes(field)) {
          input.value = "";
          input.placeholder = stored ? "stored: type to replace" : placeholder;
          shown[credential(field)] = stored ? "stored" : "";
        } else {
          input.value = shown[credential(field)] = stored || "";
        }
      }
      update();
    },

    /**
     * The merge patch of the destination: undefined when unchanged, null
     * for back to HTTP; a switch of kind sends the new kind's settings and
     * drops the old kind's.
     */
    patch() {
      const type = kind();
      // A kind this page does not know is left as it is.
      if (!known(type)) return undefined;
      if (type === "http") return shown.type === "http" ? undefined : null;
      const switched = type !== shown.type;
      const patch = switched ? { type } : {};
      const now = typed(type);
      for (const [field, , , , takers] of SETTINGS) {
        const before = shown[setting(field)] || "";
        if (!takers.includes(type)) {
          if (before !== "") patch[field] = null;
          continue;
        }
        const text = value(setting(field));
        if (switched ? field in now : text !== before) patch[field] = field in now ? now[field] : null;
      }
      const credentials = credentialsPatch(type);
      if (credentials !== undefined) patch.credentials = credentials;
      return Object.keys(patch).length ? patch : undefined;
    },

    /** Back to HTTP, every field empty (after a create). */
    reset() {
      this.fill(null);
    },
  };
}
