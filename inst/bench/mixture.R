# Benchmark of fit_mixture() (issue 4). Run from the package root:
#   nice -n 10 Rscript inst/bench/mixture.R [robust] [starts] [short] [grid] [sklearn] [patches] [throughput] [threads] [kernels]
# (default all but short, grid and sklearn). Issue 39's figures in one run:
#   SPARSEVI_BENCH_GRID_N=1e5,1e6 SPARSEVI_BENCH_ROBUST_CONFIGS=default \
#   nice -n 10 Rscript inst/bench/mixture.R grid sklearn robust starts
# Needs the installed sparsevi (R_LIBS), data in ../shared/data (relative to
# the package root: /work/shared/data). Appends a dated section to
# inst/bench/results/mixture.txt.
#
# 1. The image-patch experiment of Hughes & Sudderth (§6, Fig. 3): zero-mean
#    Gaussian mixtures of 8x8 patches (stride 4) from nine photographs, the
#    tenth held out; K in {100, 400, 800}; memoized and stochastic; L in
#    {1, 4, 16, K}. Held-out log-likelihood per patch against training
#    seconds, and the time of the summary step. Sizes are reduced (random
#    subsample of the patches, few laps) to fit about 15 minutes on one core.
# 2. Throughput of full-covariance E+M steps, one thread: N x K per second,
#    against scikit-learn GaussianMixture / BayesianGaussianMixture
#    (/usr/bin/python3) and mclust's me() (VVV), on simulate_mixture() data
#    (D = 2, 10, 64) and mlbench's Shuttle and LetterRecognition.
# 3. Threads: fit_mixture(gaussian, N = 4e4, D = 10, K = 20, 3 laps) and its
#    local step alone with 1 and 2 threads (best of 5), the identity of the
#    two fits, and the one-thread split of a fit's CPU time between the C
#    local steps (parallel) and everything else.
# 4. Kernels: CPU time of one C local step + summary for D = 2, 10, 64.
# 5. Robust defaults (issues 23, 39): fit_mixture(X, K) with every default
#    against Mclust(X, G = K, modelNames = "VVV"), seeds 1..10: ARI against
#    the labels (sets without labels: against Mclust's partition), the
#    log-likelihood, seconds, warnings and convergence, and wins / ties /
#    losses against Mclust per seed; also the defaults without the
#    hierarchical starts, with one of them (Ward's, the model-based one),
#    with a weaker covariance prior, and the old defaults (init =
#    "kmeanspp", n_init = 1, alpha = 1, scale = 0.1, passes = 20);
#    SPARSEVI_BENCH_ROBUST_CONFIGS chooses among them. 22 real data sets in
#    three groups: eight chose the defaults in session 1 (iris, faithful,
#    mclust's banknote, diabetes, thyroid, wdbc's first ten and all thirty
#    features, wreath); five were held out then and used in session 2 to
#    find the faults fixed there (MASS's crabs, USArrests, swiss, trees,
#    quakes); nine chose nothing (MASS's Pima.tr + Pima.te and geyser,
#    mclust's EuroUnemployment, state.x77, USJudgeRatings, rock,
#    LifeCycleSavings, six continuous columns of mtcars, attitude; K by
#    Mclust's BIC over 2:5 where the set has no labels). Needs mclust, MASS.
#
# 8. grid: K grids at scale against Mclust (bench_grid() below).
# 9. sklearn: one fit_mixture() call against scikit-learn's GaussianMixture,
#    whole calls (inst/bench/mixture-call-split.R, sourced; needs
#    /usr/bin/python3 with scikit-learn, or SPARSEVI_PYTHON).
#
# Parts 1-4 name every setting of their fits (likelihood, prior and its
# hyperparameters, global step, start, starts, schedule: the values at
# 06ddbb6); parts 5 and 6 are about the defaults and call fit_mixture(X, K)
# as users do. Every part writes the settings that ran, read back from the
# fits, under a header with the commit and the command. Peers (mclust,
# mlbench, MASS) come from SPARSEVI_PEER_LIB. Smoke mode
# (SPARSEVI_BENCH_SMOKE=1): parts throughput, threads and kernels on small
# simulated data, no peers.

suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
source(file.path(bench_dir, "bench-data.R")) # robust_sets()
smoke <- bench_smoke()
args <- commandArgs(trailingOnly = TRUE)
what <- if (length(args)) args else if (smoke) c("throughput", "threads", "kernels") else "all"
data_dir <- if (!smoke) normalizePath(bench_data_dir())
out_file <- bench_out("mixture.txt")
bench_use_peers()
# The prior's hyperparameters and the schedule at 06ddbb6, named in parts
# 1-4 (alpha = K is the Dirichlet's default)
mix_hyper <- list(prior = "dirichlet", gamma = 1, scale = 0.003, kappa0 = 0.01, eta = 0.1,
                  tau = 1, kappa = 0.6)
mix_fit <- function(X, K, ...) {
  do.call(fit_mixture, c(list(X, K = K, alpha = K), utils::modifyList(mix_hyper, list(...))))
}
said_settings <- character(0)
say_settings <- function(label, fit) {
  if (label %in% said_settings) return(invisible())
  said_settings <<- c(said_settings, label)
  say("  settings that ran [%s]: %s", label, bench_settings(fit))
}
budget <- as.numeric(Sys.getenv("SPARSEVI_BENCH_BUDGET", "2400")) # seconds
t_bench <- proc.time()[["elapsed"]]
over_budget <- function() proc.time()[["elapsed"]] - t_bench > budget
# each run appends a dated section: earlier results stay for comparison
say <- bench_logger(out_file) # results survive a timeout
options(sparsevi.threads = 1L)
Sys.setenv(OMP_NUM_THREADS = "1", OPENBLAS_NUM_THREADS = "1")
# SPARSEVI_BENCH_HC_KINDS: the hierarchical starts of every default fit
# (options(sparsevi.mix_hc_kinds), e.g. "ward" for the starts before the
# model-based one; default both; part robust sets its own per config)
hc_kinds <- Sys.getenv("SPARSEVI_BENCH_HC_KINDS", "")
if (nzchar(hc_kinds)) options(sparsevi.mix_hc_kinds = strsplit(hc_kinds, ",")[[1L]])
bench_header(say, sprintf("# sparsevi mixture benchmark (inst/bench/mixture.R), parts %s, %s",
                           paste(what, collapse = ","), R.version.string))
