//! Web Push (RFC 8030): the payload encrypted per RFC 8291 (`aes128gcm`, RFC 8188) and the
//! request signed per RFC 8292 (VAPID). RustCrypto primitives only, so that no second HTTP
//! stack comes with a push crate.

use aes_gcm::aead::{Aead, KeyInit};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hkdf::Hkdf;
use p256::ecdsa::signature::Signer;
use p256::{PublicKey, SecretKey};
use sha2::Sha256;

/// The record size written in the header: one record carries the whole (small) payload.
const RECORD_SIZE: u32 = 4096;

/// The most plaintext one push may carry: push services accept 4096 bytes of body, of
/// which the header takes 86 and the tag and delimiter 17.
pub const MAX_PLAINTEXT: usize = 3993;

/// Decodes base64url with or without padding (subscriptions come in both).
pub fn decode(raw: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(raw.trim_end_matches('=')).ok()
}

/// Encodes base64url without padding.
pub fn encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Checks a subscription's keys: `p256dh` an uncompressed point on P-256, `auth` 16 bytes.
///
/// # Errors
/// A sentence naming the bad key.
pub fn check_keys(p256dh: &str, auth: &str) -> Result<(), String> {
    let point = decode(p256dh).ok_or("keys.p256dh is not base64url")?;
    if point.len() != 65 || point[0] != 4 || PublicKey::from_sec1_bytes(&point).is_err() {
        return Err("keys.p256dh must be an uncompressed P-256 public key (65 bytes)".into());
    }
    let secret = decode(auth).ok_or("keys.auth is not base64url")?;
    if secret.len() != 16 {
        return Err(format!("keys.auth must be 16 bytes, got {}", secret.len()));
    }
    Ok(())
}

/// Encrypts `plaintext` for the subscription (`ua_public`, `auth_secret`) with the sender's
/// ephemeral key and salt given: the body of the push, header included.
///
/// # Errors
/// A key that is not a P-256 point, or a payload too large for one record.
pub fn encrypt_with(
    plaintext: &[u8],
    ua_public: &[u8],
    auth_secret: &[u8],
    as_secret: &SecretKey,
    salt: &[u8; 16],
) -> Result<Vec<u8>, String> {
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(format!(
            "the payload has {} bytes; at most {MAX_PLAINTEXT} fit",
            plaintext.len()
        ));
    }
    let ua = PublicKey::from_sec1_bytes(ua_public).map_err(|_| "p256dh is not a P-256 point")?;
    let as_public = as_secret.public_key().to_sec1_bytes();
    let shared = as_secret.diffie_hellman(&ua);
    // RFC 8291 §3.4: IKM = HKDF(auth_secret, ecdh_secret, "WebPush: info" || 0 || ua || as).
    let mut key_info = Vec::with_capacity(14 + 130);
    key_info.extend_from_slice(b"WebPush: info\0");
    key_info.extend_from_slice(ua_public);
    key_info.extend_from_slice(&as_public);
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(auth_secret), shared.raw_secret_bytes())
        .expand(&key_info, &mut ikm)
        .map_err(|e| e.to_string())?;
    // RFC 8188 §2.2/2.3: content-encryption key and nonce from the salt.
    let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .map_err(|e| e.to_string())?;
    prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
        .map_err(|e| e.to_string())?;
    let mut record = Vec::with_capacity(plaintext.len() + 1);
    record.extend_from_slice(plaintext);
    // The delimiter of the last (and only) record, without padding.
    record.push(2);
    let cipher = aes_gcm::Aes128Gcm::new_from_slice(&cek).map_err(|e| e.to_string())?;
    let sealed = cipher
        .encrypt(&nonce.into(), record.as_slice())
        .map_err(|e| e.to_string())?;
    let mut body = Vec::with_capacity(86 + sealed.len());
    body.extend_from_slice(salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(u8::try_from(as_public.len()).unwrap_or(65));
    body.extend_from_slice(&as_public);
    body.extend_from_slice(&sealed);
    Ok(body)
}

/// [`encrypt_with`] a fresh ephemeral key and salt, as every push must.
///
/// # Errors
/// As [`encrypt_with`].
pub fn encrypt(plaintext: &[u8], ua_public: &[u8], auth_secret: &[u8]) -> Result<Vec<u8>, String> {
    let as_secret = random_key();
    let salt: [u8; 16] = rand::random();
    encrypt_with(plaintext, ua_public, auth_secret, &as_secret, &salt)
}

