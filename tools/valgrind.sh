#!/bin/sh
# Runs the test suite under valgrind memcheck and reports errors and leaks
# that point into sparsevi's own code.
# Usage: sh tools/valgrind.sh [filter]   (filter: a regular expression on test
# file names, as testthat's `filter`; default all files: slow under valgrind)
set -eu
filter=${1:-}
cd "$(dirname "$0")/.."
lib=$(mktemp -d)
R CMD INSTALL --library="$lib" . >"$lib/install.log" 2>&1 || { cat "$lib/install.log"; exit 1; }
out="$lib/valgrind.log"
R_LIBS="$lib" NOT_CRAN=true R -d "valgrind --leak-check=full --track-origins=yes --log-file=$out" \
  --vanilla -e "f <- '$filter'; testthat::test_dir('tests/testthat', package = 'sparsevi', load_package = 'installed', reporter = 'summary', stop_on_failure = FALSE, filter = if (nzchar(f)) f else NULL)"
errors=$(grep -E 'ERROR SUMMARY' "$out" | tail -n 1)
echo "$errors"
grep -E 'definitely lost|indirectly lost' "$out" | tail -n 2
ours=$(grep -B2 -A25 -E 'definitely lost|Invalid|uninitialised' "$out" | grep -c 'sparsevi.so' || true)
echo "valgrind records pointing into sparsevi.so: $ours"
[ "$ours" -eq 0 ]
