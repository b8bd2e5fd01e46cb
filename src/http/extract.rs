//! Request extractors shared by handlers: the authenticated caller, the client IP and an
//! optional JSON body.

use std::future::Future;
use std::pin::Pin;

use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};

use crate::app::AppState;
use crate::auth::Role;
use crate::auth::tokens::TokenError;
use crate::db::users::UserRow;
use crate::error::Error;
use crate::http::json_body::{UniqueKeys, object};
use crate::http::problem::ApiError;

/// The caller, authenticated by a bearer access token and re-checked against the database on
/// every request, so a ban, a deletion or a role change takes effect at once.
#[derive(Debug, Clone)]
pub struct AuthUser {
    /// The account.
    pub user: UserRow,
    /// The role as stored now.
    pub role: Role,
    /// The session (refresh-token family) the access token belongs to, when it names one.
    pub session: Option<String>,
}

impl AuthUser {
    /// The user id.
    pub fn id(&self) -> &str {
        &self.user.id
    }

    /// Runs `use_case(conn, caller_id)` on the blocking pool: the one shape of a handler's
    /// database round for the caller.
    ///
    /// # Errors
    /// What the use case returns, and pool errors.
    pub async fn run<T, F>(&self, state: &AppState, use_case: F) -> Result<T, Error>
    where
        F: FnOnce(&mut crate::db::AnyConnection, &str) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        let id = self.id().to_owned();
        state.db.run(move |conn| use_case(conn, &id)).await
    }
}

impl FromRequest for AuthUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let caller = Caller::from_request(req, payload);
        Box::pin(async move {
            let state = state.ok_or_else(|| Error::internal("AppState missing"))?;
            let caller = caller.await?;
            Ok(state.db.run(move |conn| caller.check(conn)).await?)
        })
    }
}

/// The caller as its access token says: the token is verified (401 otherwise), the account
/// is not checked yet. The busiest handlers take this instead of [`AuthUser`] and call
/// [`Caller::check`] in the same database round as their own work, which saves a round
/// trip to a blocking thread per request; the checks are the same.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The user id the token names.
    pub user_id: String,
    /// The session the token belongs to (`sid`), when it names one.
    pub session: Option<String>,
}

impl Caller {
    /// Loads the account and applies [`crate::auth::judge`]: 401 when it no longer
    /// exists, 403 `banned`; then 401 when the session the token names has ended (a logout,
    /// a password change that ended the account's other sessions, a replayed refresh
    /// token), so that a stolen token stops at once where the account is concerned.
    ///
    /// # Errors
    /// As described, and database errors.
    pub fn check(&self, conn: &mut crate::db::AnyConnection) -> Result<AuthUser, Error> {
        let (user, role) = crate::auth::check_account(conn, &self.user_id)?;
        if let Some(sid) = self.session.as_deref()
            && !crate::accounts::session_open(conn, sid)?
        {
            return Err(Error::unauthorized(
                "invalid_token",
                "this session has ended (logged out, or ended by a password change or a \
                 replayed refresh token); log in again",
            ));
        }
        Ok(AuthUser {
            user,
            role,
            session: self.session.clone(),
        })
    }
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let verify = || {
            let state = req
                .app_data::<web::Data<AppState>>()
                .ok_or_else(|| Error::internal("AppState missing"))?;
            let token = bearer(req)?;
            let claims = state.keys.verify(&token).map_err(|e| match e {
                TokenError::Expired => {
                    Error::unauthorized("invalid_token", "the access token has expired; refresh it")
                }
                TokenError::Invalid => {
                    Error::unauthorized("invalid_token", "the access token is not valid")
                }
            })?;
            Ok(Caller {
                user_id: claims.sub,
                session: claims.sid,
            })
        };
        std::future::ready(verify())
    }
}

fn bearer(req: &HttpRequest) -> Result<String, Error> {
    let value = req.headers().get(header::AUTHORIZATION).ok_or_else(|| {
        Error::unauthorized("missing_token", "send Authorization: Bearer <access token>")
    })?;
    let value = value.to_str().map_err(|_| {
        Error::unauthorized("invalid_token", "the Authorization header is not ASCII")
    })?;
    let (scheme, token) = value.split_once(' ').ok_or_else(|| {
        Error::unauthorized(
            "invalid_token",
            "expected Authorization: Bearer <access token>",
        )
    })?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(Error::unauthorized(
            "invalid_token",
            "expected Authorization: Bearer <access token>",
        ));
    }
    Ok(token.trim().to_owned())
}

