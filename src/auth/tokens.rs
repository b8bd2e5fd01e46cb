//! Access tokens (HS256 JWT) and refresh tokens (opaque, stored hashed).

use std::num::NonZeroUsize;

use jsonwebtoken::{
    Algorithm, DecodingKey, EncodingKey, Header, Validation, errors::ErrorKind,
    get_current_timestamp,
};
use lru::LruCache;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Role, Secret};

/// The claims of an access token.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Claims {
    /// The user id.
    pub sub: String,
    /// The role when the token was issued (the server re-reads it from the database).
    pub role: String,
    /// Expiry, seconds since the epoch.
    pub exp: i64,
    /// Issued at, seconds since the epoch.
    pub iat: i64,
    /// A unique token id.
    pub jti: String,
    /// Which key signed it (also in the header).
    pub kid: String,
    /// The session it belongs to: the refresh-token family of the login. A logout of that
    /// session ends the streams its tokens opened. Absent in tokens from before 1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    /// Past its `exp`.
    Expired,
    /// Malformed, wrong signature, wrong algorithm, unknown key.
    Invalid,
}

struct Key {
    kid: String,
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl Key {
    fn new(secret: &Secret) -> Self {
        let bytes = secret.expose().as_bytes();
        // The key id is a fingerprint: it names the key without revealing it.
        let kid = hex::encode(&Sha256::digest(bytes)[..8]);
        Self {
            kid,
            encoding: EncodingKey::from_secret(bytes).expect("secret is not empty"),
            decoding: DecodingKey::from_secret(bytes).expect("secret is not empty"),
        }
    }
}

/// The signing keys: the current one signs, the current and the previous one verify, so a
/// rotation does not log everybody out.
pub struct TokenKeys {
    current: Key,
    previous: Option<Key>,
    access_ttl_secs: i64,
    validation: Validation,
    /// Tokens a full check accepted, by their whole text. A client sends the same access
    /// token with every request of its lifetime, and checking it again (two base64 decodes,
    /// three JSON parses and an HMAC) was about 5 % of the server's time under load. The
    /// same text was signed by the same key, so a hit is the same verdict but for expiry,
    /// which is checked again on every hit.
    verified: Mutex<LruCache<Box<str>, Claims>>,
}

/// How many verified tokens are kept: about 2 MB at most.
const VERIFIED_TOKENS: usize = 4096;

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKeys")
            .field("kid", &self.current.kid)
            .finish_non_exhaustive()
    }
}

impl TokenKeys {
    /// Keys from the current and optional previous secret.
    pub fn new(current: &Secret, previous: Option<&Secret>, access_ttl_secs: i64) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "sub", "iat"]);
        Self {
            current: Key::new(current),
            previous: previous.map(Key::new),
            access_ttl_secs,
            validation,
            verified: Mutex::new(LruCache::new(
                NonZeroUsize::new(VERIFIED_TOKENS).expect("not zero"),
            )),
        }
    }

    /// Lifetime of an access token, in seconds.
    pub fn access_ttl_secs(&self) -> i64 {
        self.access_ttl_secs
    }

    /// Signs an access token for the user at time `now` (seconds since the epoch), in the
    /// session `sid`.
    pub fn issue(&self, user_id: &str, role: Role, now: i64, sid: Option<&str>) -> String {
        let claims = Claims {
            sid: sid.map(str::to_owned),
            sub: user_id.to_owned(),
            role: role.as_str().to_owned(),
            iat: now,
            exp: now + self.access_ttl_secs,
            jti: uuid::Uuid::new_v4().to_string(),
            kid: self.current.kid.clone(),
        };
        self.sign(&claims)
    }

    /// Signs arbitrary claims with the current key (tests use it to make expired tokens).
    pub fn sign(&self, claims: &Claims) -> String {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(self.current.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.current.encoding)
            .expect("HS256 signing does not fail")
    }

    /// Verifies signature, algorithm and expiry.
    ///
    /// # Errors
    /// [`TokenError::Expired`] or [`TokenError::Invalid`].
    pub fn verify(&self, token: &str) -> Result<Claims, TokenError> {
        self.verify_at(token, get_current_timestamp())
    }

    /// [`Self::verify`] with a token seen before judged expired as of `now` (seconds since
    /// the epoch); a token not seen before is checked on jsonwebtoken's clock.
    fn verify_at(&self, token: &str, now: u64) -> Result<Claims, TokenError> {
        if let Some(claims) = self.verified.lock().get(token) {
            // jsonwebtoken's own test with no leeway: expired once `exp` is past.
            return match u64::try_from(claims.exp) {
                Ok(exp) if exp >= now => Ok(claims.clone()),
                _ => Err(TokenError::Expired),
            };
        }
        let claims = self.verify_afresh(token)?;
        self.verified.lock().put(token.into(), claims.clone());
        Ok(claims)
    }

    /// The full check: signature, algorithm and expiry.
    fn verify_afresh(&self, token: &str) -> Result<Claims, TokenError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| TokenError::Invalid)?;
        if header.alg != Algorithm::HS256 {
            return Err(TokenError::Invalid);
        }
        let keys: Vec<&Key> = match header.kid.as_deref() {
            Some(kid) => [Some(&self.current), self.previous.as_ref()]
                .into_iter()
                .flatten()
                .filter(|k| k.kid == kid)
                .collect(),
            None => [Some(&self.current), self.previous.as_ref()]
                .into_iter()
                .flatten()
                .collect(),
        };
        let mut outcome = Err(TokenError::Invalid);
        for key in keys {
            match jsonwebtoken::decode::<Claims>(token, &key.decoding, &self.validation) {
                Ok(data) => return Ok(data.claims),
                Err(e) if matches!(e.kind(), ErrorKind::ExpiredSignature) => {
                    outcome = Err(TokenError::Expired)
                }
                Err(_) => {}
            }
        }
        outcome
    }
}

