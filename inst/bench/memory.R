# Resident memory over 1,000 repeated small fits (issue 11): RSS from
# /proc/self/status every 100 fits, for LDA (vb, cvb0, gibbs), mixtures and
# Fast-VDP in turn. A leak in C (memory not owned by R, or a topic table
# outside R's heap, src/table.c, never freed) shows as RSS that keeps
# growing after R's heap has settled.
#
# Usage: Rscript inst/bench/memory.R [fits]   (from the package root)
# Writes inst/bench/results/memory.txt.

suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
args <- commandArgs(trailingOnly = TRUE)
smoke <- bench_smoke()
n_fits <- if (length(args)) as.integer(args[1]) else if (smoke) 2L else 1000L
every <- max(1L, n_fits %/% 10L)
out_file <- bench_out("memory.txt")

rss_mb <- function() {
  st <- readLines("/proc/self/status")
  kb <- as.numeric(gsub("[^0-9]", "", st[grepl("^VmRSS:", st)]))
  kb / 1024
}

x <- simulate_lda(D = 40, V = 60, K = 3, doc_length = 30, seed = 1)$dtm
X <- simulate_mixture(N = 150, D = 2, K = 3, seed = 1)$X
# every setting named (each engine's values at 06ddbb6): which C paths run
# (restarts, the start, the kd-tree) must not move with a default
fits <- list(
  lda_vb = function(i) fit_lda(x, K = 3, local = "vb", global = "memoized", L = 3,
                               alpha = 0.1, eta = 0.01, init = "bregman", restarts = TRUE,
                               passes = 2, seed = i, progress = FALSE),
  lda_cvb0 = function(i) fit_lda(x, K = 3, local = "cvb0", global = "stochastic",
                                 alpha = 0.1, eta = 0.01, init = "bregman", step_scale = 1,
                                 tau = 1, kappa = 0.6, burnin = 0, passes = 2, seed = i,
                                 progress = FALSE),
  # SCVB0's seeded start: its store's table comes from malloc (src/table.c)
  lda_seeded = function(i) fit_lda(x, K = 3, local = "cvb0", global = "stochastic",
                                   alpha = 0.1, eta = 0.01, init = "seeded", step_scale = 1,
                                   tau = 1, kappa = 0.6, burnin = 0, passes = 2,
                                   seed = i, progress = FALSE),
  lda_gibbs = function(i) fit_lda(x, K = 3, local = "gibbs", global = "stochastic",
                                  alpha = 0.1, eta = 0.2, init = "bregman", step_scale = 1,
                                  tau = 1, kappa = 0.6, reuse_dead = FALSE, passes = 2,
                                  seed = i, progress = FALSE),
  mixture = function(i) fit_mixture(X, K = 3, likelihood = "gaussian", prior = "dirichlet",
                                    global = "memoized", init = "kmeans", n_init = 1, tol = 1e-6,
                                    passes = 3, seed = i, progress = FALSE),
  # (one split at a time, as the recorded figures ran: pairs of splits came later)
  vdp = function(i) fit_vdp(X, kdtree = TRUE, candidates = 10, tol = 1e-3, max_K = 50,
                            seed = i, progress = FALSE, max_iter = 10, pair_splits = FALSE)
)
# each fit also predicts, so prediction paths are covered
use <- function(f, i) {
  fit <- f(i)
  if (inherits(fit, "sparsevi_lda")) predict(fit, x[1:5, ], seed = i) else predict(fit, X)
  invisible(NULL)
}

lines <- c(sprintf("# inst/bench/memory.R: %d fits per engine, RSS (MB) every %d fits%s", n_fits,
                   every, if (smoke) "; SMOKE MODE" else ""),
           sprintf("# %s, R %s, sparsevi %s, commit %s", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                   getRversion(), utils::packageVersion("sparsevi"), bench_commit()),
           sprintf("# command: %s", bench_command()),
           sprintf("# settings that ran [%s]: %s", names(fits),
                   vapply(fits, function(f) bench_settings(f(1)), "")))
cat(lines, sep = "\n")
for (nm in names(fits)) {
  invisible(gc())
  rss <- rss_mb()
  for (i in seq_len(n_fits)) {
    use(fits[[nm]], i)
    if (i %% every == 0L) {
      invisible(gc())
      rss <- c(rss, rss_mb())
    }
  }
  # growth over the second half (after R's heap has settled)
  half <- rss[ceiling(length(rss) / 2):length(rss)]
  line <- sprintf("%-10s RSS: %s | growth over the last half: %+.1f MB (%s)", nm,
                  paste(sprintf("%.0f", rss), collapse = " "), max(half) - half[1],
                  if (max(half) - half[1] < 5) "flat" else "GROWING")
  cat(line, "\n")
  lines <- c(lines, line)
}
writeLines(lines, out_file)
