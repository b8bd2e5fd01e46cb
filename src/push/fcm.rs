//! FCM HTTP v1: an OAuth2 access token from the service account (JWT-bearer grant signed
//! RS256, sent to the credentials' `token_uri`), cached until a minute before it expires;
//! then `POST {LEEKHA_FCM_URL}/v1/projects/{project_id}/messages:send`.

use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::deliver::Answer;

/// The OAuth2 scope of FCM sends.
pub const SCOPE: &str = "https://www.googleapis.com/auth/firebase.messaging";

/// A token is renewed this long before it expires.
const RENEW_BEFORE: Duration = Duration::from_secs(60);

/// The service account's key file, as Firebase hands it out. `Debug` hides the key.
#[derive(Clone, Deserialize)]
pub struct Credentials {
    /// The Firebase project.
    pub project_id: String,
    /// The service account.
    pub client_email: String,
    /// Its RSA private key (PEM).
    pub private_key: String,
    /// Where access tokens come from.
    pub token_uri: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("project_id", &self.project_id)
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

impl Credentials {
    /// Reads and checks `LEEKHA_FCM_CREDENTIALS_FILE`.
    ///
    /// # Errors
    /// A sentence naming the file.
    pub fn read(path: &std::path::Path) -> Result<Self, String> {
        let name = |e: String| format!("LEEKHA_FCM_CREDENTIALS_FILE {}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| name(e.to_string()))?;
        let creds: Self = serde_json::from_str(&text)
            .map_err(|e| name(format!("not a service-account key: {e}")))?;
        jsonwebtoken::EncodingKey::from_rsa_pem(creds.private_key.as_bytes())
            .map_err(|e| name(format!("private_key is not an RSA key: {e}")))?;
        Ok(creds)
    }
}

/// One FCM message.
#[derive(Debug)]
pub struct Message<'a> {
    /// What it says, to which device.
    pub alert: super::Alert<'a>,
    /// A newer message with this key replaces an older one.
    pub collapse_key: &'a str,
    /// How long FCM may keep it for a device that is offline (its default is four weeks).
    pub ttl_seconds: u64,
}

/// An FCM sender with its cached access token, shared by the push worker's lanes: they ask
/// for a token one at a time (so one asks, the others wait for its answer), and send side by
/// side.
pub struct Fcm {
    creds: Credentials,
    key: jsonwebtoken::EncodingKey,
    url: String,
    token: Mutex<Option<(String, Instant)>>,
}

impl std::fmt::Debug for Fcm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fcm")
            .field("creds", &self.creds)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct TokenReply {
    access_token: String,
    expires_in: Option<u64>,
}

impl Fcm {
    /// A sender for the credentials and base URL.
    ///
    /// # Errors
    /// A private key that is not RSA.
    pub fn new(creds: Credentials, url: &str) -> Result<Self, String> {
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(creds.private_key.as_bytes())
            .map_err(|e| e.to_string())?;
        Ok(Self {
            creds,
            key,
            url: url.trim_end_matches('/').to_owned(),
            token: Mutex::new(None),
        })
    }

    /// The cached access token, or a new one from `token_uri`.
    fn access_token(&self, agent: &ureq::Agent) -> Result<String, String> {
        let mut cached = self.cached();
        if let Some((token, until)) = &*cached
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let now = chrono::Utc::now().timestamp();
        let claims = serde_json::json!({
            "iss": self.creds.client_email,
            "scope": SCOPE,
            "aud": self.creds.token_uri,
            "iat": now,
            "exp": now + 3600,
        });
        let assertion = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
            &claims,
            &self.key,
        )
        .map_err(|e| format!("cannot sign the token request: {e}"))?;
        let mut reply = agent
            .post(&self.creds.token_uri)
            .send_form([
                ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                ("assertion", assertion.as_str()),
            ])
            .map_err(|e| format!("token request: {e}"))?;
        let status = reply.status().as_u16();
        let mut text = String::new();
        reply
            .body_mut()
            .as_reader()
            .take(64 * 1024)
            .read_to_string(&mut text)
            .map_err(|e| format!("token reply: {e}"))?;
        if !(200..300).contains(&status) {
            return Err(format!(
                "token request answered {status}: {}",
                text.chars().take(200).collect::<String>()
            ));
        }
        let parsed: TokenReply =
            serde_json::from_str(&text).map_err(|e| format!("token reply: {e}"))?;
        let lifetime = Duration::from_secs(parsed.expires_in.unwrap_or(3600));
        let until = Instant::now() + lifetime.saturating_sub(RENEW_BEFORE);
        *cached = Some((parsed.access_token.clone(), until));
        Ok(parsed.access_token)
    }

    /// The token cache; one whose holder panicked is still a cache (at worst empty).
    fn cached(&self) -> std::sync::MutexGuard<'_, Option<(String, Instant)>> {
        self.token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends one message.
    ///
    /// # Errors
    /// No access token, or the request did not get an answer.
    pub fn send(&self, agent: &ureq::Agent, msg: &Message<'_>) -> Result<Answer, String> {
        let bearer = self.access_token(agent)?;
        let m = &msg.alert;
        let mut message = serde_json::json!({
            "token": m.token,
            "data": m.data,
            "android": {
                "collapse_key": msg.collapse_key,
                "priority": if m.silent { "normal" } else { "high" },
                "ttl": format!("{}s", msg.ttl_seconds),
            },
        });
        if !m.silent {
            message["notification"] = serde_json::json!({"title": m.title, "body": m.body});
        }
        let url = format!(
            "{}/v1/projects/{}/messages:send",
            self.url, self.creds.project_id
        );
        let body = serde_json::json!({ "message": message }).to_string();
        let reply = agent
            .post(&url)
            .header("authorization", &format!("Bearer {bearer}"))
            .header("content-type", "application/json")
            .send(body.as_bytes())
            .map_err(|e| e.to_string())?;
        let answer = Answer::read(reply);
        if answer.status == 401 {
            // Revoked or expired early: the next attempt asks for a new token (unless another
            // lane got a new one meanwhile).
            let mut cached = self.cached();
            if cached.as_ref().is_some_and(|(token, _)| *token == bearer) {
                *cached = None;
            }
        }
        Ok(answer)
    }
}
