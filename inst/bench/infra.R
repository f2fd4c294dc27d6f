# Benchmark of sparsevi's shared infrastructure:
#   1. top-L selection (partial quickselect) against a full sort;
#   2. the inner-loop special functions against R's own (digamma, lgamma, exp);
#   3. read_uci_bow() on the largest corpus (wikipara): time, peak memory
#      (maximum resident set size from /usr/bin/time -v), size of the result.
#
# Run from the package root, with sparsevi installed:
#   Rscript inst/bench/infra.R
# Data are looked up in ../shared/data (override with SPARSEVI_DATA).
# Writes inst/bench/results/infra.txt.

suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))

# (no model is fitted here: no settings to name; smoke mode: 1/100 of the
# sizes, no read of the shared data)
smoke <- bench_smoke()
data_dir <- if (smoke) tempfile() else Sys.getenv("SPARSEVI_DATA", file.path("..", "shared", "data"))
out_file <- bench_out("infra.txt")
n_vals <- if (smoke) 2e4 else 2e6
lines <- character(0)
say <- function(...) {
  s <- sprintf(...)
  cat(s, "\n", sep = "")
  lines <<- c(lines, s)
}

# Median of `reps` timings (seconds) of expression `f`.
time_it <- function(f, reps = 5) {
  if (smoke) return(system.time(f(), gcFirst = FALSE)[["elapsed"]])
  f() # warm up
  stats::median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
}

bench_header(say, "sparsevi infrastructure benchmark (inst/bench/infra.R)")
say("R %s on %s; 1 thread", getRversion(), R.version$platform)
if (file.exists("/proc/loadavg")) {
  say("load average at start (shared machine; timings are medians): %s",
      paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " "))
}
say("")

# ---- 1. top-L selection against a full sort ----
say("Top-L selection vs full sort (%s), about 2e6 values per timing",
    "ffi_svi_select_top, method 0 vs 1")
say("%7s %4s %12s %12s %8s", "K", "L", "select (s)", "sort (s)", "ratio")
src <- sparsevi:::uniform_source(1)
for (K in c(10, 100, 1000, 10000)) {
  n <- max(1L, as.integer(n_vals / K))
  W <- matrix(src(K * n), K, n)
  for (L in c(1L, 4L, 16L)) {
    if (L > K) next
    t_sel <- time_it(function() .Call(sparsevi:::ffi_svi_select_top, W, L, 0L))
    t_sort <- time_it(function() .Call(sparsevi:::ffi_svi_select_top, W, L, 1L))
    say("%7d %4d %12.4f %12.4f %7.1fx", K, L, t_sel, t_sort, t_sort / t_sel)
  }
}
say("(ratio = sort time / selection time; > 1 means selection is faster)")
say("")

# ---- 2. special functions ----
say("Special functions on 2e6 arguments (ffi_svi_special)")
say("%-8s %-22s %12s %12s %8s", "function", "arguments", "sparsevi (s)", "R (s)", "ratio")
args <- list(
  "log-unif (1e-3, 1e3)" = 10^(src(n_vals) * 6 - 3),
  "unif (10, 1000)" = 10 + src(n_vals) * 990,
  "unif (-50, 0)" = (src(n_vals) - 1) * 50
)
cases <- list(c("digamma", 0, 3, 1), c("digamma", 0, 3, 2), c("lgamma", 1, 4, 1),
              c("lgamma", 1, 4, 2), c("exp", 2, 5, 3))
for (case in cases) {
  x <- args[[as.integer(case[4])]]
  ours <- time_it(function() .Call(sparsevi:::ffi_svi_special, x, as.integer(case[2])), reps = 7)
  theirs <- time_it(function() .Call(sparsevi:::ffi_svi_special, x, as.integer(case[3])), reps = 7)
  say("%-8s %-22s %12.4f %12.4f %7.1fx", case[1], names(args)[as.integer(case[4])],
      ours, theirs, theirs / ours)
}
say("(ratio = R's time / sparsevi's time, same .Call loop around each)")
say("")

# ---- 3. read_uci_bow on wikipara ----
dw <- file.path(data_dir, "wikipara", "docword.wikipara.txt.gz")
vo <- file.path(data_dir, "wikipara", "vocab.wikipara.txt")
time_bin <- "/usr/bin/time"
if (!file.exists(dw)) {
  say("read_uci_bow: skipped, %s not found", dw)
} else if (!file.exists(time_bin)) {
  say("read_uci_bow: skipped, %s not found (apt-get install time)", time_bin)
} else {
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(.libPaths(), collapse = ":")
  run <- function(code) {
    res <- suppressWarnings(system2(time_bin, c("-v", rscript, "-e", shQuote(code)),
                                    stdout = TRUE, stderr = TRUE,
                                    env = paste0("R_LIBS=", shQuote(libs))))
    rss <- as.numeric(sub(".*: *", "", grep("Maximum resident set size", res, value = TRUE)))
    list(out = res, rss_mb = rss / 1024)
  }
  base <- run("suppressPackageStartupMessages(library(sparsevi)); invisible(gc())")
  code <- sprintf(paste0(
    "suppressPackageStartupMessages(library(sparsevi));",
    "t <- system.time(x <- read_uci_bow('%s', '%s'))[['elapsed']];",
    "cat('RESULT', t, nrow(x), ncol(x), length(x$term), sum(x$count),",
    "as.numeric(object.size(x)) / 2^20, '\\n')"), dw, vo)
  full <- run(code)
  r <- strsplit(grep("^RESULT", full$out, value = TRUE), " +")[[1]]
  say("read_uci_bow() on wikipara (%s, %.0f MB gzipped)", basename(dw),
      file.size(dw) / 2^20)
  say("  corpus: %s documents x %s terms, %s entries, %s tokens",
      format(as.numeric(r[3]), big.mark = ","), format(as.numeric(r[4]), big.mark = ","),
      format(as.numeric(r[5]), big.mark = ","), format(as.numeric(r[6]), big.mark = ","))
  say("  time: %.1f s (elapsed, 1 thread)", as.numeric(r[2]))
  say("  peak memory (max RSS): %.0f MB; R with sparsevi loaded alone: %.0f MB",
      full$rss_mb, base$rss_mb)
  say("  size of the result (object.size): %.0f MB; peak increment / result: %.2f",
      as.numeric(r[7]), (full$rss_mb - base$rss_mb) / as.numeric(r[7]))
}

writeLines(lines, out_file)
cat("written to", out_file, "\n")
