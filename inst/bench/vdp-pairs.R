# fit_vdp()'s pairs of splits (pair_splits, default TRUE): what they cost
# where they find nothing, and what they find where one split at a time
# stops short.
#
# Run from the package root with sparsevi installed:
#   nice -n 10 Rscript inst/bench/vdp-pairs.R
# Part 1: the sets of inst/bench/vdp.R (parts 1, 2 and 3's synthetic set: the
# paper's c-separated Gaussians; Fashion-MNIST PCA-50 with 12,000 and 20,000
# images when Debian's dataset-fashion-mnist is installed; the 438,784 4 x 4
# patches of ../shared/data/images): fit_vdp(X, pair_splits = FALSE) and
# fit_vdp(X) (pairs on) side by side, with the tree (the default) and without
# (VDP; sets up to 10^5 points), in one process; free energy, T, whole-call
# CPU seconds, split candidates tried. Part 2: three equal spherical clusters
# in a row (centres 0, 3 and 6 in every coordinate), where a first split
# leaves one cluster beside a merged pair; T for five row orders, both ways.
# Every fit: seed = 1, threads = 1, max_K = 50, assignments = FALSE, the
# other settings the defaults (kdtree as stated).
# Knobs: SPARSEVI_BENCH_FASHION_N, the sizes of part 1's last Fashion-MNIST
# sets (default "20000", at most the 60,000 training images);
# SPARSEVI_BENCH_PAIRS_ONLY, a regular expression: only part 1's sets whose
# names match, and no part 2; SPARSEVI_BENCH_PAIRS_VDP_MAX, the largest set
# VDP runs on (default 1e5).
# Smoke mode (SPARSEVI_BENCH_SMOKE=1): two small synthetic sets, one case of
# part 2. Appends a dated section to inst/bench/results/vdp-pairs.txt.

suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
source(file.path(bench_dir, "bench-data.R")) # gen_separated(), the images, Fashion-MNIST, rows
smoke <- bench_smoke()
Sys.setenv(OMP_NUM_THREADS = "1", OPENBLAS_NUM_THREADS = "1", MKL_NUM_THREADS = "1")
say <- bench_logger(bench_out("vdp-pairs.txt"))

fit_cpu <- function(X, kdtree, pairs) {
  t <- system.time(f <- fit_vdp(X, kdtree = kdtree, pair_splits = pairs, seed = 1, threads = 1,
                                max_K = 50, assignments = FALSE, progress = FALSE))
  list(fit = f, cpu = t[["user.self"]] + t[["sys.self"]])
}

bench_header(say, "# fit_vdp()'s pairs of splits (inst/bench/vdp-pairs.R)")
say("# load average at start: %s", bench_loadavg())

## 1. The sets of vdp.R ----------------------------------------------------------
sets <- list()
if (smoke) {
  sets[["synthetic N=2000 D=8 c=2"]] <- gen_separated(2000, 8, 2, seed = 1)$X
  sets[["synthetic N=2000 D=16 c=1"]] <- gen_separated(2000, 16, 1, seed = 2)$X
} else {
  for (N in c(1e3, 1e4, 1e5, 1e6))
    sets[[sprintf("vdp.R 1: N=%g D=16 c=2", N)]] <- gen_separated(N, 16, 2, seed = 1)$X
  grid <- rbind(c(16, 2), c(32, 2), c(64, 2), c(128, 2), c(16, 1), c(16, 3), c(16, 4))
  for (g in seq_len(nrow(grid)))
    sets[[sprintf("vdp.R 2: D=%d c=%d", grid[g, 1], grid[g, 2])]] <-
      gen_separated(1e4, grid[g, 1], grid[g, 2], seed = 2)$X
  sets[["vdp.R 3: synthetic 25000"]] <- gen_separated(25000, 16, 2, seed = 3)$X
  fm <- bench_fashion_pca(50L, 10000L, 2000L)
  if (!is.null(fm)) sets[["vdp.R 3: Fashion 12000"]] <- rbind(fm$X, fm$test)
  files <- bench_image_files()
  if (length(files)) sets[["vdp.R 5: patches 438784"]] <- bench_image_patches(files, 4)
  for (n in as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_FASHION_N", "20000"), ",")[[1]])) {
    fm2 <- bench_fashion_pca(50L, n, 0L)
    if (!is.null(fm2)) sets[[sprintf("vdp.R 6: Fashion %d", n)]] <- fm2$X
  }
}
only <- Sys.getenv("SPARSEVI_BENCH_PAIRS_ONLY")
if (nzchar(only)) sets <- sets[grepl(only, names(sets))]
vdp_max <- as.numeric(Sys.getenv("SPARSEVI_BENCH_PAIRS_VDP_MAX", "1e5"))
say("")
say("## 1. One split at a time (pair_splits = FALSE) against pairs (TRUE), both in one process;")
say("##    cpu_x: CPU seconds with pairs over without; F_rat: 1 + (F_pairs - F_single) / |F_single|")
first <- TRUE
say("%-26s %6s %4s %4s %14s %14s %9s %7s %7s %6s %5s %5s", "set", "kdtree", "T1", "T2",
    "F single", "F pairs", "F_rat", "cpu1", "cpu2", "cpu_x", "try1", "try2")
for (nm in names(sets)) for (kd in c(TRUE, FALSE)) {
  X <- sets[[nm]]
  if (!kd && nrow(X) > vdp_max) next
  a <- fit_cpu(X, kd, FALSE)
  b <- fit_cpu(X, kd, TRUE)
  if (first) {
    bench_header(say, fits = list(single = a$fit, pairs = b$fit))
    first <- FALSE
  }
  say("%-26s %6s %4d %4d %14.2f %14.2f %9.6f %7.2f %7.2f %6.2f %5d %5d", nm, kd, a$fit$T,
      b$fit$T, a$fit$free_energy, b$fit$free_energy,
      1 + (b$fit$free_energy - a$fit$free_energy) / abs(a$fit$free_energy), a$cpu, b$cpu,
      b$cpu / a$cpu, a$fit$splits[["tried"]], b$fit$splits[["tried"]])
}
say("# load average after part 1: %s", bench_loadavg())

## 2. Three clusters in a row ------------------------------------------------------
if (!nzchar(only)) {
  say("")
  say("## 2. Three equal spherical clusters in a row, n points each in D dimensions (centres 0, 3, 6")
  say("##    in every coordinate, 3 sqrt(D) sd apart): T for rows as generated (sorted by cluster),")
  say("##    reversed, sorted by the first column, that reversed, shuffled (seed 7)")
  cases <- if (smoke) list(c(200, 8, 1)) else
    list(c(2000, 32, 1), c(1500, 32, 1), c(1000, 32, 1), c(500, 16, 1), c(300, 16, 1),
         c(200, 8, 1), c(150, 4, 2))
  for (cs in cases) {
    n <- cs[1]
    D <- cs[2]
    X <- bench_three_in_a_row(n, D, 3, cs[3])
    orders <- bench_row_orders(X)
    tt <- function(pairs) paste(vapply(orders, function(i) {
      fit_vdp(X[i, , drop = FALSE], pair_splits = pairs, seed = 1, threads = 1,
              progress = FALSE)$T
    }, 1L), collapse = "/")
    say("  n %4d D %2d seed %d: one split at a time %s   pairs %s", n, D, cs[3], tt(FALSE), tt(TRUE))
  }
}
say("# done %s", format(Sys.time(), "%H:%M:%S"))
