//! The README documents every configuration key with its variable and default.

use slicehub_core::config::{all_keys, OIDC_FIELDS};

#[test]
fn every_config_key_is_documented_in_the_readme() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md at the workspace root");
    for key in all_keys() {
        let row = readme
            .lines()
            .find(|line| line.starts_with(&format!("| `{}` |", key.key)))
            .unwrap_or_else(|| panic!("README has no table row for `{}`", key.key));
        assert!(row.contains(&format!("`{}`", key.env_name())), "{row}");
        let default = if key.default.is_empty() {
            "*(empty)*".to_string()
        } else {
            format!("`{}`", key.default)
        };
        assert!(
            row.contains(&default),
            "README row for `{}` lacks default {default}: {row}",
            key.key
        );
    }
}

#[test]
fn every_field_of_an_oidc_provider_is_documented_in_the_readme() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md at the workspace root");
    for (field, _) in OIDC_FIELDS {
        assert!(
            readme.lines().any(|line| line.starts_with(&format!("| `oidc.NAME.{field}` |"))),
            "README has no table row for `oidc.NAME.{field}`"
        );
    }
}
