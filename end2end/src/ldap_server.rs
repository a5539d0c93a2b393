//! A real LDAP directory for sign-in tests: Debian's OpenLDAP `slapd` (installed by
//! `scripts/setup.sh --test`), run as the current user on free loopback ports from a temp
//! dir, with StartTLS on `ldap://` and TLS on `ldaps://`.
//!
//! Anonymous clients can bind but read nothing: searches need the service account
//! ([`LdapServer::bind_dn`]), which reads everything but passwords.

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

use crate::free_port;

const BASE_DN: &str = "dc=campus,dc=example";
const PEOPLE_DN: &str = "ou=people,dc=campus,dc=example";
const GROUPS_DN: &str = "ou=groups,dc=campus,dc=example";
const ROOT_DN: &str = "cn=admin,dc=campus,dc=example";
const ROOT_PASSWORD: &str = "admin-secret";
const BIND_DN: &str = "cn=portal,dc=campus,dc=example";
const BIND_PASSWORD: &str = "portal-secret";

pub struct Person {
    pub uid: &'static str,
    pub name: &'static str,
    pub mail: &'static str,
    pub password: &'static str,
}

/// A running slapd. Killed on drop, its directory removed.
pub struct LdapServer {
    child: Child,
    ldap_port: u16,
    ldaps_port: u16,
    dir: tempfile::TempDir,
}

impl LdapServer {
    /// People under `ou=people` (inetOrgPerson: `uid`, `cn` = name, `sn`, `mail`,
    /// `userPassword`), groups under `ou=groups` (groupOfNames, `member` = people's DNs).
    pub fn start(people: &[Person], groups: &[(&str, &[&str])]) -> LdapServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        fs::create_dir(d.join("db")).expect("db dir");
        make_certificates(d);
        fs::write(d.join("slapd.conf"), slapd_conf(&d.display().to_string())).expect("slapd.conf");
        fs::write(d.join("seed.ldif"), seed_ldif(people, groups)).expect("seed.ldif");
        run("slapadd", &["-f", &d.join("slapd.conf").display().to_string(), "-l", &d.join("seed.ldif").display().to_string()], "");

        let ldap_port = free_port();
        let ldaps_port = loop {
            let p = free_port();
            if p != ldap_port {
                break p;
            }
        };
        let log = fs::File::create(d.join("slapd.log")).expect("slapd.log");
        // `-d` keeps it in the foreground; 256 (stats) logs every operation and its result.
        let child = Command::new("/usr/sbin/slapd")
            .arg("-f")
            .arg(d.join("slapd.conf"))
            .args(["-h", &format!("ldap://127.0.0.1:{ldap_port}/ ldaps://127.0.0.1:{ldaps_port}/"), "-d", "256"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .expect("/usr/sbin/slapd starts (run scripts/setup.sh --test)");
        let mut server = LdapServer { child, ldap_port, ldaps_port, dir };
        server.wait_ready();
        server
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("slapd exited early ({status}):\n{}", self.log());
            }
            let ok = ldap_command("ldapwhoami")
                .args(["-H", &self.ldap_url(), "-D", BIND_DN, "-w", BIND_PASSWORD])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                return;
            }
            if Instant::now() > deadline {
                panic!("slapd did not answer on {} within 20 s:\n{}", self.ldap_url(), self.log());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `ldap://127.0.0.1:PORT`, StartTLS offered. (OpenLDAP's own tools check a
    /// `localhost` URL against the machine's name, so the URLs use the IP.)
    pub fn ldap_url(&self) -> String {
        format!("ldap://127.0.0.1:{}", self.ldap_port)
    }

    pub fn ldaps_url(&self) -> String {
        format!("ldaps://127.0.0.1:{}", self.ldaps_port)
    }

    /// The test CA that signed the server's certificate (CN and SAN IP 127.0.0.1, SAN DNS
    /// localhost); a CA of its own rather than one self-signed certificate, since rustls
    /// refuses a CA certificate as a server's.
    pub fn ca_pem_path(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    pub fn base_dn(&self) -> &'static str {
        BASE_DN
    }

    pub fn people_dn(&self) -> &'static str {
        PEOPLE_DN
    }

    pub fn groups_dn(&self) -> &'static str {
        GROUPS_DN
    }

