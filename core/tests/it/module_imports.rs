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

/// What each folder's `mod.rs` re-exports: (folder, item) → the module the item is from.
type Reexports = BTreeMap<(Vec<String>, String), Vec<String>>;

fn reexports_of(folder: &[String], mod_rs: &str) -> Reexports {
    let mut found = Reexports::new();
    for statement in mod_rs.split(';') {
        let Some((_, path)) = statement.split_once("use ").filter(|(before, _)| before.trim_start().starts_with("pub")) else {
            continue;
        };
        let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
        let (from, items) = match path.split_once("::{") {
            Some((from, items)) => (from.to_string(), items.trim_end_matches('}').split(',').map(str::to_string).collect()),
            None => match path.rsplit_once("::") {
                Some((from, item)) => (from.to_string(), vec![item.to_string()]),
                None => continue,
            },
        };
        let module: Vec<String> = folder.iter().cloned().chain(from.split("::").map(str::to_string)).collect();
        for item in items.into_iter().filter(|i| !i.is_empty()) {
            found.insert((folder.to_vec(), item), module.clone());
        }
    }
    found
}

/// The modules a file's paths start from `super::`, `self::` or `crate::sessions::`,
/// through a folder's re-exports too.
fn named_modules(source: &str, module: &[String], known: &BTreeSet<Vec<String>>, reexports: &Reexports) -> BTreeSet<Vec<String>> {
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
            if let Some(from) = reexports.get(&(base.clone(), segment.to_string())) {
                deepest = Some(from.clone());
                break;
            }
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
    let sources: BTreeMap<Vec<String>, (bool, String)> = files
        .iter()
        .map(|f| {
            let folder_file = f.file_name().is_some_and(|n| n == "mod.rs");
            (module_of(&root, f), (folder_file, std::fs::read_to_string(f).expect("readable source")))
        })
        .collect();
    let reexports: Reexports = sources
        .iter()
        .filter(|(_, (folder_file, _))| *folder_file)
        .flat_map(|(module, (_, source))| reexports_of(module, source))
        .collect();
    for (module, (_, source)) in &sources {
        for group in ["super::{", "self::{", "sessions::{"] {
            assert!(
                !source.contains(group),
                "{}: write one path per `use` (`{group}…}}` is not read by this test)",
                module.join("::")
            );
        }
    }
    let graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = sources
        .iter()
        .map(|(module, (_, source))| (module.clone(), named_modules(source, module, &known, &reexports)))
        .collect();
    let context = graph.get(&vec!["sessions".to_string(), "context".to_string()]).expect("sessions/context.rs");
    assert!(
        !context.contains(&vec!["sessions".to_string(), "service".to_string()]),
        "the context names the service: {context:?}"
    );
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
    let reexports = reexports_of(&["sessions".to_string()], "mod a;\nmod b;\npub use a::{Alpha, Beta};\npub use b::Thing;");
    let a = named_modules("use super::Thing; // super::a in a comment", &known.iter().next().unwrap().clone(), &known, &reexports);
    let b = named_modules("fn f() { crate::sessions::a::g() }", &known.iter().nth(1).unwrap().clone(), &known, &reexports);
    let graph: BTreeMap<_, _> = [(known.iter().next().unwrap().clone(), a), (known.iter().nth(1).unwrap().clone(), b)].into();
    assert_eq!(circle_from(&graph), Some(vec!["sessions::a".into(), "sessions::b".into(), "sessions::a".into()]));
}