say("machine: %d cores shared with other jobs; load average at the start: %s",
    parallel::detectCores(), paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
say("all timings are wall-clock and noisy on a shared machine")

# ---------------------------------------------------------------------------
bench_patches <- function(n_train = 4000, n_test = 1500, Ks = c(800, 400, 100),
                          passes = 4, n_batches = 6) {
  imgs <- sort(list.files(file.path(data_dir, "images"), "\\.pgm$", full.names = TRUE))
  if (length(imgs) < 2) {
    say("patches: no images in %s, skipped", data_dir)
    return(invisible())
  }
  held <- imgs[grepl("black-canyon", imgs)]
  if (!length(held)) held <- imgs[length(imgs)]
  train_imgs <- setdiff(imgs, held)
  u <- sparsevi:::uniform_source(42)
  pick <- function(P, n) P[order(u(nrow(P)))[seq_len(min(n, nrow(P)))], , drop = FALSE]
  per <- ceiling(n_train / length(train_imgs))
  Xtr <- do.call(rbind, lapply(train_imgs, function(f) pick(image_patches(read_pgm(f), 8, 4), per)))
  Xtr <- pick(Xtr, n_train)
  Xte <- pick(image_patches(read_pgm(held), 8, 4), n_test)
  say("")
  say("## 1. zm_gaussian on 8x8 patches (stride 4, patch means removed)")
  say("train: %d patches sampled from %d photographs; test: %d patches of %s",
      nrow(Xtr), length(train_imgs), nrow(Xte), basename(held))
  say("reduced from the paper: subsampled patches, %d laps (after lap 0), %d batches, one thread",
      passes, n_batches)
  say("%-10s %5s %5s %9s %12s %10s %10s %10s", "global", "K", "L", "seconds",
      "heldout", "local_s", "summary_s", "init_s")
  traces <- list()
  for (K in Ks) {
    for (global in c("memoized", "stochastic")) {
      for (L in unique(c(K, 4, 1, 16))) {
        if (over_budget()) {
          say("%-10s %5d %5d  skipped: time budget (%gs) used up", global, K, L, budget)
          next
        }
        fit <- mix_fit(Xtr, K = K, likelihood = "zm_gaussian", L = L, global = global,
                       n_batches = n_batches, passes = passes, tol = 0, seed = 1,
                       threads = 1, progress = FALSE, heldout = Xte,
                       init = "kmeanspp", n_init = 1) # as before issue 23
        say_settings(sprintf("part 1 %s", global), fit)
        tr <- fit$trace
        traces[[sprintf("%s K=%d L=%d", global, K, L)]] <- tr
        say("%-10s %5d %5d %9.2f %12.4f %10.2f %10.2f %10.2f", global, K, L,
            max(tr$seconds), tr$heldout[nrow(tr)], sum(tr$local_seconds),
            sum(tr$summary_seconds), fit$control$init_seconds)
      }
    }
  }
  say("")
  say("time to reach the dense run's final held-out score (first lap at or above it):")
  for (K in Ks) {
    for (global in c("memoized", "stochastic")) {
      dense <- traces[[sprintf("%s K=%d L=%d", global, K, K)]]
      if (is.null(dense)) next
      target <- dense$heldout[nrow(dense)]
      t_dense <- dense$seconds[which(dense$heldout >= target)[1]]
      for (L in c(1, 4, 16)) {
        tr <- traces[[sprintf("%s K=%d L=%d", global, K, L)]]
        if (is.null(tr)) next
        hit <- which(tr$heldout >= target)[1]
        t_l <- if (is.na(hit)) NA else tr$seconds[hit]
        say("  %-10s K=%4d L=%3d: %s (dense %.2fs)%s", global, K, L,
            if (is.na(t_l)) sprintf("not reached in %d laps (best %.4f vs %.4f)", passes,
                                    max(tr$heldout), target)
            else sprintf("%.2fs, %.2fx sooner", t_l, t_dense / t_l),
            t_dense, "")
      }
    }
  }
  say("")
  say("traces (lap: seconds heldout):")
  for (nm in names(traces)) {
    tr <- traces[[nm]]
    say("  %s: %s", nm, paste(sprintf("%d: %.1fs %.4f", tr$lap, tr$seconds, tr$heldout),
                             collapse = "; "))
  }
}

# ---------------------------------------------------------------------------
py <- "/usr/bin/python3"
sklearn_rate <- function(X, K, iters, bayes = FALSE) {
  if (smoke || !file.exists(py)) return(NA)
  f <- tempfile(fileext = ".csv")
  utils::write.table(X, f, sep = ",", row.names = FALSE, col.names = FALSE)
  code <- sprintf(paste(
    "import os, time, warnings, numpy as np",
    "warnings.filterwarnings('ignore')",
    "from sklearn.mixture import GaussianMixture, BayesianGaussianMixture",
    "X = np.loadtxt('%s', delimiter=',', ndmin=2)",
    "cls = BayesianGaussianMixture if %s else GaussianMixture",
    "m = cls(n_components=%d, covariance_type='full', max_iter=%d, tol=0.0, init_params='random_from_data', random_state=0, reg_covar=1e-6)",
    "t = time.perf_counter(); m.fit(X); t = time.perf_counter() - t",
    "print(m.n_iter_, t)", sep = "\n"), f, if (bayes) "True" else "False", K, iters)
  v <- bench_python_numbers(py, code)
  unlink(f)
  if (length(v) != 2 || anyNA(v)) return(NA)
  nrow(X) * K * v[1] / v[2]
}

mclust_rate <- function(X, K, iters) {
  if (!bench_has("mclust")) return(NA)
  u <- sparsevi:::uniform_source(3)
  z <- matrix(u(nrow(X) * K), nrow(X), K)
  z <- z / rowSums(z)
  t <- system.time(m <- mclust::meVVV(X, z = z,
                                   control = mclust::emControl(itmax = iters, tol = c(0, 0)),
                                   warn = FALSE))[["elapsed"]]
  it <- attr(m, "info")[["iterations"]]
  if (is.null(it) || is.na(it)) it <- iters
  it <- abs(it) # mclust negates the count when itmax is reached
  nrow(X) * K * it / t
}

ours_rate <- function(X, K, iters) {
  fit <- mix_fit(X, K = K, likelihood = "gaussian", L = K, global = "batch", init = "kmeans",
                 passes = iters, tol = 0, seed = 1, threads = 1, progress = FALSE, n_init = 1)
  say_settings("part 2", fit)
  tr <- fit$trace[fit$trace$lap > 0, ]
  t_lap <- sum(tr$local_seconds + tr$summary_seconds) / nrow(tr)
  t_all <- max(fit$trace$seconds) / nrow(fit$trace)
  c(em = nrow(X) * K / t_lap, loop = nrow(X) * K / t_all)
}

bench_throughput <- function(iters = 5, N = if (smoke) 1000 else 10000) {
  say("")
  say("## 2. Throughput of full-covariance E+M steps, one thread (N*K per second; higher is better)")
  say("ours: mean over laps of (local step + summary step) time [and of whole-lap time incl. R loop]; peers: fit time / iterations")
  sets <- list()
  for (D in c(2, 10, 64)) {
    sim <- simulate_mixture(N = N, D = D, K = 16, seed = D)
    sets[[sprintf("simulated D=%d", D)]] <- list(X = sim$X, K = 16)
  }
  if (bench_has("mlbench")) {
    e <- new.env()
    utils::data("Shuttle", package = "mlbench", envir = e)
    utils::data("LetterRecognition", package = "mlbench", envir = e)
    sets[["Shuttle (58000 x 9)"]] <- list(X = as.matrix(e$Shuttle[, 1:9]), K = 7)
    sets[["LetterRecognition (20000 x 16)"]] <- list(
      X = as.matrix(e$LetterRecognition[, -1]), K = 26)
  } else {
    say("mlbench absent: real data sets skipped")
  }
  say("%-32s %4s %12s %12s %12s %12s %12s %8s", "data", "K", "ours_em", "ours_lap",
      "sk_GMM", "sk_BGMM", "mclust", "ratio")
  for (nm in names(sets)) {
    X <- sets[[nm]]$X
    K <- sets[[nm]]$K
    X <- X + 0 # drop attributes
    o <- ours_rate(X, K, iters)
    g <- sklearn_rate(X, K, iters)
    b <- sklearn_rate(X, K, iters, bayes = TRUE)
    m <- tryCatch(mclust_rate(X, K, iters), error = function(e) NA)
    best <- suppressWarnings(max(c(g, b, m), na.rm = TRUE))
    say("%-32s %4d %12.3g %12.3g %12.3g %12.3g %12.3g %8.2f", nm, K, o[["em"]], o[["loop"]],
        g, b, m, o[["loop"]] / best)
  }
  say("ratio = ours_lap / fastest peer (whole lap incl. R overhead; NA peer = absent or failed)")
}

# ---------------------------------------------------------------------------
bench_threads <- function(reps = if (smoke) 1 else 5) {
  say("")
  say("## 3. Threads 1 -> 2 (best of %d, wall-clock; the machine's other jobs compete for both cores)", reps)
  n3 <- if (smoke) 2000 else 40000
  sim <- simulate_mixture(N = n3, D = 10, K = 20, seed = 1)
  fit <- function(th) {
    suppressWarnings(mix_fit(sim$X, K = 20, likelihood = "gaussian", L = 20,
                             global = "memoized", init = "kmeans", tol = 1e-6, passes = 3,
                             seed = 1, threads = th, progress = FALSE, n_init = 1))
  }
  f1 <- fit(1L)
  say_settings("part 3", f1)
  f2 <- fit(2L)
  same <- identical(f1$state, f2$state) && identical(f1$trace$objective, f2$trace$objective)
  best <- function(f) min(replicate(reps, system.time(f())[["elapsed"]]))
  t1 <- best(function() fit(1L))
  t2 <- best(function() fit(2L))
  say("%-44s 1 thread %7.3fs  2 threads %7.3fs  speed-up %.2fx  identical fits: %s",
      "fit_mixture gaussian, N=4e4 D=10 K=20", t1, t2, t1 / t2, same)
  ns <- asNamespace("sparsevi")
  data <- ns$mix_data(sim$X, "gaussian", "X")
  st <- f1$state
  local <- function(th) {
    .Call(ns$ffi_mix_local, data$data, f1$hyper, st$N, st$S, c(0, n3), 20L, th, NULL)
  }
  l1 <- best(function() for (i in 1:10) local(1L)) / 10
  l2 <- best(function() for (i in 1:10) local(2L)) / 10
  say("%-44s 1 thread %7.4fs  2 threads %7.4fs  speed-up %.2fx", "local step + summary (C), N=4e4 D=10 K=20",
      l1, l2, l1 / l2)
  # one thread: CPU time of whole fits against that of their local steps
  cpu <- function(f) {
    t <- system.time(f())
    t[["user.self"]] + t[["sys.self"]]
  }
  c_fit <- cpu(function() for (i in 1:reps) fit(1L)) / reps
  c_loc <- cpu(function() for (i in 1:reps) local(1L)) / reps * nrow(f1$trace)
  say("one thread, CPU: a fit %.3fs, its %d laps of local steps about %.3fs (%.0f%%; the rest is serial: data checks, seeding, R loop, GC)",
      c_fit, nrow(f1$trace), c_loc, 100 * c_loc / c_fit)
}

# ---------------------------------------------------------------------------
# CPU seconds of one C local step + summary (dense, L = K = 16, N = 1e4, one
# thread), from the seed state (every responsibility nonzero, as in lap 0) and
# from a fitted state. CPU time is steadier than wall-clock on a loaded
# machine; run it against another installed build for an A/B comparison
# (SPARSEVI_BENCH_LABEL names the build in the output).
bench_kernels <- function() {
  ns <- asNamespace("sparsevi")
  say("")
  say("## 4. CPU ms of one local step + summary in C (one thread, N = 1e4, K = L = 16, best of 3): %s",
      Sys.getenv("SPARSEVI_BENCH_LABEL", "installed sparsevi"))
  cpu <- function(f, reps) {
    t <- system.time(for (i in seq_len(reps)) f())
    (t[["user.self"]] + t[["sys.self"]]) / reps
  }
  call_local <- function(...) {
    # builds before the working-memory argument take 7 arguments
    r <- tryCatch(.Call(ns$ffi_mix_local, ..., NULL), error = function(e) NULL)
    if (is.null(r)) r <- .Call(ns$ffi_mix_local, ...)
    r
  }
  for (D in c(2, 10, 64)) {
    sim <- simulate_mixture(N = if (smoke) 1000 else 10000, D = D, K = 16, seed = D)
    data <- ns$mix_data(sim$X, "gaussian", "X")
    h <- ns$mix_hyper(data, "gaussian", "dirichlet", 1, 1, NULL, 0.1, 0.01, 0.1)
    st0 <- ns$mix_seed_state(list(data = data$data), h,
                             round(seq(1, nrow(sim$X), length.out = 16)))
    fit <- mix_fit(sim$X, K = 16, likelihood = "gaussian", L = 16, global = "batch",
                   init = "kmeans", passes = 3, tol = 0, seed = 1, threads = 1,
                   progress = FALSE, n_init = 1)
    say_settings("part 4", fit)
    reps <- if (smoke) 1 else if (D > 20) 5 else 40
    best <- function(st) {
      min(replicate(3, cpu(function() {
        call_local(data$data, h, st$N, st$S, c(0, nrow(sim$X)), 16L, 1L)
      }, reps)))
    }
    a <- best(st0)
    b <- best(fit$state)
    say("D = %2d: seed state %8.2f ms (%.3g N*K/s); fitted state %8.2f ms (%.3g N*K/s)", D,
        1e3 * a, 16e4 / a, 1e3 * b, 16e4 / b)
  }
}

# The 22 real data sets of part robust: robust_sets(), bench-data.R.

bench_robust <- function(seeds = 1:10) {
  if (!requireNamespace("mclust", quietly = TRUE)) {
    say("robust: mclust is not installed, skipped")
    return(invisible())
  }
  sets <- robust_sets()
  group <- c(rep("chose", 8), rep("held1", 5), rep("held2", 9))
  ari <- mclust::adjustedRandIndex
  configs <- list(default = list(),
                  full = list(), # the default with every start run to convergence
                  no_hc = list(), # the default without the hierarchical starts
                  ward = list(), # the default with Ward's hierarchical start alone
                  model = list(), # the default with the model-based one alone
                  scale_lo = list(scale = 3e-4), # the default with a weaker covariance prior
                  old = list(init = "kmeanspp", n_init = 1, alpha = 1, scale = 0.1,
                             passes = 20))
  # SPARSEVI_BENCH_ROBUST_CONFIGS: the configs run, e.g. "default,ward"
  # (default: all but model)
  cfs <- Sys.getenv("SPARSEVI_BENCH_ROBUST_CONFIGS", "default,full,no_hc,ward,old")
  configs <- configs[intersect(strsplit(cfs, ",")[[1L]], names(configs))]
  # each config's options (NULL: the default)
  config_options <- function(cf) {
    list(sparsevi.mix_hc_max = if (cf == "no_hc") 0 else 2000,
         sparsevi.mix_short_laps = if (cf == "full") Inf,
         sparsevi.mix_hc_kinds = if (cf %in% c("ward", "model")) cf)
  }
  say("\n## 5. Robust defaults against Mclust (VVV, same K), seeds %s",
      paste(range(seeds), collapse = ".."))
  say("sets: chose = used to choose the defaults (session 1); held1 = held out in session 1,")
  say("  used in session 2 to find the faults fixed there; held2 = never used to choose anything.")
  say("  K: as given, or (K marked *) Mclust's choice by BIC among G = 2:5 (VVV).")
  say("ref = the labels where the set has them, else Mclust's partition; ARI against ref;")
  say("  ok = seeds with ARI >= Mclust's ARI - 0.02; vsMC = median ARI against Mclust's partition;")
  say("  llok = seeds with log-likelihood >= Mclust's - 1 (ours at the posterior-mean estimates,")
  say("  Mclust's at its MLE); dll = median of ours - Mclust's; seconds: median per fit.")
  say("configs (%s): default (short runs: every start for a few laps, the best continued); full =",
      paste(names(configs), collapse = ", "))
  say("  default with options(sparsevi.mix_short_laps = Inf) (every start run to convergence, as")
  say("  before the short runs); no_hc = default with options(sparsevi.mix_hc_max = 0) (no hierarchical")
  say("  start); ward / model = default with options(sparsevi.mix_hc_kinds = \"ward\" / \"model\") (one")
  say("  hierarchical start: Ward's / the model-based one); old = init = \"kmeanspp\", n_init = 1,")
  say("  alpha = 1, scale = 0.1, passes = 20; scale_lo = default with scale = 3e-4 (a prior covariance")
  say("  ten times smaller).")
  say("llWTL = seeds whose log-likelihood is above Mclust's + 1 / within 1 / below Mclust's - 1;")
  say("  ariWTL = seeds whose ARI against ref is above Mclust's + 0.02 / within 0.02 / below - 0.02;")
  say("  mc = seeds whose partition matches Mclust's (ARI against it >= 0.98).")
  say("mcNk = points in Mclust's smallest component (a component of about D + 1 points has a nearly")
  say("  singular covariance: a likelihood that the covariance prior declines to follow).")
  say("%-9s %-5s %4s %3s %3s %-7s | %6s %10s %6s %4s | %5s %6s %6s %6s %5s %8s %6s %4s %4s %4s | %8s %8s %5s",
      "data", "group", "N", "D", "K", "config", "mc_ARI", "mc_ll", "mc_sec", "mcNk", "ok", "ARImin",
      "ARImed", "vsMC", "llok", "dll", "sec", "warn", "conv", "laps", "llWTL", "ariWTL", "mc")
  summary <- character(0)
  for (j in seq_along(sets)) {
    nm <- names(sets)[j]
    s <- sets[[j]]
    star <- " "
    if (is.na(s$K)) {
      s$K <- mclust::Mclust(s$X, G = 2:5, modelNames = "VVV", verbose = FALSE)$G
      star <- "*"
    }
    t0 <- proc.time()[["elapsed"]]
    m <- mclust::Mclust(s$X, G = s$K, modelNames = "VVV", verbose = FALSE)
    tm <- proc.time()[["elapsed"]] - t0
    ref <- if (is.null(s$y)) m$classification else s$y
    a0 <- ari(m$classification, ref)
    for (cf in names(configs)) {
      op <- options(config_options(cf))
      r <- vapply(seeds, function(seed) {
        w <- 0L
        t0 <- proc.time()[["elapsed"]]
        f <- withCallingHandlers(
          do.call(fit_mixture, c(list(s$X, K = s$K, seed = seed, progress = FALSE),
                                 configs[[cf]])),
          warning = function(c) {
            w <<- w + 1L
            invokeRestart("muffleWarning")
          })
        if (seed == seeds[1]) say_settings(sprintf("part 5 config %s (as called)", cf), f)
        cl <- predict(f, s$X)
        c(ari = ari(cl, ref), mc = ari(cl, m$classification), ll = f$loglik,
          sec = proc.time()[["elapsed"]] - t0, warn = w, conv = isTRUE(f$converged),
          laps = max(f$trace$lap))
      }, numeric(7))
      options(op)
      ok <- sum(r["ari", ] >= a0 - 0.02)
      llok <- sum(r["ll", ] >= m$loglik - 1)
      dll <- stats::median(r["ll", ]) - m$loglik
      wtl <- function(d, eps) sprintf("%d/%d/%d", sum(d > eps), sum(abs(d) <= eps), sum(d < -eps))
      say("%-9s %-5s %4d %3d %2d%s %-7s | %6.3f %10.1f %6.3f %4d | %2d/%2d %6.3f %6.3f %6.3f %2d/%2d %8.1f %6.3f %4d %4d %4d | %8s %8s %2d/%2d",
          nm, group[j], nrow(s$X), ncol(s$X), s$K, star, cf, a0, m$loglik, tm,
          min(tabulate(m$classification, s$K)), ok,
          length(seeds), min(r["ari", ]), stats::median(r["ari", ]), stats::median(r["mc", ]),
          llok, length(seeds), dll, stats::median(r["sec", ]), as.integer(sum(r["warn", ])),
          as.integer(sum(r["conv", ])), as.integer(max(r["laps", ])),
          wtl(r["ll", ] - m$loglik, 1), wtl(r["ari", ] - a0, 0.02), sum(r["mc", ] >= 0.98),
          length(seeds))
      if (cf == "default") {
        # EM (mclust's me(), VVV, no prior) from the default fit's partition
        # (seed 1): the maximum likelihood at that partition's optimum, to
        # compare with Mclust's own optimum without the prior's effect
        f1 <- fit_mixture(s$X, K = s$K, seed = seeds[1], progress = FALSE)
        em <- tryCatch(mclust::me(s$X, modelName = "VVV", z = mclust::unmap(f1$classification,
                                                                            seq_len(s$K)))$loglik,
                       error = function(e) NA_real_)
        if (is.null(em)) em <- NA_real_
        # our model-based tree (the default's hierarchical start) cut at K
        # against mclust's hc() with Mclust's defaults (VVV, use = "SVD")
        hc_ari <- tryCatch({
          X <- data.matrix(s$X)
          ns <- asNamespace("sparsevi")
          mclust::adjustedRandIndex(
            ns$mix_mbhc_cut(ns$mix_mbhc_tree(X), s$K),
            mclust::hclass(mclust::hc(X, modelName = "VVV", use = "SVD"), s$K))
        }, error = function(e) NA_real_)
        summary <- c(summary, sprintf(
          "%-9s %-5s N=%4d D=%2d K=%2d: ARI ok %2d/%d (median %.3f vs Mclust %.3f); log-lik >= Mclust's - 1 in %2d/%d (median %+.1f); EM from our partition %+.2f; %.3fs vs Mclust %.3fs; model-based tree vs mclust's hc() at K: ARI %.3f",
          nm, group[j], nrow(s$X), ncol(s$X), s$K, ok, length(seeds), stats::median(r["ari", ]),
          a0, llok, length(seeds), dll, em - m$loglik, stats::median(r["sec", ]), tm, hc_ari))
      }
    }
  }
  say("\nsummary, one line per set (default settings); \"EM from our partition\": mclust's me()")
  say("  (VVV, no prior) started from the seed-1 fit's partition, its log-likelihood minus Mclust's")
  say("  (> 0: our partition leads to a higher maximum-likelihood optimum than Mclust's own):")
  for (l in summary) say("%s", l)
}

# ---------------------------------------------------------------------------
# 6. The cost of the default starts on mid-size data: fit_mixture() with its
#    defaults (3 starts from 10,001 to 100,000 points) against n_init = 1,
#    on simulate_mixture(N = 50,000, D = 10, K = 20) and on mclust's GvHD
#    flow cytometry data (GvHD.pos and GvHD.control stacked, 15,892 x 4,
#    K = 5 and 9), seeds 1..3: seconds (wall, one thread) and log-likelihood.
bench_starts <- function(seeds = 1:3) {
  sets <- list(sim50k = list(X = simulate_mixture(N = 50000, D = 10, K = 20, seed = 1)$X,
                             K = 20))
  if (requireNamespace("mclust", quietly = TRUE)) {
    e <- new.env()
    utils::data(GvHD, package = "mclust", envir = e)
    gv <- as.matrix(rbind(e$GvHD.pos, e$GvHD.control))
    sets$gvhd5 <- list(X = gv, K = 5)
    sets$gvhd9 <- list(X = gv, K = 9)
  }
  say("\n## 6. Cost of the default starts on mid-size data (one thread)")
  say("commit %s; command: %sRscript inst/bench/mixture.R starts",
      tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?"),
      bench_nice())
  say("one = n_init = 1; dflt = the default (short runs: each start %s laps, the best continued);",
      format(sparsevi:::mix_short_laps()))
  say("  full = the default with options(sparsevi.mix_short_laps = Inf) (every start to convergence);")
  say("  ratio = seconds / seconds of one start, measured in the same run")
  say("%-7s %6s %3s %3s %4s | %9s %14s | %9s %14s %6s | %9s %14s %6s", "data", "N", "D", "K",
      "seed", "sec_one", "loglik_one", "sec_dflt", "loglik_dflt", "ratio", "sec_full",
      "loglik_full", "ratio")
  ratios <- NULL
  for (nm in names(sets)) {
    s <- sets[[nm]]
    for (seed in seeds) {
      run <- function(...) {
        t0 <- proc.time()[["elapsed"]]
        f <- suppressWarnings(fit_mixture(s$X, K = s$K, seed = seed, progress = FALSE, ...))
        say_settings(sprintf("part 6 %s %s", nm, paste(names(list(...)), list(...), sep = "=", collapse = " ")), f)
        list(sec = proc.time()[["elapsed"]] - t0, ll = f$loglik)
      }
      a <- run(n_init = 1)
      b <- run()
      op <- options(sparsevi.mix_short_laps = Inf)
      c <- run()
      options(op)
      say("%-7s %6d %3d %3d %4d | %9.3f %14.1f | %9.3f %14.1f %6.2f | %9.3f %14.1f %6.2f", nm,
          nrow(s$X), ncol(s$X), s$K, seed, a$sec, a$ll, b$sec, b$ll, b$sec / a$sec, c$sec,
          c$ll, c$sec / a$sec)
      ratios <- rbind(ratios, c(b$sec / a$sec, c$sec / a$sec))
    }
  }
  say("time ratio to one start: default (short runs) median %.2f (range %.2f-%.2f); full runs median %.2f (range %.2f-%.2f)",
      stats::median(ratios[, 1]), min(ratios[, 1]), max(ratios[, 1]), stats::median(ratios[, 2]),
      min(ratios[, 2]), max(ratios[, 2]))
}

# ---------------------------------------------------------------------------
# 8. K grids at scale (issue 39): N = 1e5, D = 10, six planted components
#    (means drawn with sd 3, each its own random full covariance, weights
#    0.3 to 0.05), fit_mixture(X, K = 1:9) with the starts on all the points
#    (options(sparsevi.mix_sub_start = Inf), the default up to 20,000 points)
#    and with the subsample start (sparsevi.mix_sub_start = 2e4, the
#    default after it), against
#    Mclust(X, G = 1:9, modelNames = "VVV") started from a 2,000-point
#    subsample (mclust's documented large-N start), in one run: seconds, the
#    K chosen, ARI against the planted labels, log-likelihood at the chosen
#    K. Then simulate_mixture(N = 50,000, D = 10, K = 20) (part starts'
#    set), seeds 1..3: the default fit with and without the subsample start.
#    Needs mclust.
grid_data <- function(N, D = 10, K = 6, seed = 1) {
  set.seed(seed)
  w <- seq(0.3, 0.05, length.out = K)
  w <- w / sum(w)
  mu <- matrix(stats::rnorm(K * D, sd = 3), K, D)
  cl <- sample(K, N, TRUE, prob = w)
  X <- matrix(0, N, D)
  for (k in seq_len(K)) {
    A <- matrix(stats::rnorm(D * D), D, D)
    S <- crossprod(A) / D + diag(0.1, D)
    i <- which(cl == k)
    X[i, ] <- matrix(stats::rnorm(length(i) * D), ncol = D) %*% chol(S) +
      rep(mu[k, ], each = length(i))
  }
  list(X = X, cl = cl)
}

bench_grid <- function(Ns = 1e5, seeds = 1:3) {
  say("\n## 8. K grids at scale: fit_mixture(X, K = 1:9) against Mclust(G = 1:9, VVV, 2,000-point subsample start)")
  say("commit %s; command: SPARSEVI_BENCH_GRID_N=%s %sRscript inst/bench/mixture.R grid",
      tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?"),
      paste(format(Ns, scientific = TRUE), collapse = ","), bench_nice())
  say("data: D = 10, six components (means sd 3, random full covariances, weights 0.3 to 0.05), seed 1; one thread")
  say("all = options(sparsevi.mix_sub_start = Inf) (starts on all the points, the default up to 20,000 points); sub = options(sparsevi.mix_sub_start = 2e4) (the subsample start, the default after it); ratio = seconds / Mclust's seconds")
  say("%-8s %8s | %8s %2s %6s %14s | %8s %2s %6s %14s | %8s %2s %6s %14s | %6s %6s", "N", "",
      "sec_all", "K", "ARI", "loglik", "sec_sub", "K", "ARI", "loglik", "sec_mcl", "K", "ARI",
      "loglik", "r_all", "r_sub")
  ari <- mclust::adjustedRandIndex
  for (N in Ns) {
    d <- grid_data(N)
    run <- function(sub) {
      op <- options(sparsevi.mix_sub_start = if (sub) 2e4 else Inf)
      on.exit(options(op))
      t0 <- proc.time()[["elapsed"]]
      f <- suppressWarnings(fit_mixture(d$X, K = 1:9, seed = 1, progress = FALSE))
      list(sec = proc.time()[["elapsed"]] - t0, K = f$K, ari = ari(f$classification, d$cl),
           ll = f$loglik)
    }
    a <- run(FALSE)
    b <- run(TRUE)
    set.seed(1)
    sub <- sample(N, 2000)
    mclustBIC <- mclust::mclustBIC # Mclust() looks it up in the caller
    t0 <- proc.time()[["elapsed"]]
    m <- mclust::Mclust(d$X, G = 1:9, modelNames = "VVV", initialization = list(subset = sub),
                        verbose = FALSE)
    mt <- proc.time()[["elapsed"]] - t0
    say("%-8d %8s | %8.2f %2d %6.3f %14.1f | %8.2f %2d %6.3f %14.1f | %8.2f %2d %6.3f %14.1f | %6.3f %6.3f",
        as.integer(N), "", a$sec, a$K, a$ari, a$ll, b$sec, b$K, b$ari, b$ll, mt, m$G,
        ari(m$classification, d$cl), m$loglik, a$sec / mt, b$sec / mt)
  }
  X <- simulate_mixture(N = 50000, D = 10, K = 20, seed = 1)$X
  say("simulate_mixture(N = 50000, D = 10, K = 20, seed = 1), K = 20, the default starts on all the points and on the subsample:")
  say("%4s | %8s %14s | %8s %14s", "seed", "sec_all", "loglik_all", "sec_sub", "loglik_sub")
  for (seed in seeds) {
    run <- function(sub) {
      op <- options(sparsevi.mix_sub_start = if (sub) 2e4 else Inf)
      on.exit(options(op))
      t0 <- proc.time()[["elapsed"]]
      f <- suppressWarnings(fit_mixture(X, K = 20, seed = seed, progress = FALSE))
      list(sec = proc.time()[["elapsed"]] - t0, ll = f$loglik)
    }
    a <- run(FALSE)
    b <- run(TRUE)
    say("%4d | %8.3f %14.1f | %8.3f %14.1f", seed, a$sec, a$ll, b$sec, b$ll)
  }
}

# ---------------------------------------------------------------------------
# 7. Choosing the laps of the short runs: the default fit with
#    options(sparsevi.mix_short_laps = s), s in `laps` (Inf: every start to
#    convergence), on all 22 sets of part robust (seeds 1..10: ARI ok count
#    and median log-likelihood against Mclust's, as there) and on the sets
#    of part starts (seeds 1..3: seconds against one start, log-likelihood
#    against the full runs').
bench_short <- function(laps = c(2, 3, 5, 10, 20, Inf), seeds = 1:10, start_seeds = 1:3) {
  # SPARSEVI_BENCH_SHORT_KEEP: the starts continued (option sparsevi.mix_short_keep)
  keep <- as.numeric(Sys.getenv("SPARSEVI_BENCH_SHORT_KEEP", "1"))
  op0 <- options(sparsevi.mix_short_keep = keep)
  on.exit(options(op0))
  ltxt <- Sys.getenv("SPARSEVI_BENCH_SHORT_LAPS", "")
  if (nzchar(ltxt)) laps <- as.numeric(strsplit(ltxt, ",")[[1]])
  if (!requireNamespace("mclust", quietly = TRUE)) {
    say("short: mclust is not installed, skipped")
    return(invisible())
  }
  sets <- robust_sets()
  ari <- mclust::adjustedRandIndex
  lab <- ifelse(is.finite(laps), format(laps), "full")
  say("\n## 7. Laps of the short runs: default fit with options(sparsevi.mix_short_laps = s)")
  say("commit %s; command: %s%sRscript inst/bench/mixture.R short",
      tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?"),
      paste0(if (keep != 1) sprintf("SPARSEVI_BENCH_SHORT_KEEP=%g ", keep),
             if (nzchar(ltxt)) sprintf("SPARSEVI_BENCH_SHORT_LAPS=%s ", ltxt)), bench_nice())
  say("continued after the short runs: the best %g start(s) (option sparsevi.mix_short_keep)", keep)
  say("robust sets, seeds %s: per s, ok = seeds with ARI >= Mclust's - 0.02 (as part robust),",
      paste(range(seeds), collapse = ".."))
  say("  then the median log-likelihood minus Mclust's; last row: total ok over the sets of more than 50 points,")
  say("  and the total seconds of all fits")
  say("%-9s %4s %2s | %s", "data", "N", "K", paste(sprintf("%15s", paste0("s=", lab)), collapse = " "))
  tot_ok <- tot_sec <- numeric(length(laps))
  for (nm in names(sets)) {
    st <- sets[[nm]]
    if (is.na(st$K)) st$K <- mclust::Mclust(st$X, G = 2:5, modelNames = "VVV", verbose = FALSE)$G
    m <- mclust::Mclust(st$X, G = st$K, modelNames = "VVV", verbose = FALSE)
    ref <- if (is.null(st$y)) m$classification else st$y
    a0 <- ari(m$classification, ref)
    cells <- character(length(laps))
    for (j in seq_along(laps)) {
      op <- options(sparsevi.mix_short_laps = laps[j])
      t0 <- proc.time()[["elapsed"]]
      r <- vapply(seeds, function(seed) {
        f <- suppressWarnings(fit_mixture(st$X, K = st$K, seed = seed, progress = FALSE))
        say_settings("short robust default (as called)", f)
        c(ari = ari(predict(f, st$X), ref), ll = f$loglik)
      }, numeric(2))
      tot_sec[j] <- tot_sec[j] + proc.time()[["elapsed"]] - t0
      options(op)
      ok <- sum(r["ari", ] >= a0 - 0.02)
      if (nrow(st$X) > 50) tot_ok[j] <- tot_ok[j] + ok
      cells[j] <- sprintf("%2d %+10.1f", ok, stats::median(r["ll", ]) - m$loglik)
    }
    say("%-9s %4d %2d | %s", nm, nrow(st$X), st$K, paste(sprintf("%15s", cells), collapse = " "))
  }
  say("%-17s | %s", "ok (N > 50)", paste(sprintf("%15d", as.integer(tot_ok)), collapse = " "))
  say("%-17s | %s", "seconds", paste(sprintf("%15.1f", tot_sec), collapse = " "))
  # mid-size data: cost and log-likelihood
  mid <- list(sim50k = list(X = simulate_mixture(N = 50000, D = 10, K = 20, seed = 1)$X,
                            K = 20))
  e <- new.env()
  utils::data(GvHD, package = "mclust", envir = e)
  gv <- as.matrix(rbind(e$GvHD.pos, e$GvHD.control))
  mid$gvhd5 <- list(X = gv, K = 5)
  mid$gvhd9 <- list(X = gv, K = 9)
  say("mid-size sets (part starts), seeds %s: per s, seconds / seconds of n_init = 1 (same run),",
      paste(range(start_seeds), collapse = ".."))
  say("  then log-likelihood minus that of the full runs (s = Inf)")
  say("%-7s %4s | %s", "data", "seed", paste(sprintf("%15s", paste0("s=", lab)), collapse = " "))
  rat <- matrix(NA_real_, 0, length(laps))
  for (nm in names(mid)) {
    st <- mid[[nm]]
    for (seed in start_seeds) {
      run <- function(...) {
        t0 <- proc.time()[["elapsed"]]
        f <- suppressWarnings(fit_mixture(st$X, K = st$K, seed = seed, progress = FALSE, ...))
        say_settings(sprintf("short %s", paste(names(list(...)), list(...), sep = "=", collapse = " ")), f)
        c(sec = proc.time()[["elapsed"]] - t0, ll = f$loglik)
      }
      one <- run(n_init = 1)
      r <- vapply(laps, function(l) {
        op <- options(sparsevi.mix_short_laps = l)
        on.exit(options(op))
        run()
      }, numeric(2))
      full <- r["ll", !is.finite(laps)][1]
      rat <- rbind(rat, r["sec", ] / one[["sec"]])
      say("%-7s %4d | %s", nm, seed, paste(sprintf("%15s", sprintf("%5.2f %+9.1f", r["sec", ] / one[["sec"]],
                                                             r["ll", ] - full)), collapse = " "))
    }
  }
  say("%-12s | %s", "median ratio", paste(sprintf("%15.2f", apply(rat, 2, stats::median)), collapse = " "))
}

if ("grid" %in% what) {
  # SPARSEVI_BENCH_GRID_N: the sizes N of the K grids, e.g. "1e5,1e6"
  bench_grid(Ns = as.numeric(strsplit(Sys.getenv("SPARSEVI_BENCH_GRID_N", "1e5"), ",")[[1L]]))
}
if ("sklearn" %in% what) {
  source(file.path(bench_dir, "mixture-call-split.R"), local = TRUE)
  bench_call_split(say, smoke)
}
if (any(c("robust", "all") %in% what)) bench_robust()
if ("short" %in% what) bench_short()
if (any(c("starts", "all") %in% what)) bench_starts()
# SPARSEVI_BENCH_PATCH_K: the values of K of part 1 (default 800,400,100)
patch_K <- as.numeric(strsplit(Sys.getenv("SPARSEVI_BENCH_PATCH_K", "800,400,100"), ",")[[1]])
if (any(c("patches", "all") %in% what)) bench_patches(Ks = patch_K)
budget <- budget + 900 # the throughput section always gets its turn
if (any(c("throughput", "all") %in% what)) bench_throughput()
if (any(c("threads", "all") %in% what)) bench_threads()
if (any(c("kernels", "all") %in% what)) bench_kernels()
say("load average at the end: %s", paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
cat("wrote", out_file, "\n")