/// A new refresh token: 32 random bytes, URL-safe base64.
pub fn new_refresh_token() -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The stored form of a refresh token.
pub fn hash_refresh_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(secret: &str) -> TokenKeys {
        TokenKeys::new(&Secret::new(secret), None, 900)
    }

    #[test]
    fn a_token_verifies_and_carries_its_claims() {
        let k = keys("0123456789abcdef0123456789abcdef");
        let t = k.issue("u1", Role::Admin, 1_000, None);
        let err = k.verify(&t).unwrap_err();
        assert_eq!(
            err,
            TokenError::Expired,
            "issued at t=1000 it expired long ago"
        );
        let now = chrono::Utc::now().timestamp();
        let claims = k.verify(&k.issue("u1", Role::Admin, now, None)).unwrap();
        assert_eq!((claims.sub.as_str(), claims.role.as_str()), ("u1", "admin"));
        assert_eq!(claims.exp - claims.iat, 900);
    }

    #[test]
    fn tampering_and_other_keys_are_refused_but_the_previous_key_is_accepted() {
        let now = chrono::Utc::now().timestamp();
        let old = keys("old-secret-old-secret-old-secret-1");
        let token = old.issue("u1", Role::Player, now, None);
        let rotated = TokenKeys::new(
            &Secret::new("new-secret-new-secret-new-secret-2"),
            Some(&Secret::new("old-secret-old-secret-old-secret-1")),
            900,
        );
        assert!(rotated.verify(&token).is_ok());
        assert_eq!(
            keys("another-secret-another-secret-333").verify(&token),
            Err(TokenError::Invalid)
        );

        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[2] = parts[2].chars().rev().collect();
        assert_eq!(old.verify(&parts.join(".")), Err(TokenError::Invalid));
    }

    #[test]
    fn a_token_verified_before_still_expires() {
        let k = keys("a-secret-that-is-long-enough-for-tests!!");
        let now = i64::try_from(get_current_timestamp()).unwrap();
        let token = k.issue("u1", Role::Player, now, None);
        let first = k.verify(&token).unwrap();
        let exp = u64::try_from(first.exp).unwrap();
        assert_eq!(k.verify_at(&token, exp), Ok(first), "valid up to its exp");
        assert_eq!(k.verify_at(&token, exp + 1), Err(TokenError::Expired));
        // What the full check refused is never kept.
        let forged = format!("{token}x");
        assert_eq!(k.verify(&forged), Err(TokenError::Invalid));
        assert_eq!(k.verify(&forged), Err(TokenError::Invalid));
    }

    #[test]
    fn refresh_tokens_are_random_and_hashed() {
        let a = new_refresh_token();
        assert_ne!(a, new_refresh_token());
        assert_eq!(hash_refresh_token(&a).len(), 64);
        assert!(a.len() >= 43);
    }
}