    pub fn person_dn(&self, uid: &str) -> String {
        format!("uid={uid},{PEOPLE_DN}")
    }

    /// The read-only service account the portal searches with.
    pub fn bind_dn(&self) -> &'static str {
        BIND_DN
    }

    pub fn bind_password(&self) -> &'static str {
        BIND_PASSWORD
    }

    /// Binds as this person fail from now on with invalidCredentials, as for a wrong
    /// password: the ppolicy overlay's `pwdAccountLockedTime` (000001010000Z: for good).
    pub fn lock(&self, uid: &str) {
        self.modify(&format!(
            "dn: {}\nchangetype: modify\nreplace: pwdAccountLockedTime\npwdAccountLockedTime: 000001010000Z\n",
            self.person_dn(uid)
        ));
    }

    /// The uids of the group's members.
    pub fn members(&self, group_cn: &str) -> Vec<String> {
        let out = run(
            "ldapsearch",
            &["-H", &self.ldap_url(), "-D", ROOT_DN, "-w", ROOT_PASSWORD, "-LLL", "-o", "ldif-wrap=no",
              "-b", &format!("cn={group_cn},{GROUPS_DN}"), "-s", "base", "member"],
            "",
        );
        out.lines()
            .filter_map(|l| l.strip_prefix("member: uid="))
            .filter_map(|l| l.split_once(','))
            .map(|(uid, _)| uid.to_string())
            .collect()
    }

    /// Makes these people the group's only members (none is fine: a groupOfNames must keep
    /// a `member`, so an empty one gets the empty DN, as is usual).
    pub fn set_members(&self, group_cn: &str, uids: &[&str]) {
        let mut ldif = format!("dn: cn={group_cn},{GROUPS_DN}\nchangetype: modify\nreplace: member\n");
        for uid in uids {
            ldif += &format!("member: {}\n", self.person_dn(uid));
        }
        if uids.is_empty() {
            ldif += "member:\n";
        }
        self.modify(&ldif);
    }

    pub fn add_to_group(&self, group_cn: &str, uid: &str) {
        let mut uids = self.members(group_cn);
        if !uids.iter().any(|u| u == uid) {
            uids.push(uid.to_string());
        }
        self.set_members(group_cn, &uids.iter().map(String::as_str).collect::<Vec<_>>());
    }

    pub fn remove_from_group(&self, group_cn: &str, uid: &str) {
        let uids = self.members(group_cn);
        self.set_members(group_cn, &uids.iter().map(String::as_str).filter(|u| *u != uid).collect::<Vec<_>>());
    }

    /// Makes this person a member of exactly these groups, of those in the directory.
    pub fn set_groups(&self, uid: &str, group_cns: &[&str]) {
        let out = run(
            "ldapsearch",
            &["-H", &self.ldap_url(), "-D", ROOT_DN, "-w", ROOT_PASSWORD, "-LLL", "-o", "ldif-wrap=no",
              "-b", GROUPS_DN, "(objectClass=groupOfNames)", "cn"],
            "",
        );
        for cn in out.lines().filter_map(|l| l.strip_prefix("cn: ")) {
            if group_cns.contains(&cn) {
                self.add_to_group(cn, uid);
            } else {
                self.remove_from_group(cn, uid);
            }
        }
    }

    /// slapd's log so far (its `stats` level: every bind and search with its result).
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("slapd.log")).unwrap_or_default()
    }

    fn modify(&self, ldif: &str) {
        run("ldapmodify", &["-H", &self.ldap_url(), "-D", ROOT_DN, "-w", ROOT_PASSWORD], ldif);
    }
}

impl Drop for LdapServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An OpenLDAP client tool with simple binds (`-x`) that reads no ldap.conf or ldaprc.
fn ldap_command(tool: &str) -> Command {
    let mut command = Command::new(tool);
    command.arg("-x").env("LDAPNOINIT", "1");
    command
}