/// The client's address for rate limiting, as a key: the address as text, except that an
/// IPv6 address stands for its /64 (one subscriber's usual allocation, so a client cannot
/// take a fresh key per address) and an IPv4-mapped one for its IPv4 address.
///
/// Without a trusted proxy in front, the peer. Behind one (`LEEKHA_TRUST_PROXY`, or the
/// peer in `LEEKHA_TRUSTED_PROXIES`), the right-most forwarded hop that no trusted proxy
/// added: every proxy appends the address it saw, so the entries left of that hop are
/// whatever the client chose to send, and cannot be believed. Of the two headers,
/// `X-Forwarded-For` when there is one, else `Forwarded`: the proxies in use (nginx,
/// HAProxy, the cloud load balancers) append to `X-Forwarded-For` and pass a `Forwarded`
/// on as the client wrote it, so reading that one would let a client choose its key, or
/// name someone else's and spend their quota. (Behind a proxy that writes only `Forwarded`,
/// have it drop a client's `X-Forwarded-For`.)
pub fn client_key(req: &HttpRequest, config: &crate::config::Config) -> String {
    let Some(peer) = req.peer_addr().map(|a| a.ip()) else {
        return "unknown".to_owned();
    };
    if !(config.trust_proxy || config.trusted_proxies.contains(peer)) {
        return rate_key(peer);
    }
    // The header's presence decides, not whether it holds an address: a proxy that writes
    // `X-Forwarded-For: unknown` must not hand the choice to the client's `Forwarded`.
    let hops = if req.headers().contains_key("x-forwarded-for") {
        x_forwarded_hops(req.headers())
    } else {
        forwarded_hops(req.headers())
    };
    let client = hops
        .iter()
        .rev()
        .find(|hop| !config.trusted_proxies.contains(**hop))
        .or(hops.first())
        .copied()
        .unwrap_or(peer);
    rate_key(client)
}

/// The rate-limit key of one address (see [`client_key`]).
fn rate_key(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                let net = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
                format!("{net}/64")
            }
        },
    }
}

/// The values of header `name`, split at commas, trimmed.
fn header_list(headers: &header::HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_owned())
        .collect()
}

/// The client addresses that `Forwarded` (RFC 7239 `for=`) lists, first hop first; entries
/// that are not IP addresses (`unknown`, obfuscated names) are skipped.
fn forwarded_hops(headers: &header::HeaderMap) -> Vec<std::net::IpAddr> {
    header_list(headers, "forwarded")
        .into_iter()
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (key, value) = pair.trim().split_once('=')?;
                key.eq_ignore_ascii_case("for")
                    .then(|| value.trim().trim_matches('"').to_owned())
            })
        })
        .filter_map(|hop| parse_hop(&hop))
        .collect()
}

/// The addresses `X-Forwarded-For` lists, first hop first, as [`forwarded_hops`].
fn x_forwarded_hops(headers: &header::HeaderMap) -> Vec<std::net::IpAddr> {
    header_list(headers, "x-forwarded-for")
        .iter()
        .filter_map(|hop| parse_hop(hop))
        .collect()
}

/// `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]:4711`.
fn parse_hop(hop: &str) -> Option<std::net::IpAddr> {
    if let Ok(ip) = hop.parse() {
        return Some(ip);
    }
    if let Ok(addr) = hop.parse::<std::net::SocketAddr>() {
        return Some(addr.ip());
    }
    hop.strip_prefix('[')?.split(']').next()?.parse().ok()
}

/// An authenticated administrator: [`AuthUser`] plus the role check. Everyone else gets 403
/// `forbidden` (401 without a valid token, 403 `banned` when banned, as for [`AuthUser`]).
/// The role is read from the database on each request, so a demotion takes effect at once.
#[derive(Debug, Clone)]
pub struct AdminUser(pub AuthUser);

impl AdminUser {
    /// The administrator's user id.
    pub fn id(&self) -> &str {
        self.0.id()
    }
}

