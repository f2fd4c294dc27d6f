# What the LDA benchmarks share for reading corpora and timing calls. Source
# it after bench-log.R: source(file.path(bench_dir, "bench-data.R")).

# A corpus of ../shared/data by name; "wikipara<N>" is the first N paragraphs
# of wikipara, with the terms they use (all_terms = TRUE keeps the whole
# vocabulary, V = 129,289).
# In smoke mode (bench-log.R) every name gives a small simulated corpus.
bench_corpus <- function(name, data_dir = file.path("..", "shared", "data"),
                         all_terms = FALSE) {
  if (exists("bench_smoke", mode = "function") && bench_smoke()) {
    return(bench_sim_corpus(D = 80, V = 50, K = 4, seed = 1))
  }
  if (!dir.exists(data_dir)) {
    stop("Run the benchmarks from the package root, with the shared data in ../shared/data.")
  }
  if (grepl("^wikipara[0-9]+$", name)) {
    n <- as.integer(sub("wikipara", "", name))
    dir <- file.path(data_dir, "wikipara")
    body <- tempfile()
    system(sprintf("gzip -dc %s | awk 'NR <= 3 { next } $1 > %d { exit } { print }' > %s",
                   shQuote(file.path(dir, "docword.wikipara.txt.gz")), n, shQuote(body)))
    head_file <- tempfile(fileext = ".txt")
    vocab <- file.path(dir, "vocab.wikipara.txt")
    writeLines(as.character(c(n, length(readLines(vocab)), length(readLines(body)))), head_file)
    file.append(head_file, body)
    x <- read_uci_bow(head_file, vocab)
    if (all_terms) return(x)
    used <- tabulate(x$term + 1L, nbins = length(x$vocab)) > 0
    return(sparsevi:::dtm_keep_terms(x, used))
  }
  dir <- file.path(data_dir, name)
  read_uci_bow(file.path(dir, sprintf("docword.%s.txt.gz", name)),
               file.path(dir, sprintf("vocab.%s.txt", name)))
}

# The value of `expr` with the CPU seconds (user + system) and wall seconds
# it took.
cpu_of <- function(expr) {
  t0 <- proc.time()
  v <- force(expr)
  t1 <- proc.time() - t0
  list(value = v, cpu = t1[["user.self"]] + t1[["sys.self"]], wall = t1[["elapsed"]])
}

# K well-separated Gaussian clusters in D dimensions (Kurihara et al.'s
# separation c: the closest means c sqrt(D) apart), N points: list(X, cluster).
# Used by inst/bench/vdp.R and obs-refactor.R.
gen_separated <- function(N, D, c, K = 10, seed = 1) {
  set.seed(seed)
  covs <- lapply(seq_len(K), function(k) {
    A <- matrix(stats::rnorm(D * D), D) / sqrt(D) + diag(D)
    S <- crossprod(A)
    S / max(eigen(S, symmetric = TRUE, only.values = TRUE)$values)
  })
  M <- matrix(stats::rnorm(K * D), K)
  M <- M * (c * sqrt(D)) / min(stats::dist(M))
  cl <- sample.int(K, N, replace = TRUE)
  X <- matrix(0, N, D)
  for (k in seq_len(K)) {
    i <- which(cl == k)
    X[i, ] <- matrix(stats::rnorm(length(i) * D), ncol = D) %*% chol(covs[[k]]) +
      rep(M[k, ], each = length(i))
  }
  list(X = X, cluster = cl)
}

