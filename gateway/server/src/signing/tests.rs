//! The unit tests of `signing.rs`.

use super::*;

const SPEC_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SPEC_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const SPEC_TS: i64 = 1_614_265_330;
const SPEC_BODY: &[u8] = br#"{"test": 2432232314}"#;
const SPEC_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

fn spec_secret() -> SigningSecret {
    SigningSecret::parse(SPEC_SECRET).unwrap()
}

#[test]
fn matches_the_standard_webhooks_vector() {
    assert_eq!(
        sign(&[spec_secret()], SPEC_ID, SPEC_TS, SPEC_BODY),
        SPEC_SIGNATURE
    );
    assert!(verify(
        &spec_secret(),
        SPEC_ID,
        SPEC_TS,
        SPEC_BODY,
        SPEC_SIGNATURE
    ));
}

#[test]
fn signs_once_per_secret() {
    let other = SigningSecret::generate();
    let header = sign(&[spec_secret(), other.clone()], SPEC_ID, SPEC_TS, SPEC_BODY);
    let entries: Vec<&str> = header.split(' ').collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0], SPEC_SIGNATURE);
    assert!(entries[1].starts_with("v1,") && entries[1] != SPEC_SIGNATURE);
    assert!(verify(&spec_secret(), SPEC_ID, SPEC_TS, SPEC_BODY, &header));
    assert!(verify(&other, SPEC_ID, SPEC_TS, SPEC_BODY, &header));
    assert_eq!(sign(&[], SPEC_ID, SPEC_TS, SPEC_BODY), "");
}

#[test]
fn verify_rejects_any_change() {
    let secret = spec_secret();
    assert!(!verify(
        &secret,
        SPEC_ID,
        SPEC_TS + 1,
        SPEC_BODY,
        SPEC_SIGNATURE
    ));
    assert!(!verify(
        &secret,
        "msg_other",
        SPEC_TS,
        SPEC_BODY,
        SPEC_SIGNATURE
    ));
    assert!(!verify(
        &secret,
        SPEC_ID,
        SPEC_TS,
        br#"{"test": 2432232315}"#,
        SPEC_SIGNATURE
    ));
    assert!(!verify(
        &SigningSecret::generate(),
        SPEC_ID,
        SPEC_TS,
        SPEC_BODY,
        SPEC_SIGNATURE
    ));
    let v2 = SPEC_SIGNATURE.replacen("v1,", "v2,", 1);
    assert!(!verify(&secret, SPEC_ID, SPEC_TS, SPEC_BODY, &v2));
    assert!(!verify(
        &secret,
        SPEC_ID,
        SPEC_TS,
        SPEC_BODY,
        "v1,not-base64!"
    ));
    assert!(!verify(&secret, SPEC_ID, SPEC_TS, SPEC_BODY, ""));
    let with_junk = format!("v1a,xyz {SPEC_SIGNATURE}");
    assert!(verify(&secret, SPEC_ID, SPEC_TS, SPEC_BODY, &with_junk));
}

#[test]
fn generated_secrets_have_32_byte_keys_and_round_trip() {
    let secret = SigningSecret::generate();
    assert!(secret.as_str().starts_with("whsec_"));
    let parsed = SigningSecret::parse(secret.as_str()).unwrap();
    assert_eq!(parsed.key.len(), 32);
    assert_eq!(parsed.as_str(), secret.as_str());
    assert_ne!(SigningSecret::generate().as_str(), secret.as_str());
}

fn parse_error(text: &str) -> SecretError {
    SigningSecret::parse(text).map(|_| ()).unwrap_err()
}

#[test]
fn parse_errors() {
    let key = |len: usize| STANDARD.encode(vec![7u8; len]);
    assert_eq!(parse_error(&key(32)), SecretError::MissingPrefix);
    assert_eq!(parse_error("whsec_***"), SecretError::InvalidBase64);
    assert_eq!(parse_error("whsec_"), SecretError::TooShort(0));
    assert_eq!(
        parse_error(&format!("whsec_{}", key(23))),
        SecretError::TooShort(23)
    );
    assert_eq!(
        parse_error(&format!("whsec_{}", key(65))),
        SecretError::TooLong(65)
    );
    assert!(SigningSecret::parse(&format!("whsec_{}", key(24))).is_ok());
    assert!(SigningSecret::parse(&format!("whsec_{}", key(64))).is_ok());
    let unpadded = format!("whsec_{}", key(32).trim_end_matches('='));
    assert!(SigningSecret::parse(&unpadded).is_ok());
}