impl FromRequest for AdminUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let user = AuthUser::from_request(req, payload);
        Box::pin(async move {
            let user = user.await?;
            if user.role != Role::Admin {
                return Err(Error::forbidden("this operation is for administrators").into());
            }
            Ok(AdminUser(user))
        })
    }
}

/// What every handler of a group takes, extracted as one: the state, the caller (an
/// [`AuthUser`] or an [`AdminUser`]), what the path names and what else the route reads
/// (a body or a query; `()` where it reads nothing).
///
/// Extracted from the tuple `(State, U, P, I)`, the arguments the handlers took one by one
/// before, so the same request meets the same error first.
#[derive(Debug)]
pub struct Call<U, P = (), I = ()> {
    /// The application state.
    pub state: web::Data<AppState>,
    /// The caller.
    pub user: U,
    /// What the path names.
    pub path: P,
    /// The body or the query.
    pub input: I,
}

impl<U, P, I> Call<U, P, I> {
    /// Splits off the body or query, for a handler that consumes it and goes on with the
    /// rest.
    pub fn split(self) -> (Call<U, P>, I) {
        let Call {
            state,
            user,
            path,
            input,
        } = self;
        let rest = Call {
            state,
            user,
            path,
            input: (),
        };
        (rest, input)
    }
}

impl<U, P, I> FromRequest for Call<U, P, I>
where
    U: FromRequest + 'static,
    P: FromRequest + 'static,
    I: FromRequest + 'static,
{
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let parts = <(web::Data<AppState>, U, P, I)>::from_request(req, payload);
        Box::pin(async move {
            let (state, user, path, input) = parts.await?;
            Ok(Self {
                state,
                user,
                path,
                input,
            })
        })
    }
}

/// A signed-in user's request, as the handlers of the caller's own things take it: the
/// state, the caller, what the path names and the body or query the route reads.
pub type Mine<P = (), I = ()> = Call<AuthUser, P, I>;

impl<P, I> Mine<P, I> {
    /// Runs `use_case(conn, caller_id)` on the blocking pool: the one shape of a handler's
    /// database round for the caller.
    ///
    /// # Errors
    /// What the use case returns, and pool errors.
    pub async fn mine<T, F>(&self, use_case: F) -> Result<T, Error>
    where
        F: FnOnce(&mut crate::db::AnyConnection, &str) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        self.user.run(&self.state, use_case).await
    }
}

/// Whether a request body of this media type is read as JSON: `application/json` or any
/// `+json` type, parameters (`charset=utf-8`) aside. Endpoints with a required body
/// ([`Json`]) and those with an optional one ([`OptionalJson`]) accept the same types; not
/// actix-web's wider rule (any `json` subtype: `text/json` too).
pub fn is_json(mime: &actix_web::mime::Mime) -> bool {
    use actix_web::mime::{APPLICATION, JSON};
    (mime.type_() == APPLICATION && mime.subtype() == JSON) || mime.suffix() == Some(JSON)
}

/// The problem for a body that could not be read, in words a client can act on: actix's own
/// messages carry Rust debug output (`Some(Custom { kind: InvalidInput, … })`).
pub fn unreadable_body(err: &actix_web::error::PayloadError, limit: usize) -> Error {
    use actix_web::error::PayloadError as P;
    match err {
        P::Overflow => Error::new(
            crate::error::Kind::PayloadTooLarge,
            "payload_too_large",
            format!("the body is larger than the limit of {limit} bytes"),
        ),
        P::EncodingCorrupted => {
            Error::bad_request("the body is not valid for its Content-Encoding")
        }
        P::Incomplete(_) => Error::bad_request(
            "the body could not be read: it ended early, its chunked framing is broken, or it \
             is not valid for its Content-Encoding",
        ),
        _ => Error::bad_request("the body could not be read"),
    }
}

/// The body limit the app was built with (`LEEKHA_MAX_BODY_BYTES`): the `PayloadConfig` it
/// sets does not tell it.
pub fn body_limit(req: &HttpRequest) -> usize {
    req.app_data::<web::Data<AppState>>()
        .map_or(0, |state| state.config.max_body_bytes)
}

