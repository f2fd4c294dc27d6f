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