/// Item 9 of issue 17: strict decoders (Go's `StdEncoding`, .NET's
/// `Convert.FromBase64String`) refuse base64 without its `=` padding, so a
/// secret given through the API must be canonical.
#[test]
fn tenant_secrets_without_base64_padding_are_refused() {
    let key = |len: usize| STANDARD.encode(vec![7u8; len]);
    // 32 bytes need one `=`, 25 bytes two.
    for len in [32, 25] {
        let padded = format!("whsec_{}", key(len));
        assert!(padded.ends_with('='), "{padded}");
        let unpadded = padded.trim_end_matches('=');
        assert_eq!(
            SigningSecret::parse_canonical(unpadded).map(|_| ()),
            Err(SecretError::NotCanonical),
            "{len}-byte key without padding"
        );
        let parsed = SigningSecret::parse_canonical(&padded).unwrap();
        assert_eq!((parsed.as_str(), parsed.key.len()), (padded.as_str(), len));
    }
    let half_padded = format!("whsec_{}", key(25).trim_end_matches("="));
    let half_padded = format!("{half_padded}=");
    assert!(SigningSecret::parse_canonical(&half_padded).is_err());
    // Non-zero bits after the last byte: decodable by some, canonical for none.
    let mut stray_bits = format!("whsec_{}", key(32));
    stray_bits.replace_range(stray_bits.len() - 2..stray_bits.len() - 1, "x");
    assert!(SigningSecret::parse_canonical(&stray_bits).is_err());
    // Whitespace that lenient decoders skip is not canonical either.
    let spaced = format!("whsec_ {}", key(32));
    assert!(SigningSecret::parse_canonical(&spaced).is_err());
    // A key whose base64 has no padding (a multiple of 3 bytes) is canonical as is.
    assert!(SigningSecret::parse_canonical(SPEC_SECRET).is_ok());
    assert!(SigningSecret::parse_canonical(SigningSecret::generate().as_str()).is_ok());
    // The other checks still apply, with their own errors.
    assert_eq!(
        SigningSecret::parse_canonical(&key(32)).map(|_| ()),
        Err(SecretError::MissingPrefix)
    );
    assert_eq!(
        SigningSecret::parse_canonical(&format!("whsec_{}", key(16))).map(|_| ()),
        Err(SecretError::TooShort(16))
    );
}

#[test]
fn stored_secrets_without_padding_keep_signing_as_before() {
    let padded = format!("whsec_{}", STANDARD.encode([9u8; 32]));
    let unpadded = padded.trim_end_matches('=');
    let stored = SigningSecret::parse(unpadded).unwrap();
    assert_eq!(stored.as_str(), unpadded, "kept as it was stored");
    let canonical = SigningSecret::parse(&padded).unwrap();
    assert_eq!(
        sign(&[stored], SPEC_ID, SPEC_TS, SPEC_BODY),
        sign(&[canonical], SPEC_ID, SPEC_TS, SPEC_BODY)
    );
}

