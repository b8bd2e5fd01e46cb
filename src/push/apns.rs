//! APNs: `POST {LEEKHA_APNS_URL}/3/device/{token}` over HTTP/2, authorised by an ES256
//! provider token (a JWT signed with the team's `.p8` key) that is reused for 40 minutes:
//! Apple refuses tokens older than an hour and throttles renewals more frequent than every
//! 20 minutes. One HTTP/2 connection carries every push, as Apple asks.
//!
//! Device tokens are secrets: they are in the request path, so transport errors are
//! reported without their URL.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::deliver::Answer;
use crate::config::Config;
use crate::webhooks::parse_retry_after;

/// A provider token is renewed this long after it was signed.
pub const RENEW_AFTER: Duration = Duration::from_secs(40 * 60);

/// The longest `apns-collapse-id` APNs takes, in bytes.
pub const MAX_COLLAPSE_ID: usize = 64;

/// Reads and checks `LEEKHA_APNS_KEY_FILE`: a PKCS#8 PEM P-256 private key.
///
/// # Errors
/// A sentence naming the variable and the file.
pub fn read_key(path: &Path) -> Result<jsonwebtoken::EncodingKey, String> {
    let name = |e: &dyn std::fmt::Display| format!("LEEKHA_APNS_KEY_FILE {}: {e}", path.display());
    let pem = std::fs::read_to_string(path).map_err(|e| name(&e))?;
    // jsonwebtoken takes any EC key here and would fail only when signing: check the curve
    // now, so a wrong key stops the server at start.
    <p256::SecretKey as p256::pkcs8::DecodePrivateKey>::from_pkcs8_pem(&pem)
        .map_err(|_| name(&"not a PKCS#8 PEM P-256 private key (the AuthKey_….p8 file)"))?;
    jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()).map_err(|e| name(&e))
}

/// Reads `LEEKHA_APNS_CA_FILE`: one or more PEM certificates.
///
/// # Errors
/// A sentence naming the variable and the file.
pub fn read_ca(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let name = |e: &dyn std::fmt::Display| format!("LEEKHA_APNS_CA_FILE {}: {e}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| name(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| name(&e))?;
    if certs.is_empty() {
        return Err(name(&"no PEM certificate in it"));
    }
    Ok(certs)
}

/// The provider token and when it was signed. Shared by every push of the worker that owns
/// it; `Debug` hides the key and the token.
pub struct Signer {
    key: jsonwebtoken::EncodingKey,
    key_id: String,
    team_id: String,
    token: Option<(String, i64)>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("key_id", &self.key_id)
            .field("team_id", &self.team_id)
            .finish_non_exhaustive()
    }
}

impl Signer {
    /// A signer for the key, its id (`kid`) and the team (`iss`).
    pub fn new(key: jsonwebtoken::EncodingKey, key_id: &str, team_id: &str) -> Self {
        Self {
            key,
            key_id: key_id.to_owned(),
            team_id: team_id.to_owned(),
            token: None,
        }
    }

    /// The token to send at `now` (Unix seconds): the cached one while it is younger than
    /// [`RENEW_AFTER`], otherwise a new one.
    ///
    /// # Errors
    /// The key cannot sign.
    pub fn token(&mut self, now: i64) -> Result<String, String> {
        let renew_after = i64::try_from(RENEW_AFTER.as_secs()).unwrap_or(i64::MAX);
        if let Some((token, iat)) = &self.token
            && (*iat..*iat + renew_after).contains(&now)
        {
            return Ok(token.clone());
        }
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        // Apple's header is `alg` and `kid` alone.
        header.typ = None;
        header.kid = Some(self.key_id.clone());
        let claims = serde_json::json!({"iss": self.team_id, "iat": now});
        let token = jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| format!("cannot sign the APNs provider token: {e}"))?;
        self.token = Some((token.clone(), now));
        Ok(token)
    }

    /// APNs refused `token` (expired or invalid): forgets it, so that the next
    /// [`Signer::token`] signs a new one. Returns whether that one will differ, which it does
    /// not within the second the refused one was signed (the signature is deterministic).
    pub fn refused(&mut self, token: &str, now: i64) -> bool {
        match &self.token {
            Some((cached, iat)) if cached == token && *iat < now => {
                self.token = None;
                true
            }
            // Already renewed since.
            Some((cached, _)) => cached != token,
            None => true,
        }
    }
}

