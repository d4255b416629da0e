#!/usr/bin/env bash
# The complexity gate of .ci/run: no function of the SDK module (tests and
# the bench/, e2e/ and tools/ modules aside) over gocyclo 14, but those
# .ci/gocyclo-exceptions lists, each with its reason; and no line there for
# a function that is no longer over 14. Needs gocyclo on the PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
exceptions=.ci/gocyclo-exceptions

# keyed names the functions of gocyclo's lines by the package's path below
# the module and the function: "paygate/cmd/paygate runReport",
# "paygate (*Client).Payments".
keyed() {
  awk '{ split($4, at, ":"); file = at[1]; dir = file; sub(/\/?[^\/]*$/, "", dir)
         print (dir == "" ? "paygate" : "paygate/" dir) " " $3 }'
}

if awk '!/^[[:space:]]*(#|$)/ && NF < 3 { bad = 1; print FILENAME ":" NR ": want the package, the function and the reason: " $0 } END { exit !bad }' "$exceptions"; then
  exit 1
fi
lines=$(gocyclo -over 14 -ignore '_test\.go$|^(bench|e2e|tools)/' . || true)
over=$(printf '%s\n' "$lines" | sed '/^$/d' | keyed | sort -u)
allowed=$(awk '!/^[[:space:]]*(#|$)/ { print $1 " " $2 }' "$exceptions" | sort -u)
unlisted=$(comm -23 <(printf '%s\n' "$over") <(printf '%s\n' "$allowed") | sed '/^$/d')
stale=$(comm -13 <(printf '%s\n' "$over") <(printf '%s\n' "$allowed") | sed '/^$/d')
status=0
if [ -n "$unlisted" ]; then
  echo "over gocyclo 14: split the function, or list it in $exceptions with its reason"
  printf '%s\n' "$lines" | paste -d'|' <(printf '%s\n' "$lines" | keyed) - |
    awk -F'|' -v list="$unlisted" 'BEGIN { n = split(list, k, "\n"); for (i = 1; i <= n; i++) want[k[i]] = 1 } ($1 in want) { print "  " $2 }'
  status=1
fi
if [ -n "$stale" ]; then
  echo "$exceptions lists functions no longer over 14 (or gone): remove their lines"
  printf '  %s\n' "$stale"
  status=1
fi
[ "$status" = 0 ] && echo "gocyclo: no function over 14 but the $(printf '%s\n' "$allowed" | sed '/^$/d' | wc -l) listed in $exceptions"
exit "$status"