# Runs `code` (lines of R) in a fresh Rscript process with the sparsevi of
# library `lib` attached (first on the library path); the code leaves its
# answer in `result`, which is returned. For A/B runs of two builds.
# In smoke mode (bench-log.R), a child of the build already loaded runs in
# this process (a fresh environment), which is quicker and checks the same
# code.
bench_child <- function(lib, code) {
  if (exists("bench_smoke", mode = "function") && bench_smoke() &&
      identical(normalizePath(lib, mustWork = FALSE),
                normalizePath(dirname(find.package("sparsevi"))))) {
    env <- new.env(parent = globalenv())
    eval(parse(text = code), envir = env)
    return(get("result", envir = env))
  }
  script <- tempfile(fileext = ".R")
  out <- tempfile(fileext = ".rds")
  writeLines(c(sprintf(".libPaths(c(%s, .libPaths()))", deparse(lib)),
               "suppressPackageStartupMessages(library(sparsevi))",
               code,
               sprintf("saveRDS(result, %s)", deparse(out))), script)
  if (nzchar(lib) && !dir.exists(lib)) stop("no library at ", lib)
  if (system2(file.path(R.home("bin"), "Rscript"), script) != 0)
    stop("the child process failed: ", script)
  readRDS(out)
}

# ---- real data of the mixture benchmarks (vdp.R, vdp-prior.R) --------------

# The photographs of ../shared/data/images (sorted by name; the first
# `n_images`), or character(0) when the directory is missing (run from the
# package root).
bench_image_files <- function(n_images = Inf, data_dir = file.path("..", "shared", "data")) {
  files <- sort(list.files(file.path(data_dir, "images"), "\\.pgm$", full.names = TRUE))
  files[seq_len(min(n_images, length(files)))]
}

# size x size patches (stride size, mean kept) of `files`, dequantised:
# (pixel + U(0, 1)) / 256 with the jitter drawn after set.seed(5); 8-bit values
# tie, and without the jitter flat regions give degenerate components.
bench_image_patches <- function(files, size) {
  P <- do.call(rbind, lapply(files, function(f)
    sparsevi::image_patches(sparsevi:::read_pgm(f), size = size, stride = size,
                            remove_mean = FALSE)))
  attributes(P) <- list(dim = dim(P))
  set.seed(5)
  (P + stats::runif(length(P))) / 256
}

# One IDX file (the MNIST format), as a vector (1-D) or a matrix, rows the
# first dimension.
bench_read_idx <- function(path) {
  con <- gzfile(path, "rb")
  on.exit(close(con))
  magic <- readBin(con, "integer", 1L, size = 4L, endian = "big")
  nd <- magic %% 256L
  dims <- readBin(con, "integer", nd, size = 4L, endian = "big")
  v <- readBin(con, "integer", prod(dims), size = 1L, signed = FALSE)
  if (nd == 1L) v else matrix(v, dims[1], prod(dims[-1]), byrow = TRUE)
}

# Fashion-MNIST from the Debian package dataset-fashion-mnist: n_train
# training and n_test test images sampled after set.seed(5), pixels / 255,
# projected on the first `rank` principal components of the training images
# used. list(X = training rows, test = test rows), or NULL when the package
# is not installed.
bench_fashion_pca <- function(rank = 50L, n_train = 10000L, n_test = 2000L) {
  fm_dir <- "/usr/share/datasets/fashion-mnist"
  if (!file.exists(file.path(fm_dir, "train-images-idx3-ubyte.gz"))) return(NULL)
  tr <- bench_read_idx(file.path(fm_dir, "train-images-idx3-ubyte.gz")) / 255
  te <- bench_read_idx(file.path(fm_dir, "t10k-images-idx3-ubyte.gz")) / 255
  set.seed(5)
  itr <- sample.int(nrow(tr), n_train)
  ite <- sample.int(nrow(te), n_test)
  pc <- stats::prcomp(tr[itr, ], rank. = rank)
  list(X = scale(tr[itr, ], pc$center, FALSE) %*% pc$rotation,
       test = scale(te[ite, ], pc$center, FALSE) %*% pc$rotation)
}