/// One notification for one device.
#[derive(Debug)]
pub struct Message<'a> {
    /// What it says, to which device; `data` goes beside `aps`, and a silent push is sent
    /// with `content-available` at priority 5.
    pub alert: super::Alert<'a>,
    /// A newer push with this id replaces an older one (at most [`MAX_COLLAPSE_ID`] bytes).
    pub collapse_id: &'a str,
    /// Groups the alerts of one game in the notification centre.
    pub thread_id: Option<&'a str>,
    /// Unix seconds after which APNs stops trying to deliver.
    pub expiration: i64,
}

impl Message<'_> {
    /// The JSON body: `aps` and the data fields.
    pub fn payload(&self) -> serde_json::Value {
        let alert = &self.alert;
        let mut aps = serde_json::Map::new();
        if alert.silent {
            aps.insert("content-available".into(), 1.into());
        } else {
            aps.insert(
                "alert".into(),
                serde_json::json!({"title": alert.title, "body": alert.body}),
            );
            aps.insert("sound".into(), "default".into());
        }
        if let Some(thread) = self.thread_id {
            aps.insert("thread-id".into(), thread.into());
        }
        let mut payload = alert.data.clone();
        payload.insert("aps".into(), aps.into());
        payload.into()
    }
}

/// An APNs sender: the signer, the topic, and one HTTP/2 client (built on first use, on the
/// worker's thread: reqwest's blocking client must not be started inside an async runtime).
pub struct Apns {
    signer: Signer,
    url: url::Url,
    topic: String,
    tls: rustls::ClientConfig,
    client: Option<reqwest::blocking::Client>,
}

impl std::fmt::Debug for Apns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apns")
            .field("signer", &self.signer)
            .field("url", &self.url.as_str())
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

/// The APNs variables that must be set together.
const TOGETHER: [&str; 4] = [
    "LEEKHA_APNS_KEY_FILE",
    "LEEKHA_APNS_KEY_ID",
    "LEEKHA_APNS_TEAM_ID",
    "LEEKHA_APNS_TOPIC",
];

/// Whether APNs is configured: key file, key id, team id and topic all set.
pub fn configured(config: &Config) -> bool {
    set(config).iter().all(|s| *s)
}

fn set(config: &Config) -> [bool; 4] {
    [
        config.apns_key_file.is_some(),
        config.apns_key_id.is_some(),
        config.apns_team_id.is_some(),
        config.apns_topic.is_some(),
    ]
}

impl Apns {
    /// The sender the configuration asks for: none when no APNs variable is set.
    ///
    /// # Errors
    /// Some but not all of the four variables set, an unreadable or wrong key or CA file, an
    /// unusable URL: a sentence naming the variable.
    pub fn from_config(config: &Config) -> Result<Option<Self>, String> {
        let (Some(file), Some(key_id), Some(team_id), Some(topic)) = (
            &config.apns_key_file,
            &config.apns_key_id,
            &config.apns_team_id,
            &config.apns_topic,
        ) else {
            // Half a configuration is a mistake, not a choice: say what is missing.
            return match set(config).iter().position(|s| !s) {
                Some(missing) if set(config).contains(&true) => Err(format!(
                    "{} is not set: APNs needs {} together",
                    TOGETHER[missing],
                    TOGETHER.join(", ")
                )),
                // Roots for a sender that is not there: a forgotten half, too.
                _ if config.apns_ca_file.is_some() => Err(format!(
                    "LEEKHA_APNS_CA_FILE is set but APNs is not: it needs {} too",
                    TOGETHER.join(", ")
                )),
                _ => Ok(None),
            };
        };
        let signer = Signer::new(read_key(file)?, key_id, team_id);
        let extra = match &config.apns_ca_file {
            Some(path) => read_ca(path)?,
            None => Vec::new(),
        };
        let url = url::Url::parse(config.apns_url.trim_end_matches('/'))
            .ok()
            .filter(|u| u.scheme() == "https" && u.host().is_some())
            .ok_or_else(|| {
                format!(
                    "LEEKHA_APNS_URL={:?} is not valid: expected an https URL",
                    config.apns_url
                )
            })?;
        Ok(Some(Self {
            signer,
            url,
            topic: topic.clone(),
            tls: tls(extra).map_err(|e| format!("LEEKHA_APNS_CA_FILE: {e}"))?,
            client: None,
        }))
    }

