# Benchmark of Fast-VDP (fit_vdp, kd-tree) against VDP (the same algorithm on
# every point) and scikit-learn's BayesianGaussianMixture with a Dirichlet
# process prior, after Kurihara, Welling & Vlassis (2007), section 8.
#
# Run from the package root with sparsevi installed:
#   nice -n 10 Rscript inst/bench/vdp.R [vdp_limit_seconds] [max_N] [parts]
# parts: which sections to run, e.g. "1,2" or "3" (default "1,2,3"; "4" is
# the tolerance study on Fashion-MNIST, "5" Fig. 2's comparison on image
# patches from ../shared/data/images, VDP_BENCH_IMAGES of them, default all 10,
# "6" the same on Fashion-MNIST in 50 dimensions, at N up to max_N; the
# sizes from SPARSEVI_BENCH_FASHION_N, default "10000,20000", at most the
# 60,000 training images).
# SPARSEVI_LIB_COMMIT names the commit of the sparsevi build measured, when it
# is not this checkout's (e.g. R_LIBS pointing at a build of main).
# Parts 1, 2 and 5 are Kurihara et al.'s Fig. 2 (and a real data set): VDP
# against Fast-VDP in the paper mode (fit_vdp(paper = TRUE)) and with the
# defaults.
# The "default" column is fit_vdp(X) as users call it (the claim is about
# the default); every section writes the settings each of the three calls
# ran, read back from the fits (fit$control), with the commit and command.
# Smoke mode (SPARSEVI_BENCH_SMOKE=1): parts 1-3 on small simulated data, no
# scikit-learn, no mlbench, no shared data.
# Appends a dated section to inst/bench/results/vdp.txt. One thread
# everywhere (BLAS included). Seconds are wall time; cpu_s columns are the
# process's user + system time, steadier on a shared machine.
#
# Data as in the paper: 10 Gaussians in D dimensions, c-separated:
# ||m_i - m_j||^2 >= c^2 D max(lambda_max_i, lambda_max_j), equality for the
# closest pair. Free-energy ratio 1 + (F_A - F_B) / |F_B|, A = Fast-VDP,
# B = VDP.

suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()
args <- commandArgs(trailingOnly = TRUE)
vdp_limit <- if (length(args) >= 1) as.numeric(args[1]) else 300
max_N <- if (length(args) >= 2) as.numeric(args[2]) else if (smoke) 1e3 else 1e6
parts <- if (length(args) >= 3) as.integer(strsplit(args[3], ",")[[1]]) else 1:3
Sys.setenv(OMP_NUM_THREADS = "1", OPENBLAS_NUM_THREADS = "1", MKL_NUM_THREADS = "1")

say <- bench_logger(bench_out("vdp.txt"))

source(file.path(bench_dir, "bench-data.R")) # gen_separated()

