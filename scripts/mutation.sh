#!/usr/bin/env bash
# The money path's mutation check (TESTING.md "Mutation check"): plants each
# defect of scripts/mutation/mutants.go in a scratch copy, one at a time, and
# runs the tests that must catch it under a hard time limit. Not in CI (CI
# runs -check: every defect still applies to the current text): it
# takes several minutes. Needs PAYGATE_TEST_POSTGRES_DSN for the sqldedup
# mutants (or pass -no-postgres to skip them).
#
#   scripts/mutation.sh                  # the working tree
#   scripts/mutation.sh -rev main        # a revision, e.g. to score it before a change
#   scripts/mutation.sh -run 'sql|page'  # some mutants only
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/mutation "$@"
