#!/bin/sh
# The test command of README.md: builds the source tarball (vignettes
# included) and runs R CMD check on it, failing on any ERROR or WARNING.
set -eu
cd "$(dirname "$0")/.."
Rscript tools/install-deps.R
rm -rf sparsevi.Rcheck sparsevi_*.tar.gz
R CMD build .
tarball=$(ls sparsevi_*.tar.gz | head -n 1)
status=0
NOT_CRAN=true _R_CHECK_FORCE_SUGGESTS_=false _R_CHECK_CRAN_INCOMING_=false \
  R CMD check --no-manual "$tarball" || status=$?
log=sparsevi.Rcheck/00check.log
# testthat's own summary, then a plain closing line for CI
out=sparsevi.Rcheck/tests/testthat.Rout
[ -f "$out" ] || out=sparsevi.Rcheck/tests/testthat.Rout.fail
if [ -f "$out" ]; then
  line=$(grep -E '\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]' "$out" | tail -n 1)
  echo "testthat: $line"
  fail=$(echo "$line" | sed -E 's/.*FAIL ([0-9]+).*/\1/')
  skip=$(echo "$line" | sed -E 's/.*SKIP ([0-9]+).*/\1/')
  pass=$(echo "$line" | sed -E 's/.*PASS ([0-9]+).*/\1/')
  echo "tests: $pass passed, $fail failed, $skip skipped"
fi
if [ "$status" -ne 0 ]; then
  echo "R CMD check failed (exit $status)"; exit 1
fi
if grep -qE '^Status:.*(ERROR|WARNING)' "$log"; then
  grep -E '^Status:' "$log"; echo "R CMD check reported an ERROR or WARNING"; exit 1
fi
grep -E '^Status:' "$log"
# Fixed-budget fuzz run (issue 11) against the package R CMD check installed:
# random and mutated arguments to every exported function and .Call entry
# point; any crash or hang fails the check.
R_LIBS="$PWD/sparsevi.Rcheck${R_LIBS:+:$R_LIBS}" Rscript tools/fuzz.R 1500 1 120 ||
  { echo "fuzz run found a crash or a hang"; exit 1; }
