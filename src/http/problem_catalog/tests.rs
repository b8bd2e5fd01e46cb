//! The catalogue against the sources: every code emitted is listed, every listed code is
//! emitted, with the status it comes with.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use actix_web::http::StatusCode;

use super::*;
use crate::error::Kind;
use crate::http::problem::ApiError;

/// Constructors whose first argument (after an optional `Kind::…`) is the code, with the
/// status they give when it is known from the call alone.
const CONSTRUCTORS: &[(&str, Option<u16>)] = &[
    ("Error::new(", None),
    ("Self::new(", None),
    ("Error::unauthorized(", Some(401)),
    ("Self::unauthorized(", Some(401)),
    ("Error::conflict(", Some(409)),
    ("Self::conflict(", Some(409)),
    ("Error::unprocessable(", Some(422)),
    ("Self::unprocessable(", Some(422)),
    (".with_code(", None),
];

/// Where a constructor passes a code it was given rather than a literal: the definitions
/// of the constructors themselves, and the rules' codes (read from the rules below).
const FORWARDED: &[(&str, &str)] = &[
    ("error.rs", "code"),
    ("error.rs", "e.code()"),
    ("http/problem.rs", "kind"),
];

/// Codes that a given status also comes with, as their explanations say.
const OTHER_STATUSES: &[(&str, u16)] = &[("invalid_credentials", 403)];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn status_of_kind(name: &str) -> Option<u16> {
    let kind = match name {
        "BadRequest" => Kind::BadRequest,
        "Unauthorized" => Kind::Unauthorized,
        "Forbidden" => Kind::Forbidden,
        "NotFound" => Kind::NotFound,
        "Conflict" => Kind::Conflict,
        "PayloadTooLarge" => Kind::PayloadTooLarge,
        "UnsupportedMediaType" => Kind::UnsupportedMediaType,
        "Unprocessable" => Kind::Unprocessable,
        "RateLimited" => Kind::RateLimited,
        "Unavailable" => Kind::Unavailable,
        "Internal" => Kind::Internal,
        _ => return None,
    };
    Some(
        ApiError::from(crate::error::Error::new(kind, "x", ""))
            .status()
            .as_u16(),
    )
}

/// The codes the library's sources pass to error constructors, each with the statuses
/// known from its calls. Panics on a constructor call whose code is neither a literal nor
/// a known forwarding.
fn emitted_in_sources() -> BTreeMap<String, BTreeSet<Option<u16>>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&root, &mut paths);
    let mut found = BTreeMap::<String, BTreeSet<Option<u16>>>::new();
    for path in paths {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // Other crates (the load generator), and this test's own examples.
        if rel.starts_with("bin/") || rel.starts_with("http/problem_catalog/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (needle, status) in CONSTRUCTORS {
            // `Self` is `Error` only in its own module.
            if needle.starts_with("Self::") && rel != "error.rs" {
                continue;
            }
            for (at, _) in text.match_indices(needle) {
                // `ConfigError::new(`, `io::Error::new(` and the like are other types.
                if text[..at].ends_with("io::")
                    || text[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                {
                    continue;
                }
                let mut rest = text[at + needle.len()..].trim_start();
                let mut status = *status;
                // `Kind::X,` or `crate::error::Kind::X,` first: the status is the kind's.
                if let Some(comma) = rest.find(',')
                    && let Some((_, kind)) = rest[..comma].rsplit_once("Kind::")
                    && kind.chars().all(|c| c.is_ascii_alphanumeric())
                {
                    status = status_of_kind(kind);
                    assert!(status.is_some(), "{rel}: unknown kind {kind}");
                    rest = rest[comma + 1..].trim_start();
                }
                // ApiError sets the status of the errors it builds itself.
                if rel == "http/problem.rs" {
                    status = None;
                }
                if let Some(literal) = rest.strip_prefix('"') {
                    let code = &literal[..literal.find('"').unwrap()];
                    found.entry(code.to_owned()).or_default().insert(status);
                    continue;
                }
                let arg = rest.split_once(',').map_or(rest, |(arg, _)| arg).trim();
                assert!(
                    FORWARDED.contains(&(rel.as_str(), arg)),
                    "{rel}: `{needle}{arg}`: a code that is not a literal cannot be checked \
                     against the catalog; pass a literal, or list the forwarding here"
                );
            }
        }
    }
    found
}

/// The rules' codes, from `RuleError::code`, all answered with 422.
fn rule_codes() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules/error.rs");
    let text = std::fs::read_to_string(path).unwrap();
    let codes: BTreeSet<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("RuleError::"))
        .filter_map(|l| l.split_once("=> \"")?.1.split_once('"'))
        .map(|(code, _)| code.to_owned())
        .collect();
    assert!(codes.len() >= 10, "RuleError::code not found: {codes:?}");
    codes
}

/// The codes of responses that carry only a status (middleware, actix internals).
fn status_codes() -> BTreeSet<String> {
    (400..600)
        .filter_map(|s| StatusCode::from_u16(s).ok())
        .map(|s| ApiError::from_status(s).code().to_owned())
        .collect()
}

#[test]
fn every_code_the_server_emits_is_in_the_catalog_with_its_status() {
    let mut missing = Vec::new();
    for (code, statuses) in emitted_in_sources() {
        let Some(entry) = find(&code) else {
            missing.push(code);
            continue;
        };
        for status in statuses.into_iter().flatten() {
            assert!(
                status == entry.status || OTHER_STATUSES.contains(&(entry.code, status)),
                "{code} is emitted with {status}, the catalog says {}",
                entry.status
            );
        }
    }
    for code in rule_codes() {
        match find(&code) {
            Some(entry) => assert_eq!(entry.status, 422, "{code}"),
            None => missing.push(code),
        }
    }
    missing.extend(status_codes().into_iter().filter(|c| find(c).is_none()));
    assert!(missing.is_empty(), "not in PROBLEM_CODES: {missing:?}");
}

#[test]
fn every_catalog_entry_is_emitted_somewhere_and_listed_once() {
    let mut emitted: BTreeSet<String> = emitted_in_sources().into_keys().collect();
    emitted.extend(rule_codes());
    emitted.extend(status_codes());
    let mut seen = BTreeSet::new();
    for entry in all() {
        assert!(seen.insert(entry.code), "{} is listed twice", entry.code);
        assert!(
            emitted.contains(entry.code),
            "{} is in the catalog but nothing emits it",
            entry.code
        );
        assert!(
            StatusCode::from_u16(entry.status)
                .is_ok_and(|s| s.is_client_error() || s.is_server_error()),
            "{}",
            entry.code
        );
        assert!(
            entry
                .code
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_'),
            "{} is not snake_case",
            entry.code
        );
    }
}
