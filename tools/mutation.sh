#!/usr/bin/env bash
# The money path's mutation check (TESTING.md "Mutation check"): plants each
# defect of tools/mutation/defects.tsv in a scratch copy, one at a time, and
# runs the tests that must catch it under a hard time limit. By hand, not in
# CI: it takes several minutes (CI only prints the defects that no longer
# locate, -check). Needs PAYGATE_TEST_POSTGRES_DSN for the pgstore defects
# (or pass -no-postgres to skip them).
#
#   tools/mutation.sh                  # the working tree
#   tools/mutation.sh -rev main        # a revision, e.g. to score it before a change
#   tools/mutation.sh -run 'sql|page'  # some defects only
#   tools/mutation.sh -list            # every defect and where it applies today
#   tools/mutation.sh -check           # only those that no longer locate
set -euo pipefail
cd "$(dirname "$0")"
exec go run ./mutation "$@"