/// The seat a path names (`/seats/{seat}`), read from its text so that 4, 256, -1 and `x`
/// are all refused alike, by what a seat is.
///
/// # Errors
/// `validation_failed` for anything but 0..=3.
pub fn path_seat(raw: &str) -> Result<crate::rules::Seat, Error> {
    raw.parse()
        .ok()
        .and_then(crate::rules::Seat::new)
        .ok_or_else(|| Error::validation(format!("seat must be 0..=3, got {raw:?}")))
}

/// The problem for a body serde_json could not read: a wrong value in well-formed JSON is
/// `validation_failed`, anything else `bad_request`.
pub fn json_problem(e: &serde_json::Error) -> Error {
    if e.is_data() {
        Error::validation(e.to_string())
    } else {
        Error::bad_request(format!("malformed JSON: {e}"))
    }
}

/// 415 `unsupported_media_type`, for a body that is not declared as JSON.
pub fn unsupported_media_type() -> Error {
    Error::new(
        crate::error::Kind::UnsupportedMediaType,
        "unsupported_media_type",
        "send the body as Content-Type: application/json",
    )
}

/// An optional JSON body: an empty one (or only white space) gives the defaults.
///
/// A body is JSON only when the request says so, as for a required body: a `Content-Type`
/// that is not JSON ([`is_json`]) gets 415 `unsupported_media_type`, and so does a body
/// sent with no `Content-Type` at all. An empty body with no `Content-Type` is the
/// ordinary way to ask for the defaults.
#[derive(Debug, Clone, Default)]
pub struct OptionalJson<T>(pub T);

impl<T: serde::de::DeserializeOwned + Default + 'static> FromRequest for OptionalJson<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let declared_json = match req.mime_type() {
            Ok(None) => None,
            Ok(Some(mime)) => Some(is_json(&mime)),
            // An unreadable Content-Type declares nothing we can read.
            Err(_) => Some(false),
        };
        if declared_json == Some(false) {
            return Box::pin(std::future::ready(Err(refuse(unsupported_media_type()))));
        }
        let limit = body_limit(req);
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let body = body.await.map_err(|e| match e.as_error::<PayloadError>() {
                Some(unreadable) => refuse(unreadable_body(unreadable, limit)),
                None => e,
            })?;
            if body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Self(T::default()));
            }
            if declared_json.is_none() {
                return Err(refuse(unsupported_media_type()));
            }
            let UniqueKeys(value) =
                serde_json::from_slice(&body).map_err(|e| refuse(json_problem(&e)))?;
            object(value).map(Self).map_err(refuse)
        })
    }
}

/// A required JSON body, which must be an object.
///
/// actix-web's `Json` reads the body (its `JsonConfig`: size limit, media type, and the
/// problem for each failure); what it reads must then be an object, as every request schema
/// of the API is (see [`object`]).
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T> Json<T> {
    /// The body.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Json<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: serde::de::DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = UniqueKeys::from_request(req, payload);
        Box::pin(async move {
            let UniqueKeys(value) = body.await?;
            object(value).map(Self).map_err(refuse)
        })
    }
}

/// A required JSON body of any shape, for a handler that judges its shape later: read as
/// [`Json`] reads its body.
impl FromRequest for UniqueKeys {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        // actix-web reads any `json` subtype; the API reads only those of [`is_json`].
        if let Ok(Some(mime)) = req.mime_type()
            && !is_json(&mime)
        {
            return Box::pin(std::future::ready(Err(refuse(unsupported_media_type()))));
        }
        let body = web::Json::<UniqueKeys>::from_request(req, payload);
        Box::pin(async move { Ok(body.await?.into_inner()) })
    }
}