/// A fresh P-256 key (rejection sampling over random scalars: a zero or out-of-range one is
/// astronomically rare).
pub fn random_key() -> SecretKey {
    loop {
        let bytes: [u8; 32] = rand::random();
        if let Ok(key) = SecretKey::from_slice(&bytes) {
            return key;
        }
    }
}

/// The server's VAPID key pair (RFC 8292).
#[derive(Clone)]
pub struct Vapid {
    key: SecretKey,
    subject: Option<String>,
}

impl std::fmt::Debug for Vapid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vapid")
            .field("public_key", &self.public_key())
            .finish_non_exhaustive()
    }
}

impl Vapid {
    /// A key pair from a key and the contact (`mailto:` or `https:`) pushed with every
    /// request.
    pub fn new(key: SecretKey, subject: Option<String>) -> Self {
        Self { key, subject }
    }

    /// The public key as browsers take it (`applicationServerKey`): base64url of the
    /// uncompressed point.
    pub fn public_key(&self) -> String {
        encode(&self.key.public_key().to_sec1_bytes())
    }

    /// `Authorization: vapid t=<JWT>, k=<public key>` for the endpoint's origin, valid for
    /// 12 hours from `now` (RFC 8292 allows at most 24).
    pub fn authorization(&self, endpoint: &url::Url, now: i64) -> String {
        let audience = endpoint.origin().ascii_serialization();
        let mut claims = serde_json::json!({"aud": audience, "exp": now + 12 * 3600});
        if let Some(sub) = &self.subject {
            claims["sub"] = sub.clone().into();
        }
        let signing_input = format!(
            "{}.{}",
            encode(br#"{"typ":"JWT","alg":"ES256"}"#),
            encode(claims.to_string().as_bytes())
        );
        let signer = p256::ecdsa::SigningKey::from(&self.key);
        let signature: p256::ecdsa::Signature = signer.sign(signing_input.as_bytes());
        format!(
            "vapid t={signing_input}.{}, k={}",
            encode(&signature.to_bytes()),
            self.public_key()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> Vec<u8> {
        decode(s).unwrap()
    }

    #[test]
    fn the_rfc_8291_example_encrypts_byte_for_byte() {
        // RFC 8291, Appendix A.
        let as_secret =
            SecretKey::from_slice(&b64("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")).unwrap();
        assert_eq!(
            encode(&as_secret.public_key().to_sec1_bytes()),
            "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        );
        let salt: [u8; 16] = b64("DGv6ra1nlYgDCS1FRnbzlw").try_into().unwrap();
        let body = encrypt_with(
            b"When I grow up, I want to be a watermelon",
            &b64(
                "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
            ),
            &b64("BTBZMqHH6r4Tts7J_aSIgg"),
            &as_secret,
            &salt,
        )
        .unwrap();
        assert_eq!(
            encode(&body),
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        );
    }

    #[test]
    fn subscription_keys_are_checked() {
        let good = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
        assert!(check_keys(good, "BTBZMqHH6r4Tts7J_aSIgg").is_ok());
        assert!(check_keys(good, "BTBZMqHH6r4Tts7J_aSIgg==").is_ok());
        assert!(check_keys(good, "BTBZMqHH6r4T").is_err());
        // Off the curve: the last byte changed.
        let off = format!("{}5", &good[..good.len() - 1]);
        assert!(check_keys(&off, "BTBZMqHH6r4Tts7J_aSIgg").is_err());
        assert!(check_keys("not base64!", "BTBZMqHH6r4Tts7J_aSIgg").is_err());
    }

    #[test]
    fn vapid_tokens_are_es256_over_the_endpoint_origin() {
        use p256::ecdsa::signature::Verifier;
        let vapid = Vapid::new(random_key(), Some("mailto:ops@example.com".into()));
        let url = url::Url::parse("https://push.example.net:8443/wpush/abc").unwrap();
        let header = vapid.authorization(&url, 1_000);
        let (t, k) = header
            .strip_prefix("vapid t=")
            .and_then(|r| r.split_once(", k="))
            .unwrap();
        assert_eq!(k, vapid.public_key());
        let (input, sig) = t.rsplit_once('.').unwrap();
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&b64(k)).unwrap();
        let sig = p256::ecdsa::Signature::from_slice(&b64(sig)).unwrap();
        key.verify(input.as_bytes(), &sig).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&b64(input.split('.').nth(1).unwrap())).unwrap();
        assert_eq!(claims["aud"], "https://push.example.net:8443");
        assert_eq!(claims["exp"], 1_000 + 12 * 3600);
        assert_eq!(claims["sub"], "mailto:ops@example.com");
    }
}