#[test]
fn debug_does_not_print_the_key() {
    let printed = format!("{:?}", spec_secret());
    assert!(
        !printed.contains("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        "{printed}"
    );
}

/// RFC 8032's first ed25519 test key, in the spec's `whsk_` form (seed, then
/// public key) and `whpk_` form; the signature over the spec's message was
/// made with Python's `cryptography` package, not with this code.
const RFC8032_WHSK: &str =
    "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2DXWpgBgrEKt9VL/tPJZAc6DuFy89qmIyWvAhpo9wdRGg==";
const RFC8032_SEED_ONLY: &str = "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=";
const RFC8032_WHPK: &str = "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";
const RFC8032_V1A: &str =
    "v1a,fldxM4gAKugP6nnt1hdz3sgGfZ6d99nzrMFnZOELIxbzEHoVmAb2ADpkJK7zgPePmPsle0zV9jSeGlHFG2NVAw==";

#[test]
fn v1a_keys_read_and_write_the_spec_forms() {
    let key = Ed25519Key::parse(RFC8032_WHSK).unwrap();
    assert_eq!(key.secret_text(), RFC8032_WHSK);
    assert_eq!(key.public_text(), RFC8032_WHPK);
    // A bare seed is the same key, written back in the 64-byte form.
    let seed_only = Ed25519Key::parse(RFC8032_SEED_ONLY).unwrap();
    assert_eq!(seed_only.secret_text(), RFC8032_WHSK);
    let generated = Ed25519Key::generate();
    let again = Ed25519Key::parse(&generated.secret_text()).unwrap();
    assert_eq!(again.public_text(), generated.public_text());
    assert!(generated.public_text().starts_with("whpk_"));
    assert_eq!(format!("{generated:?}"), "Ed25519Key(whsk_<redacted>)");
}

#[test]
fn v1a_matches_a_signature_made_elsewhere() {
    let key = Ed25519Key::parse(RFC8032_WHSK).unwrap();
    let header = sign_with(
        &[SignatureScheme::V1a],
        &[],
        &[key],
        SPEC_ID,
        SPEC_TS,
        SPEC_BODY,
    );
    // ed25519 is deterministic: the same key and message give the same bytes.
    assert_eq!(header, RFC8032_V1A);
    let public = Ed25519PublicKey::parse(RFC8032_WHPK).unwrap();
    assert!(verify_v1a(&public, SPEC_ID, SPEC_TS, SPEC_BODY, &header));
    assert!(!verify_v1a(
        &public,
        SPEC_ID,
        SPEC_TS + 1,
        SPEC_BODY,
        &header
    ));
    let other = Ed25519PublicKey::parse(&Ed25519Key::generate().public_text()).unwrap();
    assert!(!verify_v1a(&other, SPEC_ID, SPEC_TS, SPEC_BODY, &header));
    // A v1 entry is not a v1a one, whatever its bytes.
    let as_v1 = header.replacen("v1a,", "v1,", 1);
    assert!(!verify_v1a(&public, SPEC_ID, SPEC_TS, SPEC_BODY, &as_v1));
}

#[test]
fn both_schemes_sign_every_live_key_in_order() {
    let old = Ed25519Key::generate();
    let new = Ed25519Key::parse(RFC8032_WHSK).unwrap();
    let other = SigningSecret::generate();
    let header = sign_with(
        &[SignatureScheme::V1, SignatureScheme::V1a],
        &[spec_secret(), other.clone()],
        &[new, old.clone()],
        SPEC_ID,
        SPEC_TS,
        SPEC_BODY,
    );
    let entries: Vec<&str> = header.split(' ').collect();
    assert_eq!(entries.len(), 4, "{header}");
    assert_eq!(entries[0], SPEC_SIGNATURE);
    assert!(entries[1].starts_with("v1,"));
    assert_eq!(entries[2], RFC8032_V1A);
    assert!(entries[3].starts_with("v1a,"));
    assert!(verify(&other, SPEC_ID, SPEC_TS, SPEC_BODY, &header));
    let old_public = Ed25519PublicKey::parse(&old.public_text()).unwrap();
    assert!(verify_v1a(
        &old_public,
        SPEC_ID,
        SPEC_TS,
        SPEC_BODY,
        &header
    ));
}

#[test]
fn bad_v1a_keys_are_refused_with_the_reason() {
    use base64::Engine;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    assert_eq!(
        Ed25519Key::parse(RFC8032_WHPK).unwrap_err(),
        KeyError::MissingPrefix("whsk_")
    );
    assert_eq!(
        Ed25519Key::parse("whsk_not base64!").unwrap_err(),
        KeyError::InvalidBase64
    );
    assert!(matches!(
        Ed25519Key::parse(&format!("whsk_{}", b64(&[1u8; 48]))).unwrap_err(),
        KeyError::WrongLength { got: 48, .. }
    ));
    // A seed with another public half.
    let mismatched = {
        let mut bytes = base64::engine::general_purpose::STANDARD
            .decode(RFC8032_WHSK.trim_start_matches("whsk_"))
            .unwrap();
        bytes[63] ^= 1;
        format!("whsk_{}", b64(&bytes))
    };
    assert_eq!(
        Ed25519Key::parse(&mismatched).unwrap_err(),
        KeyError::Mismatched
    );
    assert_eq!(
        Ed25519PublicKey::parse(RFC8032_WHSK).unwrap_err(),
        KeyError::MissingPrefix("whpk_")
    );
    assert!(matches!(
        Ed25519PublicKey::parse(&format!("whpk_{}", b64(&[1u8; 31]))).unwrap_err(),
        KeyError::WrongLength { got: 31, .. }
    ));
}

#[test]
fn secrets_without_their_prefix_are_given_it() {
    let bare = SPEC_SECRET.trim_start_matches("whsec_");
    // The spec's vector is unpadded base64 of 24 bytes, canonical as it is.
    assert_eq!(
        SigningSecret::parse_given(bare).unwrap().as_str(),
        SPEC_SECRET
    );
    assert_eq!(
        SigningSecret::parse_given(SPEC_SECRET).unwrap().as_str(),
        SPEC_SECRET
    );
    assert!(SigningSecret::parse_given("whsk_abc").is_err());
    assert!(SigningSecret::parse_given("").is_err());
}

#[test]
fn settings_default_to_v1_under_webhook_names_and_read_old_records() {
    let old: SignatureSettings = serde_json::from_str("{}").unwrap();
    assert_eq!(old, SignatureSettings::default());
    assert!(old.is_default() && old.uses(SignatureScheme::V1));
    let set = SignatureSettings::new(
        vec![
            SignatureScheme::V1a,
            SignatureScheme::V1,
            SignatureScheme::V1a,
        ],
        HeaderSet::Both,
    )
    .unwrap();
    assert_eq!(set.schemes, [SignatureScheme::V1, SignatureScheme::V1a]);
    assert_eq!(
        serde_json::to_string(&set).unwrap(),
        r#"{"headers":"both","schemes":["v1","v1a"]}"#
    );
    assert!(SignatureSettings::new(Vec::new(), HeaderSet::Webhook).is_err());
    assert!(serde_json::from_str::<SignatureScheme>("\"v2\"").is_err());
    assert_eq!(
        HeaderSet::Both.names(),
        [
            ["webhook-id", "webhook-timestamp", "webhook-signature"],
            ["svix-id", "svix-timestamp", "svix-signature"]
        ]
    );
}
