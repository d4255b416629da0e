#!/usr/bin/env bash
# Figures of the SDK module for a reviewer, printed by .ci/run: the root
# package's size, its long files and exported names, each package's lines,
# the test files, the root's file-level reference graph and its cycles,
# and the mutation-catalogue defects that no longer locate
# (tools/mutation -check). It prints; it never fails the run for a figure.
cd "$(dirname "$0")/.." || exit 0
(cd tools && go run ./report ..) || echo "report: the module's figures could not be computed"
echo "the root package's files: which uses names of which, and the cycles among them:"
(cd tools && go run ./filegraph ..) || echo "report: the file graph could not be computed"
echo "mutation catalogue (tools/mutation/defects.tsv):"
(cd tools && go run ./mutation -check) || echo "report: the mutation catalogue could not be read"
exit 0
