#!/usr/bin/env bash
# Prints the Debian mirror this machine's apt uses (SLICEHUB_DEBIAN_MIRROR overrides it), for
# the offline image builds' debootstrap; fails when apt names none.
set -euo pipefail
# The Debian mirror this machine's apt uses: the URIs of the first deb stanza (or line) whose
# suites include a release suite (one without a '-', so not -security or -updates).
if [[ -n ${SLICEHUB_DEBIAN_MIRROR:-} ]]; then
  echo "$SLICEHUB_DEBIAN_MIRROR"
  exit 0
fi
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list.d/*.sources; do
  [[ -r $f ]] || continue
  awk '
    function flush() {
      if (!found && types ~ / deb( |$)/ && suites ~ / [a-z]+( |$)/ && uri ~ /^(https?|file):/ && enabled != "no") {
        print uri; found = 1
      }
      types = ""; suites = ""; uri = ""; enabled = ""
    }
    /^[ \t]*#/ { next }
    /^[ \t]*$/ { flush(); next }
    tolower($1) == "types:"   { types = ""; for (i = 2; i <= NF; i++) types = types " " $i }
    tolower($1) == "suites:"  { suites = ""; for (i = 2; i <= NF; i++) suites = suites " " $i }
    tolower($1) == "uris:"    { uri = $2 }
    tolower($1) == "enabled:" { enabled = tolower($2) }
    END { flush(); exit !found }
  ' "$f" && exit 0
done
if [[ -r /etc/apt/sources.list ]]; then
  awk '
    $1 == "deb" {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) ~ /^[a-z]+$/ && $i ~ /^(https?|file):/) { print $i; found = 1; exit }
    }
    END { exit !found }
  ' /etc/apt/sources.list && exit 0
fi
exit 1

