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
data_dir <- file.path("..", "shared", "data")
if (!dir.exists(data_dir)) stop("Run the benchmarks from the package root, with the shared data in ../shared/data.")
if (!dir.exists(data_dir)) data_dir <- normalizePath(file.path("..", "shared", "data"))
out_file <- file.path("inst", "bench", "results", "select-k.txt")
source(file.path("inst", "bench", "bench-log.R"))
source(file.path("inst", "bench", "bench-data.R"))
read_corpus <- function(name) bench_corpus(name, data_dir)
say <- bench_logger(out_file)
corpora <- strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA", "kos,poliblog5k"), ",")[[1]]
Ks <- as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "10,20,40"), ",")[[1]])
passes <- as.integer(Sys.getenv("SPARSEVI_BENCH_PASSES", "10"))
local_step <- Sys.getenv("SPARSEVI_BENCH_LOCAL", "vb")
commit <- tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?")
say("== choosing K, %s; commit %s; host load %s", format(Sys.time()), commit,
    paste(readLines("/proc/loadavg"), collapse = ""))
say("   command: SPARSEVI_BENCH_CORPORA=%s SPARSEVI_BENCH_KS=%s SPARSEVI_BENCH_PASSES=%d SPARSEVI_BENCH_LOCAL=%s nice -n 10 Rscript inst/bench/select-k.R; threads = 1, the engine's defaults",
    paste(corpora, collapse = ","), paste(Ks, collapse = ","), passes, local_step)
for (name in corpora) {
  x <- read_corpus(name)
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  say("-- %s: %d documents (%d train), V = %d", name, nrow(x), nrow(sp$train), ncol(x))
  sel <- cpu_of(fit_lda(sp$train, K = Ks, passes = passes, seed = 1, threads = 1,
                        local = local_step, progress = FALSE))
  f <- sel$value
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
      g <- fit_lda(sp$train, K = Ks[i], passes = passes, seed = 1, threads = 1,
                   local = local_step, progress = FALSE)
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
