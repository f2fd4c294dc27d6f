# OPE's memory per learner (issue 22): R's heap (gc()'s "max used" Vcells,
# which counts the C steps' R_alloc scratch too) and, from builds that have
# them, the topic tables outside R's heap (src/table.c: most bytes live at
# once, and what is held after the call) over one fit_lda() call of
# each OPE learner (ML, Online = stochastic, Streaming) at K = 1000 on the
# first 10,000 paragraphs of ../shared/data/wikipara with the full vocabulary
# (V = 129,289), minibatches of 5,000, 1 thread; and what the fit holds
# after the call. One K x V table of doubles is 986 Mb here. Run from the
# package root:
#   nice -n 10 Rscript inst/bench/ope-memory.R
# Environment: SPARSEVI_BENCH_LIB (library of the sparsevi to run),
# SPARSEVI_BENCH_CORPUS_RDS (a file holding the 60,000-paragraph corpus of
# inst/bench/large.R; built and kept in tempdir() otherwise),
# SPARSEVI_BENCH_DOCS (default 10000), SPARSEVI_BENCH_K (default 1000).
# Appends to inst/bench/results/ope-memory.txt.
smoke <- identical(Sys.getenv("SPARSEVI_BENCH_SMOKE"), "1")
lib <- Sys.getenv("SPARSEVI_BENCH_LIB", "")
n_docs <- as.integer(Sys.getenv("SPARSEVI_BENCH_DOCS", if (smoke) "60" else "10000"))
K <- as.integer(Sys.getenv("SPARSEVI_BENCH_K", if (smoke) "5" else "1000"))
batch <- if (smoke) 20L else 5000L
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
data_dir <- if (!smoke) bench_data_dir()
say <- bench_logger(bench_out("ope-memory.txt"))
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(sparsevi))
corpus_rds <- Sys.getenv("SPARSEVI_BENCH_CORPUS_RDS",
                         file.path(tempdir(), "wikipara-60000.rds"))
source(file.path(bench_dir, "bench-data.R"))
if (file.exists(corpus_rds) && !smoke) {
  x <- readRDS(corpus_rds)
} else {
  x <- bench_corpus("wikipara60000", data_dir, all_terms = TRUE)
  if (!smoke) saveRDS(x, corpus_rds)
}
x <- x[seq_len(n_docs), ]
bench_header(say, sprintf("== OPE memory per learner (inst/bench/ope-memory.R); load %s; library: %s",
                           paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""),
                           if (nzchar(lib)) lib else "default"))
say("   wikipara first %d paragraphs, V = %d; K = %d; minibatches of %d; one pass; 1 thread; every fit names alpha = eta = 1/K, init bregman, tau 1, kappa 0.6",
    nrow(x), ncol(x), K, batch)
# c(live, peak) bytes of the tables outside R's heap (0 for builds without)
ns <- asNamespace("sparsevi")
tables <- function(reset = FALSE) {
  if (!exists("ffi_svi_table_info", ns)) return(c(0, 0))
  i <- .Call(get("ffi_svi_table_info", ns), reset)
  c(i[1], i[4])
}
say("   %-11s %10s %14s %14s %16s %16s", "learner", "seconds", "max heap (Mb)", "held (Mb)",
    "max tables (Mb)", "held tables (Mb)")
for (g in c("ml", "stochastic", "streaming")) {
  invisible(gc(reset = TRUE))
  tables(reset = TRUE)
  t0 <- proc.time()[["elapsed"]]
  fit <- suppressWarnings(fit_lda(x, K = K, local = "ope", global = g, passes = 1,
                                  alpha = 1 / K, eta = 1 / K, init = "bregman", tau = 1,
                                  kappa = 0.6, batch_size = batch, seed = 1, threads = 1,
                                  reuse_dead = FALSE, progress = FALSE))
  t1 <- proc.time()[["elapsed"]] - t0
  bench_header(say, fits = stats::setNames(list(fit), g))
  g2 <- gc()
  tb <- tables() / 2^20
  say("   %-11s %10.1f %14.1f %14.1f %16.1f %16.1f", g, t1, g2[2, 6], g2[2, 2], tb[2], tb[1])
  rm(fit)
}
attr(say, "close")()
