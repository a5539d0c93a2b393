//! The session service's files name each other in one direction only: the context and the
//! data each part keeps at the bottom, the service above them, the rules on top. A file
//! that names one above it (a `super::…` or `crate::sessions::…` path) makes a circle,
//! and this test names it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `sessions/lifecycle/idle.rs` → `sessions::lifecycle::idle`; a `mod.rs` is its folder.
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .strip_prefix(root)
        .expect("under the crate's src")
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules a file's paths start from `super::`, `self::` or `crate::sessions::`.
fn named_modules(source: &str, module: &[String], known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let code: String = source.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut named = BTreeSet::new();
    for token in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')) {
        let path: Vec<&str> = token.split("::").filter(|s| !s.is_empty()).collect();
        let (mut base, rest): (Vec<String>, &[&str]) = match path.first() {
            Some(&"crate") if path.get(1) == Some(&"sessions") => (vec!["sessions".into()], &path[2..]),
            Some(&"self") => (module.to_vec(), &path[1..]),
            Some(&"super") => {
                let ups = path.iter().take_while(|s| **s == "super").count();
                (module[..module.len().saturating_sub(ups)].to_vec(), &path[ups..])
            }
            _ => continue,
        };
        let mut deepest = None;
        for segment in rest {
            base.push(segment.to_string());
            if known.contains(&base) {
                deepest = Some(base.clone());
            }
        }
        // The folders' own files only declare and re-export; what a file reaches through
        // them is not a circle of its own.
        if let Some(target) = deepest.filter(|t| t.as_slice() != module && !module.starts_with(t)) {
            named.insert(target);
        }
    }
    named
}

fn circle_from(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        at: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == at) {
            return Some(path[i..].iter().chain([at]).map(|m| m.join("::")).collect());
        }
        if !done.insert(at.clone()) {
            return None;
        }
        path.push(at.clone());
        for next in graph.get(at).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_session_services_files_name_each_other_in_one_direction() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root.join("sessions"), &mut files);
    let known: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&root, f)).collect();
    assert!(known.len() > 30, "the session service's files were not found under {}", root.display());
    let graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = files
        .iter()
        .map(|f| {
            let module = module_of(&root, f);
            let source = std::fs::read_to_string(f).expect("readable source");
            let named = named_modules(&source, &module, &known);
            (module, named)
        })
        .collect();
    let service = graph.get(&vec!["sessions".to_string(), "service".to_string()]).expect("sessions/service.rs");
    assert!(
        service.contains(&vec!["sessions".to_string(), "context".to_string()]),
        "the reader no longer sees the service's own imports: {service:?}"
    );
    if let Some(circle) = circle_from(&graph) {
        panic!("these files name each other in a circle: {}", circle.join(" → "));
    }
}

#[test]
fn a_circle_between_two_files_is_named() {
    let known: BTreeSet<Vec<String>> =
        [vec!["sessions".to_string(), "a".to_string()], vec!["sessions".to_string(), "b".to_string()]].into();
    let a = named_modules("use super::b::Thing; // super::a in a comment", &known.iter().next().unwrap().clone(), &known);
    let b = named_modules("fn f() { crate::sessions::a::g() }", &known.iter().nth(1).unwrap().clone(), &known);
    let graph: BTreeMap<_, _> = [(known.iter().next().unwrap().clone(), a), (known.iter().nth(1).unwrap().clone(), b)].into();
    assert_eq!(circle_from(&graph), Some(vec!["sessions::a".into(), "sessions::b".into(), "sessions::a".into()]));
}
