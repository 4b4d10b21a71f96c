//! The `webhook-signature` header: verification never panics, and a header
//! made by `sign` always verifies.
#![no_main]
use hookgate_server::{SigningSecret, sign, verify};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    let header = String::from_utf8_lossy(data);
    let _ = verify(&secret, "msg_1", 1_614_265_330, data, &header);
    let good = sign(std::slice::from_ref(&secret), "msg_1", 1_614_265_330, data);
    assert!(verify(&secret, "msg_1", 1_614_265_330, data, &good));
    let _ = SigningSecret::parse(&header);
});
