//! The keys of `[ldap]` and `[header_sign_in]` (OpenID Connect providers are tables of
//! their own, see `sign_in.rs`).

use std::path::PathBuf;

use super::group_roles::GroupRoles;
use super::keys::flag;
use super::KeySpec;

fn unless_empty(value: &str) -> Option<String> {
    super::keys::unless_empty(value).map(str::to_string)
}

fn required(value: &str) -> Result<String, ()> {
    unless_empty(value).filter(|v| !v.chars().any(char::is_control)).ok_or(())
}

fn header_name(value: &str) -> Result<Option<String>, ()> {
    match unless_empty(value) {
        None => Ok(None),
        Some(name) => {
            check_header_name(&name)?;
            Ok(Some(name.to_ascii_lowercase()))
        }
    }
}

/// An HTTP header name: letters, digits and `-`.
fn check_header_name(name: &str) -> Result<(), ()> {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Ok(())
    } else {
        Err(())
    }
}

pub static SIGN_IN_KEYS: &[KeySpec] = &[
    KeySpec {
        key: "ldap.url",
        default: "",
        expected: "empty (no LDAP), or ldap://HOST[:PORT] or ldaps://HOST[:PORT]",
        doc: "The directory the sign-in form checks names and passwords against (search, then bind as the person).",
        apply: |c, v| {
            c.sign_in.ldap.url = match unless_empty(v) {
                None => None,
                Some(url) => {
                    let parsed = url::Url::parse(&url).map_err(|_| ())?;
                    if !matches!(parsed.scheme(), "ldap" | "ldaps") || parsed.host_str().is_none() {
                        return Err(());
                    }
                    Some(url)
                }
            };
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.start_tls",
        default: "true",
        expected: "true or false",
        doc: "With an ldap:// URL, switch to TLS before sending anything (ldaps:// is TLS from the start).",
        apply: |c, v| {
            c.sign_in.ldap.start_tls = flag(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.allow_plain",
        default: "false",
        expected: "true or false",
        doc: "Allow ldap:// without StartTLS: passwords cross the network in clear. Only for a directory on the same host.",
        apply: |c, v| {
            c.sign_in.ldap.allow_plain = flag(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.ca_file",
        default: "",
        expected: "empty (the system's certificate authorities), or the path of a PEM file",
        doc: "The certificate authority the directory's TLS certificate must chain to.",
        apply: |c, v| {
            c.sign_in.ldap.ca_file = match unless_empty(v).map(PathBuf::from) {
                Some(path) if !path.is_file() => return Err(()),
                file => file,
            };
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.bind_dn",
        default: "",
        expected: "the DN of the portal's read-only service account, e.g. cn=slicehub,ou=services,dc=campus,dc=edu",
        doc: "Who the portal binds as to search for the person signing in.",
        apply: |c, v| {
            c.sign_in.ldap.bind_dn = unless_empty(v).unwrap_or_default();
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.bind_password_file",
        default: "",
        expected: "empty, or the path of a file holding the service account's password",
        doc: "The service account's password (kept in a file, never in this one).",
        apply: |c, v| {
            c.sign_in.ldap.bind_password = match unless_empty(v) {
                None => None,
                Some(path) => Some(super::secret_file::read(&path)?),
            };
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.user_base",
        default: "",
        expected: "the DN people are found under, e.g. ou=people,dc=campus,dc=edu",
        doc: "Where the person signing in is searched for (the whole subtree).",
        apply: |c, v| {
            c.sign_in.ldap.user_base = unless_empty(v).unwrap_or_default();
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.user_filter",
        default: "(uid={username})",
        expected: "an LDAP filter with {username}, e.g. (sAMAccountName={username}) for Active Directory",
        doc: "Finds the person by the name typed in (escaped before it is put in).",
        apply: |c, v| {
            let filter = required(v)?;
            if !filter.contains("{username}") || !filter.starts_with('(') {
                return Err(());
            }
            c.sign_in.ldap.user_filter = filter;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.username_attribute",
        default: "uid",
        expected: "an attribute name (sAMAccountName for Active Directory)",
        doc: "The attribute whose value becomes the portal account's name.",
        apply: |c, v| {
            c.sign_in.ldap.username_attribute = required(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.name_attribute",
        default: "cn",
        expected: "an attribute name (displayName for Active Directory)",
        doc: "The attribute with the person's display name.",
        apply: |c, v| {
            c.sign_in.ldap.name_attribute = required(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.email_attribute",
        default: "mail",
        expected: "an attribute name",
        doc: "The attribute with the person's e-mail address.",
        apply: |c, v| {
            c.sign_in.ldap.email_attribute = required(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.group_base",
        default: "",
        expected: "empty (groups are not read), or the DN groups are found under",
        doc: "Where the person's groups are searched for, for ldap.admin_groups and ldap.course_groups.",
        apply: |c, v| {
            c.sign_in.ldap.group_base = unless_empty(v).unwrap_or_default();
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.group_filter",
        default: "(member={dn})",
        expected: "an LDAP filter with {dn} or {username}, e.g. (memberUid={username})",
        doc: "Finds the groups the person is in.",
        apply: |c, v| {
            let filter = required(v)?;
            if !(filter.contains("{dn}") || filter.contains("{username}")) || !filter.starts_with('(') {
                return Err(());
            }
            c.sign_in.ldap.group_filter = filter;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.group_name_attribute",
        default: "cn",
        expected: "an attribute name",
        doc: "The attribute naming each group, as ldap.admin_groups and ldap.course_groups name them.",
        apply: |c, v| {
            c.sign_in.ldap.group_name_attribute = required(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.timeout_seconds",
        default: "10",
        expected: "a whole number of seconds from 1 to 60",
        doc: "How long one sign-in waits for the directory before it says the directory is unreachable.",
        apply: |c, v| {
            let n: u32 = v.trim().parse().map_err(|_| ())?;
            if !(1..=60).contains(&n) {
                return Err(());
            }
            c.sign_in.ldap.timeout_seconds = n;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.admin_groups",
        default: "",
        expected: "empty, or group names separated by commas",
        doc: "Members of these groups are administrators; checked at every sign-in.",
        apply: |c, v| {
            c.sign_in.ldap.roles.admin_groups = GroupRoles::parse_admin_groups(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "ldap.course_groups",
        default: "",
        expected: "empty, or COURSE: group=instructor, group=student; COURSE: …",
        doc: "The course role each group gives; checked at every sign-in, so leaving the group leaves the course.",
        apply: |c, v| {
            c.sign_in.ldap.roles.courses = GroupRoles::parse_course_groups(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "header_sign_in.user_header",
        default: "",
        expected: "empty (off), or a header name such as X-Remote-User",
        doc: "The header in which the web server in front names the person it signed in; believed only from server.trusted_proxies.",
        apply: |c, v| {
            c.sign_in.header.user_header = header_name(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "header_sign_in.name_header",
        default: "",
        expected: "empty, or a header name",
        doc: "The header with the person's display name.",
        apply: |c, v| {
            c.sign_in.header.name_header = header_name(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "header_sign_in.email_header",
        default: "",
        expected: "empty, or a header name",
        doc: "The header with the person's e-mail address.",
        apply: |c, v| {
            c.sign_in.header.email_header = header_name(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "header_sign_in.groups_header",
        default: "",
        expected: "empty, or a header name",
        doc: "The header listing the person's groups, for header_sign_in.admin_groups and course_groups.",
        apply: |c, v| {
            c.sign_in.header.groups_header = header_name(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "header_sign_in.groups_separator",
        default: ";",
        expected: "one character",
        doc: "What separates the groups in the groups header.",
        apply: |c, v| {
            let mut chars = v.chars();
            match (chars.next(), chars.next()) {
                (Some(ch), None) if !ch.is_control() => {
                    c.sign_in.header.groups_separator = ch.to_string();
                    Ok(())
                }
                _ => Err(()),
            }
        },
    },
    KeySpec {
        key: "header_sign_in.admin_groups",
        default: "",
        expected: "empty, or group names separated by commas",
        doc: "Members of these groups are administrators; checked at every sign-in.",
        apply: |c, v| {
            c.sign_in.header.roles.admin_groups = GroupRoles::parse_admin_groups(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "header_sign_in.course_groups",
        default: "",
        expected: "empty, or COURSE: group=instructor, group=student; COURSE: …",
        doc: "The course role each group gives; checked at every sign-in.",
        apply: |c, v| {
            c.sign_in.header.roles.courses = GroupRoles::parse_course_groups(v)?;
            Ok(())
        },
    },
];
