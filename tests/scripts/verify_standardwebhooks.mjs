// Verifies webhook requests with the official npm `standardwebhooks` package, the
// second official verifier beside verify_standardwebhooks.py, with the same contract.
//
// Reads JSON from stdin: {"secret": "whsec_...", "requests": [{"headers": {...}, "body": "..."}],
// "now": optional Unix seconds} and exits non-zero, naming the request, if any signature
// does not verify. "now" stands in for the wall clock, for gateways run on a test clock.
// Install the pinned package first: npm ci --prefix tests/scripts
import { readFileSync } from "node:fs";

let Webhook;
try {
  ({ Webhook } = await import("standardwebhooks"));
} catch (e) {
  console.error(
    `the npm standardwebhooks package is not installed (${e.message}); run \`npm ci --prefix tests/scripts\``,
  );
  process.exit(2);
}

const data = JSON.parse(readFileSync(0, "utf8"));
if (data.now !== undefined && data.now !== null) {
  // The library reads the clock through Date.now() only.
  const fixedMs = data.now * 1000;
  Date.now = () => fixedMs;
}
const wh = new Webhook(data.secret);
for (const [i, req] of data.requests.entries()) {
  try {
    wh.verify(req.body, req.headers);
  } catch (e) {
    console.error(`request ${i}: ${e.name}: ${e.message}`);
    process.exit(1);
  }
}
console.log(`verified ${data.requests.length}`);
