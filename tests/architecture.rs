//! Guards the layering (README, "Architecture"): dependencies point down. Nothing below the
//! HTTP layer imports it, diesel's table definitions are used only in `src/db`, and the HTTP
//! error type stays in `src/http`, whose files each hold one operation group or one shared
//! piece and stay small.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file of the server library and binaries, as (path below src/, text).
fn files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&root, &mut paths);
    assert!(paths.len() > 20, "found only {} files", paths.len());
    paths
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The files outside `allowed` (path prefixes) whose code mentions `needle`.
fn offenders(needle: &str, allowed: &[&str]) -> Vec<String> {
    files()
        .into_iter()
        .filter(|(path, _)| !allowed.iter().any(|a| path.starts_with(a)))
        .filter(|(_, text)| {
            text.lines()
                .map(str::trim_start)
                .filter(|l| !l.starts_with("//"))
                .any(|l| l.contains(needle))
        })
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn no_module_below_http_imports_it() {
    // The binary's wiring (cli, main, lib) is the one place above the HTTP layer; `bin/`
    // holds other crates, whose `crate::` is their own.
    let bad = offenders(
        "crate::http",
        &["http/", "cli.rs", "main.rs", "lib.rs", "bin/"],
    );
    assert!(
        bad.is_empty(),
        "these modules import the HTTP layer: {bad:?}"
    );
}

#[test]
fn diesel_tables_are_used_only_in_db() {
    let bad = offenders("schema::", &["db/"])
        .into_iter()
        // utoipa's OpenAPI schema types share the word.
        .filter(|p| {
            let text =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(p))
                    .unwrap();
            text.contains("db::schema")
        })
        .collect::<Vec<_>>();
    assert!(
        bad.is_empty(),
        "these modules query tables outside src/db: {bad:?}"
    );
}

#[test]
fn the_http_error_type_stays_in_http() {
    let bad = offenders("ApiError", &["http/"]);
    assert!(
        bad.is_empty(),
        "these modules use the HTTP error type: {bad:?}"
    );
}

/// The most lines a file under `src/http` may have: past it, a file holds more than one
/// operation group or shared piece, and is split (as `extract/`, `openapi/`, `transport/`
/// and `problem_catalog/` were).
const HTTP_FILE_LINES: usize = 400;

#[test]
fn http_files_stay_small() {
    let large: Vec<(String, usize)> = files()
        .into_iter()
        .filter(|(path, _)| path.starts_with("http/"))
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|(_, lines)| *lines > HTTP_FILE_LINES)
        .collect();
    assert!(
        large.is_empty(),
        "these files under src/http are over {HTTP_FILE_LINES} lines: {large:?}"
    );
}

#[test]
fn nothing_below_http_uses_actix() {
    let bad = offenders("actix_web", &["http/", "cli.rs", "main.rs"]);
    assert!(bad.is_empty(), "these modules depend on actix-web: {bad:?}");
}

/// The top-level modules each module's code names (`crate::x`), comments aside.
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut graph = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for (path, text) in files() {
        if path.starts_with("bin/") || path == "lib.rs" || path == "main.rs" {
            continue;
        }
        let module = path
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned();
        let deps = graph.entry(module.clone()).or_default();
        for line in text.lines().map(str::trim_start) {
            if line.starts_with("//") {
                continue;
            }
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

#[test]
fn modules_import_each_other_without_cycles() {
    let graph = module_graph();
    assert!(
        graph.contains_key("games") && graph.contains_key("db"),
        "{graph:?}"
    );
    // Depth-first search for a back edge; report the first cycle found.
    fn visit(
        node: &str,
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for dep in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(dep, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    for module in graph.keys() {
        let cycle = visit(module, &graph, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "import cycle: {}",
            cycle.unwrap().join(" -> ")
        );
    }
}