fn refuse(error: Error) -> actix_web::Error {
    ApiError::from(error).into()
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;
    use crate::config::Config;

    fn config(vars: &[(&str, &str)]) -> Config {
        Config::from_lookup(|k| {
            vars.iter()
                .find(|(v, _)| *v == k)
                .map(|(_, x)| x.to_string())
        })
        .unwrap()
    }

    fn ip_of(config: &Config, peer: &str, headers: &[(&str, &str)]) -> String {
        let mut req = TestRequest::default().peer_addr(peer.parse().unwrap());
        for (name, value) in headers {
            req = req.insert_header((*name, *value));
        }
        client_key(&req.to_http_request(), config)
    }

    #[test]
    fn forwarded_headers_count_only_behind_a_trusted_proxy() {
        let spoofed = [("x-forwarded-for", "6.6.6.6")];
        assert_eq!(
            ip_of(&config(&[]), "203.0.113.9:5000", &spoofed),
            "203.0.113.9"
        );
        let behind = config(&[("LEEKHA_TRUSTED_PROXIES", "10.0.0.0/8")]);
        assert_eq!(ip_of(&behind, "203.0.113.9:5000", &spoofed), "203.0.113.9");
        assert_eq!(ip_of(&behind, "10.1.2.3:5000", &spoofed), "6.6.6.6");
    }

    #[test]
    fn the_client_is_the_right_most_hop_no_trusted_proxy_added() {
        // The client sent a forged first entry; its real address was appended by our proxy.
        let chain = [("x-forwarded-for", "1.2.3.4, 198.51.100.7, 10.0.0.2")];
        let behind = config(&[("LEEKHA_TRUSTED_PROXIES", "10.0.0.0/8")]);
        assert_eq!(ip_of(&behind, "10.0.0.1:80", &chain), "198.51.100.7");
        // With only the peer trusted, the hop it appended is the client.
        let one_hop = config(&[("LEEKHA_TRUST_PROXY", "1")]);
        assert_eq!(
            ip_of(
                &one_hop,
                "10.0.0.1:80",
                &[("x-forwarded-for", "1.2.3.4, 198.51.100.7")]
            ),
            "198.51.100.7"
        );
        // RFC 7239, with ports and brackets; an IPv6 client stands for its /64.
        let forwarded = [(
            "forwarded",
            "for=1.2.3.4, for=\"[2001:db8::7]:4711\";proto=https",
        )];
        assert_eq!(ip_of(&behind, "10.0.0.1:80", &forwarded), "2001:db8::/64");
        // Both headers: X-Forwarded-For, which the proxy appended to; the Forwarded the
        // client wrote neither chooses its key nor names someone else's.
        let both = [
            ("forwarded", "for=1.1.12.7"),
            ("x-forwarded-for", "9.9.9.12"),
        ];
        assert_eq!(ip_of(&one_hop, "10.0.0.1:80", &both), "9.9.9.12");
        // An X-Forwarded-For without an address leaves the peer, not the client's Forwarded.
        let unknown = [
            ("forwarded", "for=1.1.12.7"),
            ("x-forwarded-for", "unknown"),
        ];
        assert_eq!(ip_of(&one_hop, "10.0.0.1:80", &unknown), "10.0.0.1");
        // Every hop trusted: the first one.
        let inner = [("x-forwarded-for", "10.9.9.9, 10.0.0.2")];
        assert_eq!(ip_of(&behind, "10.0.0.1:80", &inner), "10.9.9.9");
    }

    #[test]
    fn an_ipv6_client_is_counted_by_its_slash_64_and_a_mapped_ipv4_as_ipv4() {
        let one_hop = config(&[("LEEKHA_TRUST_PROXY", "1")]);
        let a = ip_of(
            &one_hop,
            "10.0.0.1:80",
            &[("x-forwarded-for", "2001:db8:1:2::1")],
        );
        let b = ip_of(
            &one_hop,
            "10.0.0.1:80",
            &[("x-forwarded-for", "2001:db8:1:2:ffff::6")],
        );
        assert_eq!(a, "2001:db8:1:2::/64");
        assert_eq!(a, b);
        let other = ip_of(
            &one_hop,
            "10.0.0.1:80",
            &[("x-forwarded-for", "2001:db8:1:3::1")],
        );
        assert_ne!(a, other);
        assert_eq!(
            ip_of(
                &one_hop,
                "10.0.0.1:80",
                &[("x-forwarded-for", "::ffff:9.9.9.7")]
            ),
            "9.9.9.7"
        );
        assert_eq!(ip_of(&config(&[]), "[::ffff:9.9.9.7]:80", &[]), "9.9.9.7");
    }

    #[test]
    fn a_bad_trusted_proxy_list_is_refused() {
        assert!(crate::config::TrustedProxies::parse("10.0.0.0/8, nonsense").is_err());
        assert!(crate::config::TrustedProxies::parse("").unwrap() == Default::default());
    }
}
