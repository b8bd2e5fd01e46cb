//! The reference web client (`src/web/`), embedded in the binary and served same-origin: `/`
//! is the page, `/app/…` its assets, `/sw.js` the service worker (at the root, so that it
//! may control every page of the origin).
//!
//! The client routes with the URL fragment (`/#/game/<id>`), so no path other than these
//! needs to fall back to the page, and every unknown path keeps its problem+json 404.
//!
//! Assets carry an `ETag` (a hash of their bytes) and `Cache-Control: no-cache`: a browser
//! revalidates each asset and gets a 304 while the binary is the same, and never runs a
//! stale client after an upgrade. Compression is the app's own (`compression.rs`).

use std::sync::LazyLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, guard, web};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::http::reply::Reply;

/// One embedded file.
struct Asset {
    /// Its path under `src/web/`, also its path under `/app/`.
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $type:expr) => {
        Asset {
            path: $path,
            content_type: $type,
            body: include_bytes!(concat!("../web/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file the client is made of. `every_client_file_is_served` keeps it complete.
static ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("icon.svg", "image/svg+xml"),
    asset!("manifest.webmanifest", "application/manifest+json"),
    asset!("sw.js", JS),
    asset!("js/main.js", JS),
    asset!("js/api.js", JS),
    asset!("js/live.js", JS),
    asset!("js/cards.js", JS),
    asset!("js/i18n.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/table.js", JS),
    asset!("js/lobby.js", JS),
    asset!("js/admin.js", JS),
    asset!("js/push.js", JS),
    asset!("i18n/en.json", "application/json"),
    asset!("i18n/ar.json", "application/json"),
];

/// The entity tag of each asset, in the order of [`ASSETS`].
static ETAGS: LazyLock<Vec<HeaderValue>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|a| {
            let digest = Sha256::digest(a.body);
            HeaderValue::from_str(&format!("\"{}\"", hex::encode(&digest[..12])))
                .expect("hex is a valid header value")
        })
        .collect()
});

/// Only our own origin: no inline script or style, no other host. `data:` images are the
/// manifest's icon fallbacks; nothing else needs them.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; \
    manifest-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
    frame-ancestors 'none'";

/// Registers the client's routes (not part of the OpenAPI document: they are no API).
pub fn routes(cfg: &mut web::ServiceConfig) {
    let get_or_head = || web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
    cfg.route("/", get_or_head().to(page))
        .route("/sw.js", get_or_head().to(service_worker))
        .route("/app/{path:.*}", get_or_head().to(app_asset));
}

async fn page(req: HttpRequest) -> HttpResponse {
    serve(&req, "index.html").expect("the page is embedded")
}

async fn service_worker(req: HttpRequest) -> HttpResponse {
    let mut res = serve(&req, "sw.js").expect("the service worker is embedded");
    // Registered from /app/js/push.js, it still controls the whole origin.
    res.headers_mut().insert(
        header::HeaderName::from_static("service-worker-allowed"),
        HeaderValue::from_static("/"),
    );
    res
}

async fn app_asset(req: HttpRequest, path: web::Path<String>) -> Reply {
    serve(&req, &path)
        .ok_or_else(|| Error::not_found(format!("no client asset /app/{path}")).into())
}

/// The asset at `path`, or a 304 when the request's `If-None-Match` names its tag.
fn serve(req: &HttpRequest, path: &str) -> Option<HttpResponse> {
    let index = ASSETS.iter().position(|a| a.path == path)?;
    let asset = &ASSETS[index];
    let etag = ETAGS[index].clone();
    let fresh = req
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim() == "*" || t.trim().as_bytes() == etag.as_bytes());
    let mut res = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    res.insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"));
    Some(if fresh {
        res.finish()
    } else {
        res.content_type(asset.content_type).body(asset.body)
    })
}

#[cfg(test)]
mod tests {
    use super::ASSETS;

    /// A file added to `src/web/` and forgotten here would be a 404 in the browser.
    #[test]
    fn every_client_file_is_served() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web");
        let mut files = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).expect("src/web is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    let rel = path.strip_prefix(&root).expect("under src/web");
                    files.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        // Type declarations and the checker's configuration are for `tsc`, not the browser.
        files.retain(|f| !f.ends_with(".d.ts") && !f.ends_with(".json"));
        for file in files {
            assert!(
                ASSETS.iter().any(|a| a.path == file),
                "src/web/{file} is not in ASSETS"
            );
        }
    }
}
