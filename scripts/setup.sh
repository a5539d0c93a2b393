#!/usr/bin/env bash
# Installs what building and testing SliceHub needs, using only the package registries.
# Idempotent: each step checks first, so a second run takes seconds.
#   scripts/setup.sh          build tools (wasm target, cargo-leptos, wasm-bindgen-cli, wasm-opt,
#                             debootstrap for the notebook image)
#   scripts/setup.sh --package also cargo-deb (scripts/package-deb.sh)
#   scripts/setup.sh --test   also cargo-deb, lintian, sqlite3, Chromium + chromedriver,
#                             PostgreSQL, busybox-static, Prometheus, curl
set -euo pipefail

CARGO_LEPTOS_VERSION=0.3.11
CARGO_DEB_VERSION=3.6.2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WITH_TEST=0
WITH_PACKAGE=0
case "${1:-}" in
  --test) WITH_TEST=1; WITH_PACKAGE=1 ;;
  --package) WITH_PACKAGE=1 ;;
esac


say() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

APT_UPDATED=0
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  say "apt: installing ${missing[*]}"
  if [[ $APT_UPDATED -eq 0 ]]; then as_root apt-get update -qq; APT_UPDATED=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The crate source of NAME@VERSION, unpacked from cargo's own registry cache
# (a failed `cargo install` is the registry-neutral way to make cargo download it).
crate_source() {
  local name=$1 version=$2 dest=$3 crate
  crate=$(ls "$HOME"/.cargo/registry/cache/*/"$name-$version.crate" 2>/dev/null | head -n1 || true)
  if [[ -z "$crate" ]]; then
    cargo install --locked "$name" --version "$version" --root "$dest/unused" >/dev/null 2>&1 || true
    crate=$(ls "$HOME"/.cargo/registry/cache/*/"$name-$version.crate" 2>/dev/null | head -n1 || true)
  fi
  [[ -n "$crate" ]] || { say "could not download $name $version from the registry"; exit 1; }
  tar -xzf "$crate" -C "$dest"
  echo "$dest/$name-$version"
}

# 1. the wasm target
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# 2. wasm-opt (release builds run it; without it cargo-leptos would try a download)
have wasm-opt || apt_install binaryen

# 2b. debootstrap: the notebook image is built from Debian's packages (docker/offline/build.sh)
have debootstrap || apt_install debootstrap

# 3. cargo-leptos, built with no_downloads. Its published lock pins cargo-util-schemas
#    0.14.2, which needs a newer rustc than ours, so one package is moved back one patch.
if ! cargo leptos --version 2>/dev/null | grep -q "$CARGO_LEPTOS_VERSION"; then
  say "building cargo-leptos $CARGO_LEPTOS_VERSION (about 10 minutes on 2 cores, once)"
  work=$(mktemp -d)
  src=$(crate_source cargo-leptos "$CARGO_LEPTOS_VERSION" "$work")
  (cd "$src" && cargo update -q -p cargo-util-schemas --precise 0.14.1 \
     && cargo install -q --path . --locked --features no_downloads)
  rm -rf "$work"
fi