# A call shorter than a quarter second is repeated (the same fit: seed = 1)
# until the calls add up to half a second, at most 25 times, and the mean is
# taken: single calls of a few milliseconds are too noisy to compare (smoke
# mode: once).
fit_timed <- function(X, kdtree, max_K = 50, ...) {
  el <- cpu <- 0
  reps <- 0L
  repeat {
    st <- system.time(f <- fit_vdp(X, kdtree = kdtree, seed = 1, threads = 1,
                                   max_K = max_K, progress = FALSE, ...))
    el <- el + st[["elapsed"]]
    cpu <- cpu + sum(st[c("user.self", "sys.self")], na.rm = TRUE)
    reps <- reps + 1L
    if (smoke || reps == 1L && el >= 0.25 || el >= 0.5 || reps >= 25L) break
  }
  list(fit = f, seconds = el / reps, cpu = cpu / reps, reps = reps)
}
# One data set, Fig. 2 style: VDP once (the paper's algorithm: no delete
# moves, kdtree = FALSE), Fast-VDP in the paper mode (paper = TRUE) and with
# the defaults. Ratios: whole_x = VDP's whole call over Fast-VDP's (elapsed),
# fit_x = VDP's fit over Fast-VDP's fit after the tree (timings$fit: lazy
# bucket splits included), cpu_x = the same as whole_x in CPU seconds,
# fcpu_x = the same as fit_x in CPU seconds (timings$fit_cpu),
# F_ratio = 1 + (F_fast - F_vdp) / |F_vdp|.
fig2_row <- function(X, run_vdp = TRUE, max_K = 50) {
  fp <- fit_timed(X, TRUE, max_K, paper = TRUE)
  fd <- fit_timed(X, TRUE, max_K)
  # the plain VDP: the paper's search on every point, one split at a time
  fb <- if (run_vdp) fit_timed(X, FALSE, max_K, deletes = FALSE, pair_splits = FALSE) else NULL
  cols <- function(fa) {
    if (is.null(fb)) return(c(NA, NA, NA, NA, NA))
    c(fb$seconds / fa$seconds, fb$fit$timings[["fit"]] / fa$fit$timings[["fit"]],
      fb$cpu / fa$cpu, ratio(fa$fit$free_energy, fb$fit$free_energy),
      fb$fit$timings[["fit_cpu"]] / fa$fit$timings[["fit_cpu"]])
  }
  list(fp = fp, fd = fd, fb = fb, p = cols(fp), d = cols(fd))
}
fig2_header <- function(first) {
  say("# paper: fit_vdp(X, paper = TRUE); default: fit_vdp(X); VDP: fit_vdp(X, kdtree = FALSE,")
  say("#   deletes = FALSE, pair_splits = FALSE); all with seed = 1, threads = 1, max_K = 50.")
  say("# *_s: elapsed seconds of the whole call; tree_s / fit_s: timings$tree and")
  say("#   timings$fit of the paper-mode call; whole_x / fit_x / cpu_x: VDP over")
  say("#   Fast-VDP for the whole call (elapsed), the fit after the tree, the whole")
  say("#   call in CPU seconds; fcpu_x: fit_x in CPU seconds; F_rat: 1 + (F_fast - F_vdp) /")
  say("#   |F_vdp|; T: components.")
  say("%s %8s %7s %7s %8s %8s %7s %7s %7s %7s %7s %3s %3s %6s | %7s %7s %7s %7s %3s %6s",
      first, "paper_s", "tree_s", "fit_s", "vdp_s", "whole_x", "fit_x", "cpu_x", "fcpu_x",
      "F_rat", "T", "Tv", "", "nodes", "whole_x", "fit_x", "cpu_x", "F_rat", "T", "nodes")
}
settings_said <- FALSE
fig2_say <- function(first, r) {
  if (!settings_said) {
    # the settings of the section's first row, read back from its fits
    bench_header(say, fits = Filter(Negate(is.null), list(
      paper = r$fp$fit, default = r$fd$fit, VDP = if (!is.null(r$fb)) r$fb$fit)))
    settings_said <<- TRUE
  }
  f <- function(v, fmt) if (is.na(v)) sprintf(gsub("\\.[0-9]+f", "s", fmt), "-") else sprintf(fmt, v)
  say("%s %8.3f %7.3f %7.3f %8s %8s %7s %7s %7s %7s %7d %3s %3s %6d | %7s %7s %7s %7s %3d %6d",
      first, r$fp$seconds, r$fp$fit$timings[["tree"]], r$fp$fit$timings[["fit"]],
      if (is.null(r$fb)) "-" else sprintf("%.3f", r$fb$seconds),
      f(r$p[1], "%.1f"), f(r$p[2], "%.1f"), f(r$p[3], "%.1f"), f(r$p[5], "%.1f"),
      f(r$p[4], "%.4f"),
      r$fp$fit$T, if (is.null(r$fb)) "-" else r$fb$fit$T, "", r$fp$fit$n_outer_nodes,
      f(r$d[1], "%.1f"), f(r$d[2], "%.1f"), f(r$d[3], "%.1f"), f(r$d[4], "%.4f"),
      r$fd$fit$T, r$fd$fit$n_outer_nodes)
  if (!is.null(r$fb)) {
    say("%s   to VDP's free energy: paper %s, default %s", strrep(" ", nchar(first) - 2L),
        reach_said(r$fp$fit, r$fb), reach_said(r$fd$fit, r$fb))
  }
}

