//! The Rust version the project declares is one it builds with: `Cargo.toml`'s
//! `rust-version` is the Docker image's compiler, and no locked dependency asks for a newer
//! one (cargo refuses to build such a dependency with an older compiler, so an update of
//! `Cargo.lock` can break `docker compose up --build` without any other check noticing).

use std::path::Path;
use std::process::Command;

/// `1.88` and `1.88.0` alike.
fn version(text: &str) -> [u32; 3] {
    let mut parts = [0; 3];
    for (part, n) in parts.iter_mut().zip(text.split('.')) {
        *part = n.parse().unwrap();
    }
    parts
}

#[test]
fn the_declared_rust_version_builds_the_image_and_every_locked_dependency() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let declared = env!("CARGO_PKG_RUST_VERSION");
    assert!(!declared.is_empty(), "Cargo.toml declares no rust-version");

    let dockerfile = std::fs::read_to_string(root.join("Dockerfile")).unwrap();
    let image = format!("FROM rust:{declared}-");
    assert!(
        dockerfile.lines().any(|l| l.starts_with(&image)),
        "the Dockerfile does not build with rust:{declared}"
    );

    // The packages this machine builds: the others' manifests need not be here offline.
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    let host = String::from_utf8(rustc.stdout).unwrap();
    let host = host
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc names its host")
        .to_owned();
    let metadata = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(root)
        .output()
        .expect("cargo metadata");
    assert!(
        metadata.status.success(),
        "{}",
        String::from_utf8_lossy(&metadata.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let newer: Vec<String> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let wanted = p["rust_version"].as_str()?;
            (version(wanted) > version(declared))
                .then(|| format!("{} {} wants {wanted}", p["name"], p["version"]))
        })
        .collect();
    assert!(
        newer.is_empty(),
        "rust-version {declared} is older than: {newer:?}"
    );
}
