# Speed of the mixture and Fast-VDP code before and after a refactoring
# (issue 21: one Normal-Wishart API, the observation-model table, named
# options), measured in one run: two installed copies of sparsevi, each
# timed in its own R process, alternating, best of `reps`.
#
# Run from the package root:
#   nice -n 10 Rscript inst/bench/obs-refactor.R LIB_BEFORE LIB_AFTER [reps] [parts]
# parts: "mix", "vdp" or "mix,vdp" (default both).
# LIB_BEFORE / LIB_AFTER: library directories holding the two builds
# (R CMD INSTALL -l DIR at the two commits). Appends a dated section to
# inst/bench/results/obs-refactor.txt.
#
# 1. fit_mixture(X, K = 20, passes = 20, tol = 0, n_init = 1) on
#    simulate_mixture() data, N = 50,000, D = 10, K = 20, separation 1 (so
#    that the 20 laps all run), one thread: the full-covariance path.
# 2. fit_vdp(X, paper = TRUE) and the plain VDP (kdtree = FALSE, deletes =
#    FALSE) on 1e6 x 16 points from 10 c-separated Gaussians (c = 2), as in
#    inst/bench/vdp.R's Fig. 2 row at N = 1e6; the whole-call ratio VDP /
#    paper mode of each build.
# 3. (after build only) the steps of the paper-mode fit and its seconds per
#    step, against the cost of one lap of train_laps() (R/train.R) with a lap
#    and an evaluation that do nothing: why Fast-VDP keeps its own loop in C
#    (R/vdp.R's header).
# Both builds run the same named settings (the mixture's likelihood, prior,
# global step, start and starts; the VDP's tree, candidates and tolerance).
# Smoke mode (SPARSEVI_BENCH_SMOKE=1): this build against itself, small data.
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()
args <- commandArgs(trailingOnly = TRUE)
if (smoke && length(args) < 2) {
  this <- dirname(system.file(package = "sparsevi"))
  args <- c(this, this, "1")
}
if (length(args) < 2) stop("usage: Rscript inst/bench/obs-refactor.R LIB_BEFORE LIB_AFTER [reps]")
libs <- c(before = args[1], after = args[2])
reps <- if (length(args) >= 3) as.integer(args[3]) else 3L
parts <- if (length(args) >= 4) strsplit(args[4], ",")[[1]] else c("mix", "vdp")
say <- bench_logger(bench_out("obs-refactor.txt"))
Sys.setenv(OMP_NUM_THREADS = "1", OPENBLAS_NUM_THREADS = "1")
n_mix <- if (smoke) 500 else 50000
n_vdp <- if (smoke) 2000 else 1e6

# the data, made once (the VDP data: gen_separated() in bench-data.R)
source(file.path(bench_dir, "bench-data.R"))
mix_file <- tempfile(fileext = ".rds")
vdp_file <- tempfile(fileext = ".rds")
library(sparsevi, lib.loc = libs[["after"]])
if ("mix" %in% parts)
  saveRDS(simulate_mixture(N = n_mix, D = 10, K = 20, separation = 1, seed = 1)$X, mix_file)
if ("vdp" %in% parts) saveRDS(gen_separated(n_vdp, 16, 2)$X, vdp_file)

# each timing in a fresh process (bench_child(), bench-data.R)
mix_code <- c(sprintf("X <- readRDS(%s)", deparse(mix_file)),
              "t <- system.time(f <- suppressWarnings(fit_mixture(X, K = 20, likelihood = 'gaussian', prior = 'dirichlet', global = 'memoized', L = 20, init = 'kmeans', passes = 20, tol = 0, n_init = 1, seed = 1, threads = 1)))",
              "result <- c(t[['elapsed']], sum(t[c('user.self', 'sys.self')]), f$loglik, nrow(f$trace) - 1)",
              sprintf("source(file.path(%s, 'bench-log.R'))", deparse(normalizePath(bench_dir))),
              "attr(result, 'settings') <- bench_settings(f)")
vdp_code <- function(plain) c(sprintf("X <- readRDS(%s)", deparse(vdp_file)),
  if (plain) "t <- system.time(f <- fit_vdp(X, kdtree = FALSE, deletes = FALSE, candidates = 10, tol = 1e-3, seed = 1, threads = 1, max_K = 50, progress = FALSE))"
  else "t <- system.time(f <- fit_vdp(X, paper = TRUE, seed = 1, threads = 1, max_K = 50, progress = FALSE))",
  "result <- c(t[['elapsed']], sum(t[c('user.self', 'sys.self')]), f$free_energy, nrow(f$trace), f$timings[['fit']])",
  sprintf("source(file.path(%s, 'bench-log.R'))", deparse(normalizePath(bench_dir))),
  "attr(result, 'settings') <- bench_settings(f)")