# ---- the 22 real data sets of mixture.R's part robust (vdp-prior.R too) ----
# K = NA: Mclust's choice by BIC. mclust (and MASS) must be installed.
robust_sets <- function() {
  # Mclust() calls mclustBIC() unqualified: mclust must be attached
  suppressPackageStartupMessages(library(mclust))
  e <- new.env()
  utils::data(banknote, wdbc, diabetes, thyroid, wreath, EuroUnemployment, package = "mclust",
              envir = e)
  pima <- rbind(MASS::Pima.tr, MASS::Pima.te)
  # K = NA: Mclust's choice by BIC among G = 2:5 (VVV)
  sets <- list(
    # used to choose the defaults (issue 23, first session)
    iris = list(X = iris[, 1:4], y = iris$Species, K = 3),
    faithful = list(X = faithful, y = NULL, K = 2),
    banknote = list(X = e$banknote[, -1], y = e$banknote$Status, K = 2),
    diabetes = list(X = e$diabetes[, -1], y = e$diabetes$class, K = 3),
    thyroid = list(X = e$thyroid[, -1], y = e$thyroid$Diagnosis, K = 3),
    wdbc10 = list(X = e$wdbc[, 3:12], y = e$wdbc$Diagnosis, K = 2),
    wdbc30 = list(X = e$wdbc[, -(1:2)], y = e$wdbc$Diagnosis, K = 2),
    wreath = list(X = e$wreath, y = NULL, K = 14),
    # held out then, used to find the faults fixed in the second session
    # (point estimates, hierarchical start)
    crabs = list(X = MASS::crabs[, 4:8], y = paste(MASS::crabs$sp, MASS::crabs$sex), K = 4),
    USArrests = list(X = USArrests, y = NULL, K = 3),
    swiss = list(X = swiss, y = NULL, K = 3),
    trees = list(X = trees, y = NULL, K = 2),
    quakes = list(X = quakes[, 1:4], y = NULL, K = 3),
    # never used to choose anything (added in the second session)
    pima = list(X = pima[, 1:7], y = pima$type, K = 2),
    geyser = list(X = MASS::geyser, y = NULL, K = NA),
    euro = list(X = e$EuroUnemployment, y = NULL, K = NA),
    state.x77 = list(X = state.x77, y = NULL, K = NA),
    judges = list(X = USJudgeRatings, y = NULL, K = NA),
    rock = list(X = rock, y = NULL, K = NA),
    savings = list(X = LifeCycleSavings, y = NULL, K = NA),
    mtcars6 = list(X = mtcars[, c("mpg", "disp", "hp", "drat", "wt", "qsec")], y = NULL,
                   K = NA),
    attitude = list(X = attitude, y = NULL, K = NA))
  sets
}

# Three equal spherical unit clusters in a row, n rows each in D dimensions,
# centres 0, off and 2 off in every coordinate (off sqrt(D) sd apart), rows
# sorted by cluster; set.seed(seed) first. The case of issue 38 (vdp-prior.R,
# vdp-pairs.R).
bench_three_in_a_row <- function(n, D, off = 3, seed = 1) {
  set.seed(seed)
  matrix(stats::rnorm(3 * n * D), 3 * n) + rep(c(0, off, 2 * off), each = n)
}

# Five row orders of X: as given, reversed, sorted by the first column, that
# reversed, and shuffled (seed 7).
bench_row_orders <- function(X) {
  o <- order(X[, 1])
  set.seed(7)
  list(seq_len(nrow(X)), nrow(X):1, o, rev(o), sample.int(nrow(X)))
}

# The first n Wikipedia paragraphs with all their terms, as
# bench_corpus("wikipara<n>", all_terms = TRUE) reads them, kept between
# runs in SPARSEVI_BENCH_SMALL_RDS (default: a file of the session's
# temporary directory).
bench_wikipara_kept <- function(n) {
  rds <- Sys.getenv("SPARSEVI_BENCH_SMALL_RDS", file.path(tempdir(), sprintf("wikipara-%d.rds", n)))
  if (!file.exists(rds)) {
    saveRDS(bench_corpus(sprintf("wikipara%d", n), bench_data_dir(), all_terms = TRUE), rds,
            compress = FALSE)
  }
  readRDS(rds)
}