# 4. wasm-bindgen-cli at exactly the version the workspace lock uses.
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' "$ROOT/Cargo.lock")
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WB_VERSION"; then
  say "building wasm-bindgen-cli $WB_VERSION (about 3 minutes, once)"
  work=$(mktemp -d)
  src=$(crate_source wasm-bindgen-cli "$WB_VERSION" "$work")
  (cd "$src"
   # Its lock may name a webpki-roots the registry mirror does not have yet; step it back.
   if ! cargo fetch -q --locked >/dev/null 2>&1; then
     wr=$(awk '/^name = "webpki-roots"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
     [[ "$wr" == "1.0.11" ]] && cargo update -q -p webpki-roots@1.0.11 --precise 1.0.10
   fi
   cargo install -q --path . --locked)
  rm -rf "$work"
fi

# 5. cargo-deb, for the Debian package
if [[ $WITH_PACKAGE -eq 1 ]] && ! cargo deb --version 2>/dev/null | grep -q "$CARGO_DEB_VERSION"; then
  say "building cargo-deb $CARGO_DEB_VERSION (about 2 minutes, once)"
  cargo install -q --locked cargo-deb --version "$CARGO_DEB_VERSION"
fi

if [[ $WITH_TEST -eq 1 ]]; then
  # 6. a real browser, a real PostgreSQL, and the tools the offline image builder uses
  have chromium && have chromedriver || apt_install chromium chromium-driver
  have pg_ctlcluster || apt_install postgresql
  [[ -x /bin/busybox ]] || apt_install busybox-static
  have curl || apt_install curl
  # the package test checks the .deb and loads the previous release's SQLite database
  have lintian || apt_install lintian
  have sqlite3 || apt_install sqlite3
  # a real Prometheus for the metrics test (its packaged service is not wanted running)
  if ! have prometheus; then
    apt_install prometheus
    service prometheus stop >/dev/null 2>&1 || true
  fi
  # a real LDAP server for the directory sign-in tests (they run their own slapd, not the service)
  if ! [[ -x /usr/sbin/slapd ]] || ! have ldapmodify || ! have openssl; then
    apt_install slapd ldap-utils openssl
    service slapd stop >/dev/null 2>&1 || true
  fi
  # a real OpenID Connect provider for the single sign-on tests, in a venv under target/
  # (0.4.x needs Python 3.12; 0.3.4 runs on Debian 12's 3.11)
  IDP_VENV="$ROOT/target/idp-venv"
  if [[ ! -x "$IDP_VENV/bin/oidc-provider-mock" ]]; then
    say "installing oidc-provider-mock 0.3.4 into target/idp-venv"
    have python3 || apt_install python3
    python3 -c 'import ensurepip' >/dev/null 2>&1 || apt_install python3-venv
    rm -rf "$IDP_VENV"
    python3 -m venv "$IDP_VENV"
    "$IDP_VENV/bin/pip" install -q oidc-provider-mock==0.3.4
  fi
  # the real PyPI clients that the JupyterHub-compatible API tests drive unchanged, in a venv under target/
  HUB_VENV="$ROOT/target/hub-venv"
  if [[ ! -x "$HUB_VENV/bin/jupyterhub-singleuser" || ! -x "$HUB_VENV/bin/nbgrader" \
        || ! -x "$HUB_VENV/bin/openapi-python-client" ]]; then
    say "installing jupyterhub 6.1.1, nbgrader 0.9.6, openapi-python-client 0.29.1 into target/hub-venv"
    have python3 || apt_install python3
    python3 -c 'import ensurepip' >/dev/null 2>&1 || apt_install python3-venv
    rm -rf "$HUB_VENV"
    python3 -m venv "$HUB_VENV"
    "$HUB_VENV/bin/pip" install -q jupyterhub==6.1.1 nbgrader==0.9.6 openapi-python-client==0.29.1
  fi
  # 7. axe-core for the browser tests' accessibility check; it ships inside a Python wheel
  #    (MPL-2.0) and is kept under target/, never in the repository.
  AXE="$ROOT/target/axe/axe.min.js"
  if [[ ! -s "$AXE" ]]; then
    say "fetching axe-core (axe-playwright-python 0.1.8)"
    have unzip || apt_install unzip
    work=$(mktemp -d)
    python3 -m pip download -q --no-deps --only-binary=:all: axe-playwright-python==0.1.8 -d "$work"
    mkdir -p "$(dirname "$AXE")"
    unzip -p "$work"/axe_playwright_python-0.1.8-*.whl axe_playwright_python/axe.min.js > "$AXE.part"
    mv "$AXE.part" "$AXE"
    rm -rf "$work"
  fi
fi
say "ready"