bench_header(say, sprintf("# obs-refactor benchmark (inst/bench/obs-refactor.R), %s; builds: before %s, after %s",
                           R.version.string, libs[["before"]], libs[["after"]]))
say("# load average at start: %s", readLines("/proc/loadavg", warn = FALSE))
say("# each figure: best of %d (elapsed / CPU seconds), builds alternating; one thread", reps)
time_both <- function(code) {
  r <- list(before = NULL, after = NULL)
  for (i in seq_len(reps)) for (b in names(libs)) {
    one <- bench_child(libs[[b]], code)
    if (i == 1L) say("# settings that ran [%s build]: %s", b, attr(one, "settings"))
    r[[b]] <- rbind(r[[b]], as.numeric(one))
  }
  lapply(r, function(m) c(elapsed = min(m[, 1]), cpu = min(m[, 2]), value = m[1, 3],
                          steps = if (ncol(m) > 3) m[1, 4] else NA,
                          fit = if (ncol(m) > 4) min(m[, 5]) else NA))
}
if ("mix" %in% parts) {
  m <- time_both(mix_code)
  say("fit_mixture %d x 10, K = 20, %d laps: before %.3f s (cpu %.3f), after %.3f s (cpu %.3f); after / before = %.3f elapsed, %.3f cpu; same loglik: %s",
      as.integer(n_mix), as.integer(m$after[["steps"]]), m$before[["elapsed"]], m$before[["cpu"]],
      m$after[["elapsed"]], m$after[["cpu"]],
      m$after[["elapsed"]] / m$before[["elapsed"]], m$after[["cpu"]] / m$before[["cpu"]],
      identical(m$before[["value"]], m$after[["value"]]))
}
if ("vdp" %in% parts) {
  p <- time_both(vdp_code(FALSE))
  say("fit_vdp(paper = TRUE) 1e6 x 16: before %.3f s (cpu %.3f), after %.3f s (cpu %.3f); after / before = %.3f elapsed, %.3f cpu; same F: %s",
      p$before[["elapsed"]], p$before[["cpu"]], p$after[["elapsed"]], p$after[["cpu"]],
      p$after[["elapsed"]] / p$before[["elapsed"]], p$after[["cpu"]] / p$before[["cpu"]],
      identical(p$before[["value"]], p$after[["value"]]))
  reps0 <- reps
  reps <- 1L
  v <- time_both(vdp_code(TRUE))
  reps <- reps0
  say("plain VDP 1e6 x 16 (once each): before %.3f s, after %.3f s; same F: %s",
      v$before[["elapsed"]], v$after[["elapsed"]], identical(v$before[["value"]], v$after[["value"]]))
  say("whole call VDP / paper mode: before %.1fx, after %.1fx (elapsed); %.1fx, %.1fx (cpu)",
      v$before[["elapsed"]] / p$before[["elapsed"]], v$after[["elapsed"]] / p$after[["elapsed"]],
      v$before[["cpu"]] / p$before[["cpu"]], v$after[["cpu"]] / p$after[["cpu"]])
  lap_code <- c(
    "lap <- function(state, l) list(state = state, extras = list(T = 1L, outer_nodes = 1L))",
    "ev <- function(state) list(objective = 1, heldout = NA_real_)",
    "t <- system.time(for (r in 1:5) { tr <- sparsevi:::new_trainer(FALSE, 1000); sparsevi:::train_laps(list(), 1:1000, lap, ev, tr); fr <- tr$frame(c('T', 'outer_nodes')) })",
    "result <- c(1e6 * t[['elapsed']] / 5000, 1e6 * sum(t[c('user.self', 'sys.self')]) / 5000)")
  lc <- bench_child(libs[["after"]], lap_code)
  say("paper mode (after build): %d steps, fit after the tree %.3f s (best), %.2f ms a step; train_laps() with a no-op lap and evaluation: %.0f us a lap elapsed (%.0f us CPU), %.1f ms for as many laps as steps",
      as.integer(p$after[["steps"]]), p$after[["fit"]], 1000 * p$after[["fit"]] / p$after[["steps"]],
      lc[1], lc[2], lc[1] * p$after[["steps"]] / 1000)
}
