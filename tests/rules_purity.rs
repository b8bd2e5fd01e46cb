//! `src/rules` is pure: no web framework, database, logging, clock, file system, network or
//! global/thread-local randomness. This test reads every file of the module and fails on
//! any mention of those, so the rule stays true as the code grows.

use std::path::{Path, PathBuf};

/// Words that must not appear anywhere in `src/rules` (code, comments or docs).
const FORBIDDEN: &[&str] = &[
    "actix",
    "diesel",
    "tracing",
    "std::time",
    "SystemTime",
    "Instant",
    "std::fs",
    "File::",
    "std::net",
    "TcpStream",
    "thread_rng",
    "rand::rng",
    "OsRng",
    "thread_local",
    "getrandom",
    "utoipa",
    "chrono",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {dir:?}: {e}"));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_rules_module_uses_no_io_clock_or_global_randomness() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("game.rs")),
        "src/rules not found at {root:?}"
    );
    let mut offences = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for (number, line) in text.lines().enumerate() {
            for word in FORBIDDEN {
                if line.contains(word) {
                    offences.push(format!("{}:{}: {word}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "impure rules code:\n{}",
        offences.join("\n")
    );
}