# When a Fast-VDP fit first reaches the plain VDP's final free energy (or a
# lower one; within 1e-7 of it relatively, what F_rat shows as 1.0000): the
# CPU seconds of its trace at that step, and VDP's whole-call CPU over them
# ("x"); "never" when it ends above it. The trace's clock
# starts after the tree is built: its time (timings$tree, one thread) is
# added, so this is the call's time to the same quality, whatever the fit
# does after.
reach_said <- function(fit, fb) {
  tr <- fit$trace
  hit <- which(tr$free_energy <= fb$fit$free_energy + 1e-7 * abs(fb$fit$free_energy))
  if (!length(hit)) return("never")
  cpu <- tr$cpu_seconds[hit[1]] + fit$timings[["tree"]]
  sprintf("%.3g s CPU at step %d of %d (T = %d), x%.1f", cpu, tr$lap[hit[1]], max(tr$lap),
          tr$T[hit[1]], fb$cpu / max(cpu, 1e-9))
}

# Fashion-MNIST PCA-50 (bench_fashion_pca(), bench-data.R): 10000 training
# images and 2000 test images (a subset, so that sklearn's full-covariance fit
# finishes in minutes here), as one matrix and the test rows' indices.
fashion_data <- function(n_train = 10000L, n_test = 2000L) {
  fm <- bench_fashion_pca(50L, n_train, n_test)
  if (is.null(fm)) return(NULL)
  list(X = rbind(fm$X, fm$test), test = nrow(fm$X) + seq_len(nrow(fm$test)))
}

ratio <- function(fa, fb) 1 + (fa - fb) / abs(fb)

bench_header(say, sprintf("# Fast-VDP benchmark (inst/bench/vdp.R), parts %s", paste(parts, collapse = ",")))
say("# load average at start: %s", bench_loadavg())
# the package measured: the library it was loaded from, and the commit it was
# built from when SPARSEVI_LIB_COMMIT says so (a run against an older build,
# e.g. main before a change, from this checkout's script)
say("# sparsevi loaded from %s%s", dirname(find.package("sparsevi")),
    if (nzchar(Sys.getenv("SPARSEVI_LIB_COMMIT")))
      sprintf(", built from commit %s", Sys.getenv("SPARSEVI_LIB_COMMIT")) else "")
say("# one thread; seconds are elapsed wall time of fit_vdp() (tree build included);")
say("# calls under 0.25 s are repeated until they add up to 0.5 s (at most 25) and averaged")
say("# on a shared 2-core machine, so absolute times are noisy; ratios less so.")

## 1. Fig. 2 left: against N (D = 16, c = 2) ------------------------------
if (1L %in% parts) {
say("")
say("## 1. Fig. 2 left: against N (D = 16, c = 2); VDP skipped once its projected time > %g s",
    vdp_limit)
settings_said <- FALSE
fig2_header(sprintf("%8s", "N"))
Ns <- c(1e3, 1e4, 1e5, 1e6)
Ns <- Ns[Ns <= max_N]
last_vdp <- NA
last_N <- NA
for (N in Ns) {
  d <- gen_separated(N, 16, 2, seed = 1)
  proj <- if (is.na(last_vdp)) 0 else last_vdp * (N / last_N) * 1.1
  r <- fig2_row(d$X, run_vdp = proj <= vdp_limit)
  if (!is.null(r$fb)) {
    last_vdp <- r$fb$seconds
    last_N <- N
  }
  fig2_say(sprintf("%8d", as.integer(N)), r)
}
say("# load average after part 1: %s", bench_loadavg())
}

## 2. Fig. 2 centre and right: against D and c (N = 10^4) --------------------
if (2L %in% parts) {
say("")
say("## 2. Fig. 2 centre: against D (N = 1e4, c = 2); right: against c (N = 1e4, D = 16)")
settings_said <- FALSE
fig2_header(sprintf("%4s %4s", "D", "c"))
grid <- rbind(c(16, 2), c(32, 2), c(64, 2), c(128, 2), c(16, 1), c(16, 3), c(16, 4))
if (smoke) grid <- grid[c(1, 5), , drop = FALSE]
for (g in seq_len(nrow(grid))) {
  d <- gen_separated(if (smoke) 1e3 else 1e4, grid[g, 1], grid[g, 2], seed = 2)
  fig2_say(sprintf("%4d %4d", as.integer(grid[g, 1]), as.integer(grid[g, 2])),
           fig2_row(d$X))
}
say("# load average after part 2: %s", bench_loadavg())
}