    fn client(&mut self) -> Result<&reqwest::blocking::Client, String> {
        if self.client.is_none() {
            let client = reqwest::blocking::Client::builder()
                .tls_backend_preconfigured(self.tls.clone())
                .timeout(Duration::from_secs(10))
                .connect_timeout(Duration::from_secs(10))
                // One connection, kept open between pushes: Apple treats repeated
                // connecting as a denial-of-service attack.
                .pool_idle_timeout(Duration::from_secs(3600))
                .http2_keep_alive_interval(Duration::from_secs(60))
                .http2_keep_alive_while_idle(true)
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .user_agent("leekha-push/1")
                .build()
                .map_err(|e| format!("the APNs client: {e}"))?;
            self.client = Some(client);
        }
        self.client
            .as_ref()
            .ok_or_else(|| "the APNs client could not be built".to_owned())
    }

    /// Sends one message; a refused provider token is renewed and the message sent once
    /// more.
    ///
    /// # Errors
    /// No answer (transport error, not HTTP/2), or the token cannot be signed.
    pub fn send(&mut self, m: &Message<'_>) -> Result<Answer, String> {
        let mut url = self.url.clone();
        url.path_segments_mut()
            .map_err(|()| "LEEKHA_APNS_URL cannot take a path")?
            .extend(["3", "device", m.alert.token]);
        let body = m.payload().to_string();
        let mut retried = false;
        loop {
            let now = chrono::Utc::now().timestamp();
            let token = self.signer.token(now)?;
            let answer = self.post(&url, &token, m, &body)?;
            let renew = answer.status == 403
                && matches!(
                    reason(&answer.body).as_deref(),
                    Some("ExpiredProviderToken" | "InvalidProviderToken")
                );
            if !renew || retried || !self.signer.refused(&token, chrono::Utc::now().timestamp()) {
                return Ok(answer);
            }
            tracing::info!(
                reason = reason(&answer.body).as_deref(),
                "APNs refused the provider token; signing a new one"
            );
            retried = true;
        }
    }

    fn post(
        &mut self,
        url: &url::Url,
        token: &str,
        m: &Message<'_>,
        body: &str,
    ) -> Result<Answer, String> {
        let topic = self.topic.clone();
        let reply = self
            .client()?
            .post(url.as_str())
            .header("authorization", format!("bearer {token}"))
            .header("apns-topic", topic)
            .header(
                "apns-push-type",
                if m.alert.silent {
                    "background"
                } else {
                    "alert"
                },
            )
            // 5 for background pushes, as Apple requires; 10 (at once) otherwise.
            .header("apns-priority", if m.alert.silent { "5" } else { "10" })
            .header("apns-collapse-id", m.collapse_id)
            .header("apns-expiration", m.expiration.to_string())
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .map_err(describe)?;
        if reply.version() != reqwest::Version::HTTP_2 {
            return Err(format!(
                "APNs answered over {:?}, not HTTP/2",
                reply.version()
            ));
        }
        Ok(read(reply))
    }
}

