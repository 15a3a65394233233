#!/usr/bin/env bash
# scripts/dups-nontest.sh — the `duplicates` scan of the library, CLI and
# scripts alone (tests, bench and examples left out), for the issue 16
# target: duplicate pairs in non-test code.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files | grep -vE '^(tests|bench|examples)/' | while read -r f; do
	mkdir -p "$tmp/$(dirname "$f")"
	cp "$f" "$tmp/$f"
done
duplicates --repo "$tmp" --most "${1:-200}" --seconds 120
