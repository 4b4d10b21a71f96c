// Drives hookgate's Svix-compatible API with the official `svix` npm package,
// unmodified, through every operation the face serves, and checks each
// answer: the Python scenario (../svix_sdk) in this SDK's own API.
//
// Usage: node main.mjs BASE_URL ORG_TOKEN RECEIVER_URL
// Prints one JSON line: what each part saw (ids, secrets) for the Rust test
// to check against the receiver and the verifiers; exits 1 with the failing
// check in `failed`.
import * as applications from "./applications.mjs";
import * as authentication from "./authentication.mjs";
import { client } from "./check.mjs";
import * as endpoints from "./endpoints.mjs";
import * as eventTypes from "./event_types.mjs";
import * as messages from "./messages.mjs";

const [base, token, receiver] = process.argv.slice(2);
const seen = { failed: null };
try {
  // An explicit loopback serverUrl: without one the SDK calls Svix's cloud.
  const ctx = { ...client(base, token), base, token, receiver, seen };
  for (const part of [applications, eventTypes, endpoints, messages, authentication]) await part.run(ctx);
  // What the Rust test verifies the deliveries with: the secret, and the
  // message sent twice (once more by the resend).
  seen.secret = await endpoints.finalSecret(ctx);
  seen.message = seen.messages.resent;
} catch (error) {
  seen.failed = `${error.message}\n${error.stack}\n${JSON.stringify(error.body ?? null)}`;
}
console.log(JSON.stringify(seen));
process.exit(seen.failed ? 1 : 0);
