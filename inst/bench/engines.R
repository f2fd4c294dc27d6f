# Issue 21, engines as objects and named options: does the registry lookup
# (lda_engine(), once per batch) and reading options by name in C cost
# anything measurable? Times one training pass of each engine on kos with
# small batches (the most registry lookups and .Call crossings per second)
# under this build and under a base build of the package installed
# elsewhere, alternating the two builds, and reports the ratio of the best
# CPU times (this / base) and whether the topics are bit-identical. Then the
# cost of one call where the overhead is all there is: the vb step's .Call
# (lda_vb_call()) and one batch step through the registry (lda_batch_step())
# on a batch of one 5-word document, K = 3.
#
# Run from the package root:
#   SPARSEVI_BASE_LIB=/path/to/lib/with/base/build SPARSEVI_BASE_COMMIT=<its commit> \
#     nice -n 10 Rscript inst/bench/engines.R [reps]
# (the build under test is the first sparsevi on .libPaths(), e.g. with
# R_LIBS=/path/to/lib). Results: inst/bench/results/engines.txt (rewritten).
# Every fit names its engine, global step, start and priors (each engine's
# values at 06ddbb6), so both builds run the same settings whatever their
# defaults. Smoke mode (SPARSEVI_BENCH_SMOKE=1): this build against itself,
# a simulated corpus, one run each.
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()

args <- commandArgs(TRUE)
reps <- if (length(args)) as.integer(args[1]) else if (smoke) 1L else 3L
this_lib <- dirname(find.package("sparsevi"))
base_lib <- Sys.getenv("SPARSEVI_BASE_LIB", if (smoke) this_lib else "")
if (!nzchar(base_lib)) stop("Set SPARSEVI_BASE_LIB to a library holding the base build.")
base_commit <- Sys.getenv("SPARSEVI_BASE_COMMIT", if (smoke) "this build (smoke)" else "unknown")
K <- if (smoke) 5L else 50L

# each engine's settings at 06ddbb6, named
vb_args <- "alpha = 0.1, eta = 0.01, L = min(8L, K), restarts = TRUE, tau = 1, kappa = 0.6"
runs <- list(
  "vb x memoized"   = list(local = "vb", global = "memoized", args = vb_args),
  "vb x stochastic" = list(local = "vb", global = "stochastic", args = vb_args),
  "ope x ml"        = list(local = "ope", global = "ml", args = "alpha = 1 / K, eta = 1 / K"),
  "cvb0 x stochastic" = list(local = "cvb0", global = "stochastic",
                             args = "alpha = 0.1, eta = 0.01, step_scale = 1, tau = 1, kappa = 0.6, burnin = 0"),
  "gibbs x stochastic" = list(local = "gibbs", global = "stochastic",
                              args = "alpha = 0.1, eta = 0.2, step_scale = 1, tau = 1, kappa = 0.6")
)

source(file.path(bench_dir, "bench-data.R")) # bench_child()

# One fit in a fresh R process with `lib` first on the library path: its
# CPU seconds and a digest of its topics.
one_fit <- function(lib, run) {
  bench_child(lib, c(
    sprintf("bench_dir <- %s", deparse(normalizePath(bench_dir))),
    "source(file.path(bench_dir, 'bench-log.R'))",
    "source(file.path(bench_dir, 'bench-data.R'))",
    "x <- bench_corpus('kos')",
    # (Matrix loaded before the clock starts: a build that loads it during
    # its first fit would otherwise be charged about 0.65 s for it)
    "invisible(loadNamespace('Matrix'))",
    sprintf("K <- %dL", K),
    sprintf("r <- cpu_of(fit_lda(x, K = K, local = %s, global = %s, %s, init = 'bregman', passes = 1,",
            deparse(run$local), deparse(run$global), run$args),
    "  batch_size = 100, seed = 1, threads = 1, progress = FALSE, doc_topics = 0))",
    "result <- list(cpu = r$cpu, tw = r$value$topic_word, settings = bench_settings(r$value))"))
}

lines <- c(sprintf("# inst/bench/engines.R at commit %s (%s), %d alternating runs per build%s",
                   bench_commit(), format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), reps,
                   if (smoke) "; SMOKE MODE" else ""),
           sprintf("# base build: commit %s, installed in %s", base_commit, base_lib),
           sprintf("# command: %s", bench_command()),
           sprintf("# kos (D = 3,430, V = 6,906), K = %d, one pass, batch_size = 100 (35 batches), threads = 1", K),
           "# best CPU seconds of each build; ratio = this / base; identical = same topic_word bits",
           sprintf("%-20s %9s %9s %7s %9s", "engine", "base_s", "this_s", "ratio", "identical"))
for (nm in names(runs)) {
  base <- this <- numeric(0)
  same <- TRUE
  for (r in seq_len(reps)) {
    t <- one_fit(this_lib, runs[[nm]])
    b <- if (smoke) t else one_fit(base_lib, runs[[nm]])
    if (r == 1L) lines <- c(lines, sprintf("# settings that ran [%s, this build]: %s", nm, t$settings))
    base <- c(base, b$cpu)
    this <- c(this, t$cpu)
    same <- same && identical(b$tw, t$tw)
  }
  lines <- c(lines, sprintf("%-20s %9.3f %9.3f %7.3f %9s", nm, min(base), min(this),
                            min(this) / min(base), same))
  cat(lines[length(lines)], "\n")
}
# Microseconds per call on a tiny batch, best of 5 runs of 20,000 calls, in
# a fresh process with `lib` first on the library path.
call_costs <- function(lib) {
  bench_child(lib, c(
    "ns <- asNamespace('sparsevi')",
    sprintf("n <- %dL", if (smoke) 200L else 20000L),
    "sim <- simulate_lda(D = 1, V = 20, K = 3, doc_length = 5, seed = 1)",
    "x <- sim$dtm",
    "lambda <- sim$topic_word * 10 + 0.1",
    "ctl <- ns$lda_vb_control(list(alpha = 0.1, L = 3L))",
    "best <- function(f) min(replicate(5, sum(system.time(for (i in seq_len(n)) f())[1:2]))) / n * 1e6",
    "vb_call <- best(function() ns$lda_vb_call(x, lambda, 0L, ctl, 1L))",
    "control <- ctl",
    "control$local <- 'vb'",
    "control$global <- 'batch'",
    "control$threads <- 1L",
    "state <- list(lambda = lambda, t = 0L)",
    # (a build with the topics object, R/lda-topics.R, holds them in it)
    "if (exists('lda_state_topics', ns)) state <- ns$lda_state_topics(state)",
    "step <- best(function() ns$lda_batch_step(x, c(0, 1), state, control))",
    "result <- c(vb_call, step)"))
}
cb <- ct <- NULL
for (r in seq_len(if (smoke) 1L else 3L)) {
  cb <- pmin(if (is.null(cb)) Inf else cb, call_costs(base_lib))
  ct <- pmin(if (is.null(ct)) Inf else ct, call_costs(this_lib))
}
lines <- c(lines, "",
           "# microseconds per call on a batch of one 5-word document, K = 3 (best of 3 processes x",
           "# 5 runs of 20,000 calls); ratio = this / base",
           sprintf("%-20s %9s %9s %7s", "call", "base_us", "this_us", "ratio"),
           sprintf("%-20s %9.2f %9.2f %7.3f", c("lda_vb_call", "lda_batch_step"), cb, ct,
                   ct / cb))
cat(tail(lines, 2), sep = "\n")
writeLines(lines, bench_out("engines.txt"))
