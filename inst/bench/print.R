# What an R user does right after fitting a large model: print it, list its
# top words, look for junk topics. One pass of the default call
# (fit_lda(x, K, passes = 1, seed = 1), 2 threads) over the first 60,000
# Wikipedia paragraphs (all 129,289 terms, as inst/bench/threads.R reads
# them; SPARSEVI_BENCH_SMALL_RDS keeps the corpus between runs) at K = 100
# and 1000 (SPARSEVI_BENCH_KS), then the median elapsed seconds of three
# calls each of print(fit), terms(fit, 10) and dead_topics(fit). With
# SPARSEVI_BENCH_LIB_BEFORE (a library holding another build of sparsevi),
# a child process does the same with that build, in the same run, and the
# ratios before / now are printed, with whether both builds list the same
# top words and junk topics. Run from the package root:
#   Rscript inst/bench/print.R
# Appends to inst/bench/results/print.txt (SPARSEVI_BENCH_OUT redirects).
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
source(file.path(bench_dir, "bench-data.R"))
smoke <- bench_smoke()
say <- bench_logger(bench_out("print.txt"))
Ks <- if (smoke) c(4L, 8L) else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "100,1000"), ",")[[1]])
before <- Sys.getenv("SPARSEVI_BENCH_LIB_BEFORE")

# The timings of one build, as code a child process runs (bench_child()):
# `result` is a list per K of the fit's settings, the three medians, the
# top words and the junk topics.
timing_code <- sprintf('
smoke <- %s
x <- if (smoke) {
  sim <- simulate_lda(D = 300, V = 60, K = 4, seed = 1)
  sim$dtm
} else readRDS(%s)
med <- function(f) stats::median(replicate(3, system.time(f())[["elapsed"]]))
result <- lapply(%s, function(K) {
  fit <- fit_lda(x, K = K, passes = 1, seed = 1, threads = 2, progress = FALSE)
  list(local = fit$local, K = fit$K, background = fit$control$background,
       print = med(function() utils::capture.output(print(fit))),
       terms = med(function() terms(fit, 10)),
       dead = med(function() dead_topics(fit)),
       top = terms(fit, 10), junk = dead_topics(fit))
})', smoke, "%s", deparse(Ks))

x_rds <- if (smoke) "" else {
  invisible(bench_wikipara_kept(60000))
  Sys.getenv("SPARSEVI_BENCH_SMALL_RDS", file.path(tempdir(), "wikipara-60000.rds"))
}
code <- sprintf(timing_code, deparse(x_rds))
now <- bench_child(dirname(find.package("sparsevi")), code)
was <- if (nzchar(before)) bench_child(before, code)

bench_header(say, sprintf("== print(), terms() and dead_topics() of a fit (inst/bench/print.R)%s",
                          if (nzchar(before)) sprintf("; before: the build in %s", before) else ""))
say("   %s; one pass of fit_lda(x, K, passes = 1, seed = 1, threads = 2); median of 3 calls, seconds",
    if (smoke) "300 simulated documents" else "the first 60,000 wikipara paragraphs, V = 129,289")
for (i in seq_along(Ks)) {
  a <- now[[i]]
  say("   K = %d (local = %s, background = %s): print %.3f  terms %.3f  dead_topics %.3f",
      a$K, a$local, format(a$background), a$print, a$terms, a$dead)
  if (!is.null(was)) {
    b <- was[[i]]
    # (the junk topics by number and reason; their shares to 1e-12: the
    # topics' sizes may be summed in another order)
    say("     before: print %.3f  terms %.3f  dead_topics %.3f;  before / now: %.1fx  %.1fx  %.1fx; same top words %s, same junk topics %s (shares equal: %s)",
        b$print, b$terms, b$dead, b$print / a$print, b$terms / a$terms, b$dead / a$dead,
        identical(a$top, b$top),
        identical(as.vector(a$junk), as.vector(b$junk)) &&
          identical(attr(a$junk, "reason"), attr(b$junk, "reason")),
        isTRUE(all.equal(attr(a$junk, "share"), attr(b$junk, "share"), tolerance = 1e-12)))
  }
}
attr(say, "close")()
