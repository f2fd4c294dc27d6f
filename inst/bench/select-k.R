# Choosing K (issue 24): fit_lda(x, K = c(...)) against fitting each K
# separately, on real corpora. Run from the package root:
#   nice -n 10 Rscript inst/bench/select-k.R
# Environment:
#  SPARSEVI_BENCH_CORPORA  comma-separated (default kos,poliblog5k)
#  SPARSEVI_BENCH_KS       comma-separated K values (default 10,20,40)
#  SPARSEVI_BENCH_PASSES   laps per fit (default 10)
#  SPARSEVI_BENCH_LOCAL    engine (default vb)
# For each corpus: one train/test split (10% test documents, seed 1). Then
#  (a) select: fit_lda(train, K = Ks, seed = 1): each K on 90% of train,
#      scored on the other 10% (validation), the best refitted on all of train;
#  (b) separate: fit_lda(train, K = k, seed = 1) for each k, each scored on
#      the test documents (what a user does by hand; choosing on the test
#      documents makes their score optimistic).
# Both report CPU seconds of the whole call and the test score (document
# completion, nats per token) of the model each would hand the user.
# Appends to inst/bench/results/select-k.txt.
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
data_dir <- if (!smoke) bench_data_dir()
read_corpus <- function(name) bench_corpus(name, data_dir)
say <- bench_logger(bench_out("select-k.txt"))
corpora <- strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA", "kos,poliblog5k"), ",")[[1]]
Ks <- as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", if (smoke) "8,10" else "10,20,40"), ",")[[1]])
passes <- as.integer(Sys.getenv("SPARSEVI_BENCH_PASSES", if (smoke) "2" else "10"))
local_step <- Sys.getenv("SPARSEVI_BENCH_LOCAL", "vb")
if (smoke) corpora <- corpora[1]
# every setting named (the engine's values at 06ddbb6): vb memoized L = 8 with
# restarts, or SCVB0's schedule; both with alpha 0.1, Bregman start
engine_args <- switch(local_step,
  vb = list(local = "vb", global = "memoized", L = 8, alpha = 0.1, eta = 0.01,
            init = "bregman", restarts = TRUE),
  cvb0 = list(local = "cvb0", global = "stochastic", alpha = 0.1, eta = 0.01,
              init = "bregman", step_scale = 1, tau = 1, kappa = 0.6, burnin = 0,
              batch_size = 100),
  stop("SPARSEVI_BENCH_LOCAL: vb or cvb0"))
bench_header(say, sprintf("== choosing K (inst/bench/select-k.R), engine %s; host load %s; threads = 1", local_step,
                          paste(readLines("/proc/loadavg"), collapse = "")))
for (name in corpora) {
  x <- read_corpus(name)
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  say("-- %s: %d documents (%d train), V = %d", name, nrow(x), nrow(sp$train), ncol(x))
  sel <- cpu_of(do.call(fit_lda, c(list(sp$train, K = Ks, passes = passes, seed = 1,
                                         threads = 1, progress = FALSE), engine_args)))
  f <- sel$value
  bench_header(say, fits = stats::setNames(list(f), sprintf("%s select", name)))
  test_sel <- as.numeric(heldout_loglik(f, sp$test))
  for (i in seq_len(nrow(f$select))) {
    r <- f$select[i, ]
    say("  select   K = %3d  validation %.4f  UMass %8.2f  train s %6.1f%s", r$K, r$heldout,
        r$coherence, r$seconds, if (r$chosen) "  <- chosen" else "")
  }
  say("  select   chose K = %d; test score of the returned model %.4f; CPU %.1f s (wall %.1f s)",
      f$K, test_sel, sel$cpu, sel$wall)
  sep_cpu <- 0
  sep_wall <- 0
  scores <- numeric(length(Ks))
  for (i in seq_along(Ks)) {
    one <- cpu_of({
      g <- do.call(fit_lda, c(list(sp$train, K = Ks[i], passes = passes, seed = 1,
                                   threads = 1, progress = FALSE), engine_args))
      as.numeric(heldout_loglik(g, sp$test))
    })
    scores[i] <- one$value
    sep_cpu <- sep_cpu + one$cpu
    sep_wall <- sep_wall + one$wall
    say("  separate K = %3d  test %.4f  CPU %.1f s", Ks[i], scores[i], one$cpu)
  }
  b <- which.max(scores)
  say("  separate best on test K = %d (test %.4f); CPU %.1f s (wall %.1f s)", Ks[b], scores[b],
      sep_cpu, sep_wall)
  say("  ratio select / separate: CPU %.2f, wall %.2f; test score select minus separate-best %+.4f nats/token",
      sel$cpu / sep_cpu, sel$wall / sep_wall, test_sel - scores[b])
}
attr(say, "close")()
