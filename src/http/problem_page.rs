//! `GET /problems/{code}`: the page that a problem's `type` names, explaining its code. HTML
//! for people; JSON for a client that prefers it in `Accept`.

use actix_web::http::header::{self, Accept, Header, Quality};
use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::Error;
use crate::http::problem_catalog::{self, ProblemCode};
use crate::http::reply::Reply;

/// A problem code explained: the JSON form of `/problems/{code}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProblemCodeView {
    /// The code, as in a problem's `code`.
    #[schema(value_type = crate::http::problem_catalog::CodeSchema, example = "must_follow_suit")]
    pub code: String,
    /// The HTTP status it comes with.
    #[schema(example = 422)]
    pub status: u16,
    /// A short summary, as in a problem's `title`.
    #[schema(example = "Must follow suit")]
    pub title: String,
    /// What it means.
    pub explanation: String,
    /// What the client should do.
    pub advice: String,
}

impl From<&ProblemCode> for ProblemCodeView {
    fn from(p: &ProblemCode) -> Self {
        Self {
            code: p.code.to_owned(),
            status: p.status,
            title: p.title.to_owned(),
            explanation: p.explanation.to_owned(),
            advice: p.advice.to_owned(),
        }
    }
}

/// The catalog changes only with a release: caches may keep a page for a day.
const CACHE_CONTROL: &str = "public, max-age=86400";

/// Explain a problem code.
///
/// Every problem body's `type` is `/problems/{code}`: this page says what the code means,
/// which status carries it and what a client should do. HTML for people, JSON for programs.
#[utoipa::path(operation_id = "get_problem", tag = "operations", security(()),
    params(("code" = problem_catalog::CodeSchema, Path, description = "A problem code, e.g. `not_your_turn`")),
    responses(
        (status = 200, description = "The code explained; JSON when `Accept` prefers it to HTML",
         content(
             (String = "text/html", example = json!("<!doctype html><html lang=\"en\"><head><title>not_your_turn</title></head><body><h1>Not your turn</h1><p>Status 422 …</p></body></html>")),
             (ProblemCodeView = "application/json"),
         )),
        (status = 404, description = "No such problem code (`not_found`)")))]
#[get("/problems/{code}")]
pub async fn problem_type(req: HttpRequest, code: web::Path<String>) -> Reply {
    let entry = problem_catalog::find(&code)
        .ok_or_else(|| Error::not_found(format!("no problem code {:?}", code.as_str())))?;
    let mut res = HttpResponse::Ok();
    res.insert_header((header::CACHE_CONTROL, CACHE_CONTROL))
        .insert_header((header::VARY, "Accept"));
    Ok(if prefers_json(&req) {
        res.json(ProblemCodeView::from(entry))
    } else {
        res.content_type("text/html; charset=utf-8")
            .body(page(entry))
    })
}

/// Whether `Accept` ranks a JSON type above HTML; without `Accept`, HTML.
fn prefers_json(req: &HttpRequest) -> bool {
    let Ok(Accept(mut ranges)) = Accept::parse(req) else {
        return false;
    };
    ranges.retain(|r| r.quality > Quality::ZERO);
    for mime in Accept(ranges).ranked() {
        let json =
            mime.subtype() == actix_web::mime::JSON || mime.suffix() == Some(actix_web::mime::JSON);
        match (mime.type_().as_str(), mime.subtype().as_str()) {
            ("application", _) if json => return true,
            ("text", "html" | "*") | ("*", _) => return false,
            _ => {}
        }
    }
    false
}

fn page(p: &ProblemCode) -> String {
    let reason = actix_web::http::StatusCode::from_u16(p.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{code} — Leekha API</title>\n\
         <style>body{{font-family:system-ui,sans-serif;max-width:42rem;margin:2rem auto;\
         padding:0 1rem;line-height:1.5}}code{{background:#f2f2f2;padding:0 .2em}}</style>\n\
         </head>\n<body>\n<h1>{title}</h1>\n\
         <p>Problem code <code>{code}</code>, HTTP status {status} {reason}.</p>\n\
         <h2>What it means</h2>\n<p>{explanation}</p>\n\
         <h2>What to do</h2>\n<p>{advice}</p>\n\
         <p><a href=\"/docs/\">API documentation</a></p>\n</body>\n</html>\n",
        code = p.code,
        title = html(p.title),
        status = p.status,
        explanation = html(p.explanation),
        advice = html(p.advice),
    )
}

/// Escapes text for HTML, and shows the catalog's `backticked` names as code.
fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => {
                out.push_str(if in_code { "</code>" } else { "<code>" });
                in_code = !in_code;
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    if in_code {
        out.push_str("</code>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn markup_in_the_catalog_is_escaped_and_backticks_become_code() {
        assert_eq!(
            html("send `Authorization: Bearer <token>` & retry"),
            "send <code>Authorization: Bearer &lt;token&gt;</code> &amp; retry"
        );
    }

    #[test]
    fn json_only_when_accept_prefers_it() {
        let json = |accept: Option<&str>| {
            let mut req = TestRequest::default();
            if let Some(accept) = accept {
                req = req.insert_header(("accept", accept));
            }
            prefers_json(&req.to_http_request())
        };
        assert!(!json(None));
        assert!(!json(Some("text/html,application/xhtml+xml,*/*;q=0.8")));
        assert!(!json(Some("*/*")));
        assert!(json(Some("application/json")));
        assert!(json(Some("application/problem+json, text/html;q=0.5")));
        assert!(!json(Some("application/json;q=0.2, text/html")));
        assert!(!json(Some("application/json;q=0")));
    }
}
