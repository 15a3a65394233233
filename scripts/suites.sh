#!/usr/bin/env bash
# The suites tests/main.c lists (VS_SUITES) must be exactly the suites the
# tests/test_*.c files define (`Suite *suite_<name>(void)`): the runner
# references each listed one strongly (a missing one is a link error);
# this catches the other direction, a suite defined but never run.
set -u
cd "$(dirname "$0")/.."
defined=$(grep -ho '^Suite \*suite_[A-Za-z0-9_]*(void)' tests/test_*.c |
	sed 's/^Suite \*suite_//; s/(void)$//' | sort)
listed=$(sed -n '/^#define VS_SUITES(X)/,/^$/p' tests/main.c |
	grep -o 'X([A-Za-z0-9_]*)' | sed 's/^X(//; s/)$//' | sort)
if [ "$defined" != "$listed" ]; then
	echo "tests/main.c VS_SUITES does not match the suites tests/test_*.c define:" >&2
	diff <(echo "$listed") <(echo "$defined") | sed -n 's/^< /  listed, not defined: /p; s/^> /  defined, not listed: /p' >&2
	exit 1
fi