/// Runs the LDAP tool with `input` on stdin; its stdout (panics if it fails).
fn run(tool: &str, args: &[&str], input: &str) -> String {
    let mut command = if tool == "slapadd" { Command::new("/usr/sbin/slapadd") } else { ldap_command(tool) };
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {tool} (run scripts/setup.sh --test): {e}"));
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("stdin written");
    let out = child.wait_with_output().expect("tool ran");
    assert!(out.status.success(), "{tool} {args:?} failed:\n{input}\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A test CA (`ca.pem`) and the server's key and certificate signed by it.
fn make_certificates(d: &std::path::Path) {
    fs::write(
        d.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext.cnf");
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    let steps = [
        format!("req -x509 {ec} -keyout ca.key -out ca.pem -days 7 -subj /CN=slicehub-test-ca"),
        format!("req {ec} -keyout key.pem -out cert.csr -subj /CN=127.0.0.1"),
        "x509 -req -in cert.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 7 -extfile ext.cnf".into(),
    ];
    for args in steps {
        let out = Command::new("openssl").args(args.split(' ')).current_dir(d).output().expect("openssl runs");
        assert!(out.status.success(), "openssl {args}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

fn slapd_conf(d: &str) -> String {
    format!(
        r#"include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload ppolicy
pidfile {d}/slapd.pid
argsfile {d}/slapd.args
TLSCACertificateFile {d}/ca.pem
TLSCertificateFile {d}/cert.pem
TLSCertificateKeyFile {d}/key.pem

database mdb
suffix "{BASE_DN}"
rootdn "{ROOT_DN}"
rootpw {ROOT_PASSWORD}
directory {d}/db
overlay ppolicy
ppolicy_default "cn=default,ou=policies,{BASE_DN}"
access to attrs=userPassword
  by anonymous auth
  by * none
access to *
  by dn.exact="{BIND_DN}" read
  by self read
  by anonymous auth
  by * none
"#
    )
}

fn seed_ldif(people: &[Person], groups: &[(&str, &[&str])]) -> String {
    let mut ldif = format!(
        "dn: {BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\ndc: campus\no: Campus\n\n\
         dn: {PEOPLE_DN}\nobjectClass: organizationalUnit\nou: people\n\n\
         dn: {GROUPS_DN}\nobjectClass: organizationalUnit\nou: groups\n\n\
         dn: ou=policies,{BASE_DN}\nobjectClass: organizationalUnit\nou: policies\n\n\
         dn: cn=default,ou=policies,{BASE_DN}\nobjectClass: organizationalRole\nobjectClass: pwdPolicy\n\
         cn: default\npwdAttribute: userPassword\npwdLockout: TRUE\n\n\
         dn: {BIND_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\n\
         cn: portal\nuserPassword: {BIND_PASSWORD}\n\n"
    );
    for p in people {
        let sn = p.name.rsplit(' ').next().unwrap_or(p.name);
        ldif += &format!("dn: uid={},{PEOPLE_DN}\nobjectClass: inetOrgPerson\nuid: {}\n", p.uid, p.uid);
        ldif += &(attr("cn", p.name) + &attr("sn", sn) + &attr("mail", p.mail) + &attr("userPassword", p.password) + "\n");
    }
    for (cn, uids) in groups {
        ldif += &format!("dn: cn={cn},{GROUPS_DN}\nobjectClass: groupOfNames\ncn: {cn}\n");
        for uid in *uids {
            ldif += &format!("member: uid={uid},{PEOPLE_DN}\n");
        }
        ldif += if uids.is_empty() { "member:\n\n" } else { "\n" };
    }
    ldif
}

/// An LDIF line, base64 where the value is not a plain ASCII string (`Zoë`, say).
fn attr(name: &str, value: &str) -> String {
    let plain = value.bytes().all(|b| (b' '..=b'~').contains(&b))
        && !value.starts_with([' ', ':', '<'])
        && !value.ends_with(' ');
    if plain {
        format!("{name}: {value}\n")
    } else {
        format!("{name}:: {}\n", base64::engine::general_purpose::STANDARD.encode(value))
    }
}
