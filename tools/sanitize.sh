#!/bin/sh
# Builds sparsevi with AddressSanitizer and UndefinedBehaviorSanitizer and runs
# the test suite under them. Any sanitizer report fails the run.
# Usage: sh tools/sanitize.sh            (from the package root)
set -eu
cd "$(dirname "$0")/.."
lib=$(mktemp -d)
mv=$(mktemp)
cat > "$mv" <<'MK'
CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
CXXFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
LDFLAGS = -fsanitize=address,undefined
MK
R_MAKEVARS_USER="$mv" R CMD INSTALL --preclean --clean --no-test-load --library="$lib" . >"$lib/install.log" 2>&1 ||
  { cat "$lib/install.log"; exit 1; }
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
log="$lib/sanitizer"
# R itself holds memory until exit by design, so leak detection is off here;
# tools/valgrind.sh checks for leaks in our code.
status=0
LD_PRELOAD="$asan $ubsan" \
ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:log_path=$log" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$log" \
R_LIBS="$lib" NOT_CRAN=true \
  Rscript -e 'res <- testthat::test_dir("tests/testthat", package = "sparsevi", load_package = "installed", reporter = "summary", stop_on_failure = TRUE)' || status=$?
# the fixed-budget fuzz run under the sanitizers too: memory errors that do
# not crash a normal build are reported here (FUZZ_CASES=0 skips it)
fuzz_cases=${FUZZ_CASES:-1500}
if [ "$fuzz_cases" -gt 0 ]; then
  LD_PRELOAD="$asan $ubsan" \
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:log_path=$log" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$log" \
  R_LIBS="$lib" Rscript tools/fuzz.R "$fuzz_cases" 1 300 || status=$?
fi
if ls "$log".* >/dev/null 2>&1; then
  cat "$log".*
  echo "sanitizer errors: $(cat "$log".* | grep -c 'ERROR: \|runtime error')"
  exit 1
fi
echo "sanitizer errors: 0"
exit $status