## 3. Against scikit-learn BayesianGaussianMixture (DP prior) ---------------
if (3L %in% parts) {
say("")
say("## 3. vs scikit-learn BayesianGaussianMixture(weight_concentration_prior_type =")
say("##    'dirichlet_process', covariance_type = 'full', n_components = 30, max_iter = 500)")
say("##    held-out log-likelihood: mean log density per test point (ours: eq. 7")
say("##    predictive with tail; sklearn: score() with its point estimates).")
say("##    fit_vdp(max_K = 30) to match sklearn's truncation; K = components found")
say("##    (sklearn: weights > 0.01).")
py <- "/usr/bin/python3"
have_py <- !smoke && file.exists(py) &&
  system2(py, c("-c", shQuote("import sklearn")), stdout = FALSE, stderr = FALSE) == 0
sk_script <- tempfile(fileext = ".py")
writeLines(c(
  "import sys, time, numpy as np",
  "from sklearn.mixture import BayesianGaussianMixture",
  "tr = np.loadtxt(sys.argv[1], delimiter=','); te = np.loadtxt(sys.argv[2], delimiter=',')",
  "m = BayesianGaussianMixture(n_components=30, covariance_type='full',",
  "    weight_concentration_prior_type='dirichlet_process', max_iter=500, random_state=0)",
  "t0 = time.perf_counter(); c0 = time.process_time(); m.fit(tr)",
  "t = time.perf_counter() - t0; c = time.process_time() - c0",
  "k = int((m.weights_ > 1e-2).sum())",
  "print(t, m.score(te), k, int(m.converged_), c)"), sk_script)
run_sklearn <- function(train, test) {
  a <- tempfile(fileext = ".csv")
  b <- tempfile(fileext = ".csv")
  utils::write.table(train, a, sep = ",", row.names = FALSE, col.names = FALSE)
  utils::write.table(test, b, sep = ",", row.names = FALSE, col.names = FALSE)
  res <- system2(py, c(sk_script, a, b), stdout = TRUE,
                 env = c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"))
  as.numeric(strsplit(utils::tail(res, 1), " ")[[1]])
}
datasets <- list()
if (smoke) {
  d <- gen_separated(2500, 16, 2, seed = 3)
  datasets[["synthetic D=16 c=2 (2000 + 500), smoke"]] <- list(X = d$X, test = 2001:2500)
} else {
  d <- gen_separated(25000, 16, 2, seed = 3)
  datasets[["synthetic D=16 c=2 (20000 + 5000)"]] <- list(X = d$X, test = 20001:25000)
}
bench_use_peers()
if (bench_has("mlbench")) {
  e <- new.env()
  utils::data("Shuttle", package = "mlbench", envir = e)
  utils::data("LetterRecognition", package = "mlbench", envir = e)
  set.seed(4)
  S <- scale(as.matrix(e$Shuttle[, 1:9]))
  datasets[["mlbench Shuttle (58000 x 9, 80/20)"]] <-
    list(X = S, test = sample.int(nrow(S), round(0.2 * nrow(S))))
  L <- scale(as.matrix(e$LetterRecognition[, -1]))
  datasets[["mlbench LetterRecognition (20000 x 16, 80/20)"]] <-
    list(X = L, test = sample.int(nrow(L), round(0.2 * nrow(L))))
} else {
  say("# mlbench not installed: real data sets skipped")
}
fm <- if (!smoke) fashion_data()
if (!is.null(fm)) {
  datasets[["Fashion-MNIST PCA-50 (10000 + 2000)"]] <- fm
} else {
  say("# Fashion-MNIST (Debian dataset-fashion-mnist) is not installed here: skipped")
}
say("%-46s %-10s %9s %9s %11s %5s", "data", "method", "seconds", "cpu_s", "heldout_ll", "K")
for (nm in names(datasets)) {
  ds <- datasets[[nm]]
  train <- ds$X[-ds$test, , drop = FALSE]
  test <- ds$X[ds$test, , drop = FALSE]
  fa <- tryCatch(fit_timed(train, TRUE, max_K = 30), error = function(e) e)
  if (inherits(fa, "error")) {
    say("%-46s %-10s failed: %s", nm, "Fast-VDP", conditionMessage(fa))
  } else {
    say("%-46s %-10s %9.2f %9.2f %11.4f %5d", nm, "Fast-VDP", fa$seconds, fa$cpu,
        heldout_loglik(fa$fit, test), fa$fit$T)
    say("#   settings that ran: %s", bench_settings(fa$fit))
  }
  if (have_py) {
    sk <- tryCatch(run_sklearn(train, test), error = function(e) rep(NA, 5))
    say("%-46s %-10s %9.2f %9.2f %11.4f %5s", nm, "sklearn", sk[1], sk[5], sk[2],
        paste0(sk[3], if (isTRUE(sk[4] == 0)) " (not converged)" else ""))
  } else {
    say("%-46s %-10s skipped: /usr/bin/python3 with sklearn not found", nm, "sklearn")
  }
}
say("# load average after part 3: %s", bench_loadavg())
}
## 4. Fashion-MNIST: the stopping tolerance -------------------------------
if (4L %in% parts) {
  fm <- fashion_data()
  say("")
  say("## 4. Fashion-MNIST PCA-50 (10000 + 2000): Fast-VDP against its stopping")
  say("##    tolerance tol, in nats per point (max_K = 30); sklearn in part 3")
  say("%8s %9s %9s %11s %5s %8s", "tol", "seconds", "cpu_s", "heldout_ll", "K", "nodes")
  if (is.null(fm)) {
    say("# Fashion-MNIST (Debian dataset-fashion-mnist) is not installed here: skipped")
  } else {
    train <- fm$X[-fm$test, ]
    test <- fm$X[fm$test, ]
    for (tl in c(1e-2, 1e-3, 1e-4, 1e-5)) {
      # (one split at a time, as the recorded figures ran: pairs of splits came later)
      st <- system.time(f <- fit_vdp(train, tol = tl, max_K = 30, seed = 1, threads = 1,
                                     progress = FALSE, pair_splits = FALSE))
      say("%8.0e %9.2f %9.2f %11.4f %5d %8d", tl, st[["elapsed"]],
          sum(st[c("user.self", "sys.self")]), heldout_loglik(f, test), f$T,
          f$n_outer_nodes)
      say("#   settings that ran: %s", bench_settings(f))
    }
  }
  say("# load average after part 4: %s", bench_loadavg())
}
## 5. Real data: 4 x 4 image patches --------------------------------------
if (5L %in% parts) {
say("")
say("## 5. Real data, as Fig. 2: 4 x 4 patches (D = 16, stride 4, image_patches(remove_mean =")
say("##    FALSE)) of the photographs in ../shared/data/images, dequantised: (pixel + U(0, 1)) / 256")
say("##    (8-bit values tie; without the jitter flat regions give degenerate components)")
files <- bench_image_files(as.integer(Sys.getenv("VDP_BENCH_IMAGES", "10")))
if (!length(files)) {
  say("# ../shared/data/images not found (run from the package root): skipped")
} else {
  P <- bench_image_patches(files, 4)
  say("# images: %s", paste(basename(files), collapse = ", "))
  settings_said <- FALSE
  fig2_header(sprintf("%8s", "N"))
  fig2_say(sprintf("%8d", nrow(P)), fig2_row(P))
}
say("# load average after part 5: %s", bench_loadavg())
}

## 6. Real data in 50 dimensions: Fashion-MNIST -----------------------------
if (6L %in% parts) {
say("")
say("## 6. Real data in 50 dimensions, as Fig. 2 (the paper's MNIST experiment): Fashion-MNIST")
say("##    training images (pixels / 255) reduced to 50 principal components (prcomp on the")
fm_n <- if (smoke) integer(0) else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_FASHION_N", "10000,20000"), ",")[[1]])
fm_n <- fm_n[fm_n <= max_N]
say("##    images used); N = %s (10000 is the training part of part 3's set)", paste(fm_n, collapse = ", "))
if (!length(fm_n) || !file.exists(file.path("/usr/share/datasets/fashion-mnist",
                                            "train-images-idx3-ubyte.gz"))) {
  say("# Fashion-MNIST (Debian dataset-fashion-mnist) is not installed here, or smoke mode: skipped")
} else {
  settings_said <- FALSE
  fig2_header(sprintf("%8s", "N"))
  for (n in fm_n) {
    fm <- fashion_data(n, 10L)
    fig2_say(sprintf("%8d", n), fig2_row(fm$X[-fm$test, , drop = FALSE]))
  }
}
say("# load average after part 6: %s", bench_loadavg())
}

say("")
say("# done %s", format(Sys.time(), "%H:%M:%S"))
