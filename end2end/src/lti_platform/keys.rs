//! RSA signing keys made with the `openssl` CLI, and their JWKs.
//!
//! jsonwebtoken is built without its `use_pem` feature in this workspace, so keys go in as
//! PKCS#1 DER (`EncodingKey::from_rsa_der`) and the public half is read from that DER.

use std::process::Command;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::EncodingKey;
use serde_json::{json, Value};

/// An RSA-2048 key pair with the `kid` it is published under.
#[derive(Clone)]
pub(super) struct RsaKey {
    pub kid: String,
    der: Vec<u8>,
    modulus: Vec<u8>,
    exponent: Vec<u8>,
}

impl RsaKey {
    /// A fresh key (about 0.1 s: `openssl genrsa` in a temp dir).
    pub fn generate(kid: String) -> RsaKey {
        let dir = tempfile::tempdir().expect("temp dir for an RSA key");
        let pem = dir.path().join("key.pem");
        let der = dir.path().join("key.der");
        openssl(&["genrsa", "-traditional", "-out", path(&pem), "2048"]);
        // `-traditional`: PKCS#1 RSAPrivateKey, what ring (under jsonwebtoken) reads; without
        // it OpenSSL 3 writes PKCS#8.
        openssl(&["rsa", "-in", path(&pem), "-outform", "DER", "-traditional", "-out", path(&der)]);
        let der = std::fs::read(&der).expect("the DER key openssl wrote");
        let (modulus, exponent) = public_half(&der);
        RsaKey { kid, der, modulus, exponent }
    }

    pub fn encoding_key(&self) -> EncodingKey {
        EncodingKey::from_rsa_der(&self.der)
    }

    /// The public key as a JWK (RFC 7517/7518), as LMSs publish them.
    pub fn jwk(&self) -> Value {
        json!({
            "kty": "RSA",
            "alg": "RS256",
            "use": "sig",
            "kid": self.kid,
            "n": URL_SAFE_NO_PAD.encode(&self.modulus),
            "e": URL_SAFE_NO_PAD.encode(&self.exponent),
        })
    }
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run openssl (is it installed?): {e}"));
    assert!(
        out.status.success(),
        "openssl {}: {}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `modulus` and `publicExponent` of a PKCS#1 `RSAPrivateKey`
/// (`SEQUENCE { version INTEGER, modulus INTEGER, publicExponent INTEGER, ... }`), unsigned
/// big-endian without leading zeros, as JWKs want them.
fn public_half(der: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (tag, body, _) = der_item(der);
    assert_eq!(tag, 0x30, "PKCS#1 key is a SEQUENCE");
    let (_version, rest) = der_integer(body);
    let (modulus, rest) = der_integer(rest);
    let (exponent, _) = der_integer(rest);
    (modulus, exponent)
}

fn der_integer(input: &[u8]) -> (Vec<u8>, &[u8]) {
    let (tag, value, rest) = der_item(input);
    assert_eq!(tag, 0x02, "INTEGER in the PKCS#1 key");
    let first = value.iter().position(|&b| b != 0).unwrap_or(value.len().saturating_sub(1));
    (value[first..].to_vec(), rest)
}

/// One DER TLV: (tag, value, what follows).
fn der_item(input: &[u8]) -> (u8, &[u8], &[u8]) {
    let tag = input[0];
    let (len, header) = match input[1] {
        n if n < 0x80 => (n as usize, 2),
        n => {
            let bytes = (n & 0x7f) as usize;
            let len = input[2..2 + bytes].iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
            (len, 2 + bytes)
        }
    };
    (tag, &input[header..header + len], &input[header + len..])
}