/// A transport error with its causes (reqwest's own message alone says only "error sending
/// request"), without the URL: it holds the device token.
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = format!("APNs: {e}");
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// Status, `Retry-After`, `apns-id` and up to 2 KiB of body.
fn read(mut reply: reqwest::blocking::Response) -> Answer {
    let header = |name: &str| {
        reply
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let retry_after = header("retry-after").as_deref().and_then(parse_retry_after);
    let id = header("apns-id");
    let status = reply.status().as_u16();
    let mut body = String::new();
    let _ = (&mut reply).take(2048).read_to_string(&mut body);
    Answer {
        status,
        retry_after,
        body,
        id,
    }
}

/// The `reason` of an APNs error body (`{"reason": "BadDeviceToken"}`).
pub fn reason(body: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()?
        .get("reason")?
        .as_str()
        .map(str::to_owned)
}

/// The TLS of the APNs connection: ring (as the rest of the server), the public roots and
/// the extra ones, HTTP/2 alone offered.
fn tls(extra: Vec<CertificateDer<'static>>) -> Result<rustls::ClientConfig, rustls::Error> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for cert in extra {
        roots.add(cert)?;
    }
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::Alert;

    #[test]
    fn half_a_configuration_stops_the_server_naming_what_is_missing() {
        let config = |vars: &[(&str, &str)]| {
            Config::from_lookup(|k| {
                vars.iter()
                    .find(|(v, _)| *v == k)
                    .map(|(_, x)| (*x).to_owned())
            })
            .unwrap()
        };
        assert!(Apns::from_config(&config(&[])).unwrap().is_none());
        let e = Apns::from_config(&config(&[("LEEKHA_APNS_KEY_ID", "KEYID12345")]))
            .err()
            .unwrap();
        assert!(e.starts_with("LEEKHA_APNS_KEY_FILE is not set"), "{e}");
        let e = Apns::from_config(&config(&[("LEEKHA_APNS_CA_FILE", "/nonexistent.pem")]))
            .err()
            .unwrap();
        assert!(
            e.starts_with("LEEKHA_APNS_CA_FILE is set but APNs is not"),
            "{e}"
        );
    }

    const KEY: &str = include_str!("../../tests/api/push/apns_test_key.p8");
    const PUBLIC: &str = include_str!("../../tests/api/push/apns_test_key.pub.pem");

    fn signer() -> Signer {
        let key = jsonwebtoken::EncodingKey::from_ec_pem(KEY.as_bytes()).unwrap();
        Signer::new(key, "KEYID12345", "TEAMID1234")
    }

    #[test]
    fn a_token_is_reused_for_40_minutes_then_renewed() {
        let mut s = signer();
        let t0 = 1_800_000_000;
        let first = s.token(t0).unwrap();
        assert_eq!(s.token(t0 + 1).unwrap(), first);
        assert_eq!(
            s.token(t0 + 40 * 60 - 1).unwrap(),
            first,
            "reused within 40 min"
        );
        let second = s.token(t0 + 40 * 60).unwrap();
        assert_ne!(second, first, "renewed at 40 min, well before Apple's hour");
        assert_eq!(s.token(t0 + 41 * 60).unwrap(), second);
        // A clock that went back does not keep a token from the future.
        assert_ne!(s.token(t0).unwrap(), second);

        let key = jsonwebtoken::DecodingKey::from_ec_pem(PUBLIC.as_bytes()).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        let decoded = jsonwebtoken::decode::<serde_json::Value>(&second, &key, &v).unwrap();
        assert_eq!(decoded.header.kid.as_deref(), Some("KEYID12345"));
        assert_eq!(
            decoded.claims,
            serde_json::json!({"iss": "TEAMID1234", "iat": t0 + 40 * 60})
        );
    }

    #[test]
    fn a_refused_token_is_renewed_once_it_can_differ() {
        let mut s = signer();
        let t0 = 1_800_000_000;
        let first = s.token(t0).unwrap();
        assert!(
            !s.refused(&first, t0),
            "signed this second: a new one would be the same"
        );
        assert!(s.refused(&first, t0 + 5));
        let second = s.token(t0 + 5).unwrap();
        assert_ne!(second, first);
        assert!(s.refused(&first, t0 + 6), "already renewed");
        assert_eq!(s.token(t0 + 6).unwrap(), second);
    }

    #[test]
    fn silent_pushes_are_background_and_alerts_carry_title_and_body() {
        let mut data = serde_json::Map::new();
        data.insert("kind".into(), "your_turn".into());
        let mut m = Message {
            alert: Alert {
                token: "t",
                title: "Your turn",
                body: "Play a card.",
                data: &data,
                silent: false,
            },
            collapse_id: "your_turn:g",
            thread_id: Some("g"),
            expiration: 0,
        };
        assert_eq!(
            m.payload(),
            serde_json::json!({"kind": "your_turn", "aps": {
                "alert": {"title": "Your turn", "body": "Play a card."},
                "sound": "default", "thread-id": "g"}})
        );
        m.alert.silent = true;
        assert_eq!(
            m.payload(),
            serde_json::json!({"kind": "your_turn", "aps": {"content-available": 1, "thread-id": "g"}})
        );
    }

    #[test]
    fn a_key_that_is_not_p256_names_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let rsa = dir.path().join("rsa.pem");
        std::fs::write(&rsa, include_str!("../../tests/api/push/fcm_test_key.pem")).unwrap();
        let err = read_key(&rsa).unwrap_err();
        assert!(
            err.starts_with("LEEKHA_APNS_KEY_FILE") && err.contains("P-256"),
            "{err}"
        );
        let err = read_key(&dir.path().join("missing.p8")).unwrap_err();
        assert!(err.starts_with("LEEKHA_APNS_KEY_FILE"), "{err}");
        let p8 = dir.path().join("key.p8");
        std::fs::write(&p8, KEY).unwrap();
        read_key(&p8).unwrap();
        let err = read_ca(&p8).unwrap_err();
        assert!(err.starts_with("LEEKHA_APNS_CA_FILE"), "{err}");
    }
}
