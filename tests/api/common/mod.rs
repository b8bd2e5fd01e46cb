#![allow(dead_code, reason = "each test uses a subset of the fixtures")]
//! Test fixtures: a fresh database per test on the backend chosen by
//! `LEEKHA_TEST_DATABASE_URL` (unset: a SQLite temp file), and helpers to call the real app.

pub mod play;
pub mod proxy;

use std::sync::OnceLock;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::HeaderMap;
use actix_web::test;
use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection, RunQueryDsl};
use leekha::app::AppState;
use leekha::config::{Config, DatabaseUrl};
use leekha::db::Db;
use leekha::http::build_app;

/// The PostgreSQL server URL to create test databases on, if tests run on PostgreSQL.
pub fn pg_base_url() -> Option<String> {
    std::env::var("LEEKHA_TEST_DATABASE_URL")
        .ok()
        .filter(|u| u.starts_with("postgres"))
}

/// A database that exists for one test and is dropped after it.
pub struct TestDb {
    /// Where it is.
    pub url: DatabaseUrl,
    pg_name: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// A migrated database (PostgreSQL: cloned from a migrated template).
    pub fn migrated() -> Self {
        match pg_base_url() {
            Some(base) => {
                let template = pg_template(&base);
                let name = unique_name("leekha_test");
                let mut admin = PgConnection::establish(&base).expect("connect to the test server");
                // Cloning fails while another session is still attached to the template
                // (another test process finishing its own clone): retry briefly.
                let mut tries = 0;
                loop {
                    match admin
                        .batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
                    {
                        Ok(()) => break,
                        Err(e) if tries < 50 => {
                            tries += 1;
                            let _ = e;
                            std::thread::sleep(std::time::Duration::from_millis(50 + tries * 10));
                        }
                        Err(e) => panic!("cannot clone the template database: {e}"),
                    }
                }
                Self {
                    url: DatabaseUrl::parse(&with_db_name(&base, &name)).unwrap(),
                    pg_name: Some(name),
                    _dir: None,
                }
            }
            None => {
                let db = Self::empty();
                let leekha = Db::open(&Config::for_database(db.url.clone()));
                leekha.migrate().expect("migrate the test database");
                db
            }
        }
    }

    /// An empty database that has never been migrated.
    pub fn empty() -> Self {
        match pg_base_url() {
            Some(base) => {
                let name = unique_name("leekha_test");
                let mut admin = PgConnection::establish(&base).expect("connect to the test server");
                admin
                    .batch_execute(&format!("CREATE DATABASE {name}"))
                    .expect("create a test database");
                Self {
                    url: DatabaseUrl::parse(&with_db_name(&base, &name)).unwrap(),
                    pg_name: Some(name),
                    _dir: None,
                }
            }
            None => {
                let dir = tempfile::tempdir().expect("temp dir");
                let path = dir.path().join("leekha.db");
                Self {
                    url: DatabaseUrl::parse(path.to_str().unwrap()).unwrap(),
                    pg_name: None,
                    _dir: Some(dir),
                }
            }
        }
    }

    /// A configuration pointing at this database, with a fixed signing secret and rate
    /// limits high enough for fixtures.
    pub fn config(&self) -> Config {
        let mut config = Config::for_database(self.url.clone());
        config.jwt_secret = Some(leekha::auth::Secret::new(TEST_SECRET));
        config.auth_rate_per_minute = 10_000;
        config
    }

