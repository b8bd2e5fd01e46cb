//! Every problem `code` this server can answer, with its status and an explanation: the
//! one list behind the problem `type` URIs (`/problems/{code}`), the pages served there and
//! the enumeration of codes in the OpenAPI document.
//!
//! A test reads the sources for the codes passed to the error constructors, the rules'
//! codes and the codes of bare statuses, and fails when one is missing here (or when an entry
//! here is emitted nowhere).

/// One problem code: what a client reads at `/problems/{code}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemCode {
    /// The stable machine-readable code, as in the problem's `code` field.
    pub code: &'static str,
    /// The HTTP status it comes with. A code answered with another status in one place says
    /// so in its explanation.
    pub status: u16,
    /// A short summary of the problem type, as in the problem's `title` field.
    pub title: &'static str,
    /// What it means.
    pub explanation: &'static str,
    /// What the client should do about it.
    pub advice: &'static str,
}

/// The path prefix of problem type URIs.
pub const PROBLEM_TYPE_PREFIX: &str = "/problems/";

/// The problem `type` of a code: a URI reference relative to this server (RFC 9457 §3.1.1).
pub fn type_uri(code: &str) -> String {
    format!("{PROBLEM_TYPE_PREFIX}{code}")
}

/// The catalog entry of a code.
pub fn find(code: &str) -> Option<&'static ProblemCode> {
    all().find(|p| p.code == code)
}

const fn entry(
    code: &'static str,
    status: u16,
    title: &'static str,
    explanation: &'static str,
    advice: &'static str,
) -> ProblemCode {
    ProblemCode {
        code,
        status,
        title,
        explanation,
        advice,
    }
}

mod conflict;
mod content;
mod request;
mod server;
#[cfg(test)]
mod tests;

const RELOAD: &str = "Reload the game (`GET /api/v1/games/{id}`) and act on what it says now.";
const LEGAL: &str = "Choose among the game view's `legal_actions`; `GET /api/v1/games/{id}/hint` \
                     suggests one. Do not retry the same action.";

/// Every problem code the server can answer, grouped by status.
static PROBLEM_CODES: [&[ProblemCode]; 4] = [
    request::REQUEST,
    conflict::CONFLICT,
    content::CONTENT,
    server::SERVER,
];

/// Every problem code, in the order of their statuses.
pub fn all() -> impl Iterator<Item = &'static ProblemCode> {
    PROBLEM_CODES.iter().flat_map(|group| group.iter())
}

/// The OpenAPI schema of a problem's `code`: an `enum` of every code in [`all`], so a
/// generated client can switch on codes and a typo does not type-check.
pub struct CodeSchema;

impl utoipa::PartialSchema for CodeSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let codes: Vec<&str> = all().map(|c| c.code).collect();
        crate::http::views::schema::string_enum(
            "A stable machine-readable problem code; `/problems/{code}` explains it.",
            &codes,
        )
    }
}

impl utoipa::ToSchema for CodeSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ProblemCode")
    }
}