    /// The app state for this database.
    pub fn state(&self) -> AppState {
        state_for(self.config())
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let (Some(name), Some(base)) = (&self.pg_name, pg_base_url())
            && let Ok(mut admin) = PgConnection::establish(&base)
        {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

/// The signing secret of test configurations.
pub const TEST_SECRET: &str = "test-secret-test-secret-test-secret-0123";

/// The app state for a configuration.
pub fn state_for(config: Config) -> AppState {
    let db = Db::open(&config);
    AppState::init(config, db).expect("app state")
}

fn unique_name(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

/// Replaces the database name in a PostgreSQL URL.
pub fn with_db_name(base: &str, name: &str) -> String {
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (base, None),
    };
    let scheme_end = head.find("://").map_or(0, |i| i + 3);
    let root = match head[scheme_end..].find('/') {
        Some(i) => &head[..scheme_end + i],
        None => head,
    };
    match query {
        Some(q) => format!("{root}/{name}?{q}"),
        None => format!("{root}/{name}"),
    }
}

/// A migrated template, named after the migrations so that a change makes a new one.
fn pg_template(base: &str) -> String {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut hasher = DefaultHasher::new();
        let mut files: Vec<_> = walk(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres")));
        files.sort();
        for f in files {
            f.hash(&mut hasher);
            std::fs::read(&f).unwrap().hash(&mut hasher);
        }
        let name = format!("leekha_tpl_{:016x}", hasher.finish());
        let mut admin = PgConnection::establish(base).expect("connect to the test server");
        // Test processes run in parallel: one builds the template, the others wait.
        admin.batch_execute("SELECT pg_advisory_lock(4242001)").unwrap();
        let exists: bool = diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(&format!(
            "EXISTS (SELECT 1 FROM pg_database WHERE datname = '{name}')"
        )))
        .get_result(&mut admin)
        .unwrap();
        if !exists {
            let building = format!("{name}_building");
            admin.batch_execute(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)")).unwrap();
            admin.batch_execute(&format!("CREATE DATABASE {building}")).unwrap();
            {
                let url = DatabaseUrl::parse(&with_db_name(base, &building)).unwrap();
                let db = Db::open(&Config::for_database(url));
                db.migrate().expect("migrate the template");
            }
            admin
                .batch_execute(&format!("ALTER DATABASE {building} RENAME TO {name}"))
                .or_else(|_| {
                    // The pool that migrated it may still hold a connection for a moment.
                    std::thread::sleep(std::time::Duration::from_millis(200));
                    admin.batch_execute(&format!(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{building}';
                         ALTER DATABASE {building} RENAME TO {name}"
                    ))
                })
                .unwrap();
        }
        admin.batch_execute("SELECT pg_advisory_unlock(4242001)").unwrap();
        name
    })
    .clone()
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// What a test reads back from a response.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body as JSON (`Null` when empty or not JSON).
    pub json: serde_json::Value,
    /// The body as text (lossy).
    pub text: String,
    /// The body as sent, e.g. compressed.
    pub body: Vec<u8>,
}

impl Reply {
    /// The `Content-Type` header.
    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// A header's value as text, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `id`s of a page's `items`, in order.
    #[track_caller]
    pub fn item_ids(&self) -> Vec<String> {
        self.json["items"]
            .as_array()
            .unwrap_or_else(|| panic!("no items: {}", self.text))
            .iter()
            .map(|item| item["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Asserts this is a problem+json error with the given status and code.
    #[track_caller]
    pub fn assert_problem(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "{}", self.text);
        assert_eq!(
            self.content_type(),
            "application/problem+json",
            "{}",
            self.text
        );
        assert_eq!(self.json["code"], code, "{}", self.text);
        assert_eq!(self.json["status"], status, "{}", self.text);
        assert!(
            self.json["title"].is_string()
                && self.json["detail"].is_string()
                && self.json["type"].is_string()
        );
    }
}

/// Sends a request through the app and reads the reply.
pub async fn send<S, B>(app: &S, req: test::TestRequest) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let res = test::call_service(app, req.to_request()).await;
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = test::read_body(res).await;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    Reply {
        status,
        headers,
        json,
        text,
        body: bytes.to_vec(),
    }
}

/// Starts the real app in-process for the state.
pub async fn app(
    state: AppState,
) -> impl Service<
    actix_http::Request,
    Response = ServiceResponse<impl MessageBody>,
    Error = actix_web::Error,
> {
    test::init_service(build_app(state)).await
}

/// A JSON POST request.
pub fn post_json(uri: &str, body: serde_json::Value) -> test::TestRequest {
    test::TestRequest::post().uri(uri).set_json(body)
}

/// Adds a bearer token.
pub fn bearer(req: test::TestRequest, token: &str) -> test::TestRequest {
    req.insert_header(("authorization", format!("Bearer {token}")))
}

/// A registered user's session.
#[derive(Debug, Clone)]
pub struct Session {
    /// User id.
    pub id: String,
    /// Username.
    pub username: String,
    /// Access token.
    pub access: String,
    /// Refresh token.
    pub refresh: String,
}

/// Registers `username` with a fixed password and returns the session.
pub async fn register<S, B>(app: &S, username: &str) -> Session
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let reply = send(
        app,
        post_json(
            "/api/v1/auth/register",
            serde_json::json!({"username": username, "password": PASSWORD}),
        ),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    Session {
        id: reply.json["user"]["id"].as_str().unwrap().to_owned(),
        username: username.to_owned(),
        access: reply.json["access_token"].as_str().unwrap().to_owned(),
        refresh: reply.json["refresh_token"].as_str().unwrap().to_owned(),
    }
}

/// The password `register` uses.
pub const PASSWORD: &str = "correct horse battery";

/// A server process started by a test, killed when the test ends (or fails) unless it
/// already exited.
pub struct Server(pub std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the scheduler until no game with only bots left to act is due: what the server's
/// scheduler thread does, in a few short transactions per game, after a last human leaves a
/// game to the bots. Returns the number of bot transactions.
pub fn play_out_bots(state: &AppState) -> usize {
    let mut steps = 0;
    for _ in 0..100_000 {
        let report = leekha::scheduler::tick(state).expect("a scheduler tick");
        if report.bot_steps == 0 {
            return steps;
        }
        steps += report.bot_steps;
    }
    panic!("bots did not finish their games");
}
