# Benchmark of the "gibbs" engine (Mimno, Hoffman & Blei 2012): run from the
# package root with `nice -n 10 Rscript inst/bench/gibbs.R` after installing
# the package (set R_LIBS to the library you installed it in). Writes
# inst/bench/results/gibbs.txt.
#
# 1. Seconds per minibatch of 100 documents against K (the paper's Fig. 1):
#    the hybrid against our dense online VB (local "vb" with L = K), on
#    nips_f20. Online VB runs as many coordinate-ascent iterations as the
#    hybrid runs Gibbs sweeps (the paper's set-up), B + S = 5.
# 2. K = 200 on nips_f20 (and a wikipara subset): per-topic UMass coherence
#    and left-to-right held-out log probability, hybrid against online VB
#    after the same number of documents (the paper's Fig. 2).
# 3. Coherence of the hybrid for eta in {0.1, ..., 0.6}.
#
# Sizes are reduced from the paper's (its corpora have 350,000 articles and
# 1.2 million books) to finish in about 15-20 minutes on one core: see the
# settings below and the notes printed into the results file.

suppressPackageStartupMessages(library(sparsevi))
ns <- asNamespace("sparsevi")
data_dir <- Sys.getenv("SPARSEVI_DATA", file.path("..", "shared", "data"))
if (!dir.exists(data_dir)) data_dir <- "/work/shared/data"
out_file <- file.path("inst", "bench", "results", "gibbs.txt")
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
quick <- nzchar(Sys.getenv("SPARSEVI_BENCH_QUICK"))
lines <- character(0)
say <- function(...) {
  txt <- sprintf(...)
  cat(txt, "\n", sep = "")
  lines <<- c(lines, txt)
  writeLines(lines, out_file)
}

# UCI bag-of-words reader (only the first max_docs documents).
read_bow <- function(name, max_docs = Inf) {
  path <- file.path(data_dir, name, sprintf("docword.%s.txt.gz", name))
  con <- gzfile(path, "r")
  on.exit(close(con))
  hdr <- as.integer(readLines(con, 3L))
  if (is.finite(max_docs)) {
    chunks <- list()
    repeat {
      tab <- utils::read.table(con, nrows = 200000L, colClasses = c("integer",
                               "integer", "numeric"))
      chunks[[length(chunks) + 1L]] <- tab[tab[[1]] <= max_docs, ]
      if (nrow(tab) < 200000L || tab[[1]][nrow(tab)] > max_docs) break
    }
    tab <- do.call(rbind, chunks)
  } else {
    tab <- utils::read.table(con, colClasses = c("integer", "integer", "numeric"))
  }
  vocab <- readLines(file.path(data_dir, name, sprintf("vocab.%s.txt", name)))
  D <- min(hdr[1], max_docs)
  m <- Matrix::sparseMatrix(i = tab[[1]], j = tab[[2]], x = tab[[3]],
                            dims = c(D, hdr[2]),
                            dimnames = list(paste0("d", seq_len(D)), vocab))
  keep <- Matrix::colSums(m) > 0
  as_dtm(m[Matrix::rowSums(m) > 0, keep])
}

threads <- 1L
say("sparsevi gibbs benchmark, %s, R %s, threads = %d%s", format(Sys.time()),
    getRversion(), threads, if (quick) " (QUICK mode)" else "")

# ---------------------------------------------------------------------------
# 1. seconds per minibatch of 100 documents
# ---------------------------------------------------------------------------
nips <- read_bow("nips_f20")
say("\n## 1. Seconds per minibatch of 100 documents (nips_f20: D = %d, V = %d)",
    nrow(nips), ncol(nips))
say("warm-up minibatches then the mean of the timed ones; local + global step")

time_engine <- function(local, K, warm, timed, eta = 0.3, alpha = 0.1) {
  fit_args <- list(nips, K = K, local = local, global = "stochastic",
                   alpha = alpha, eta = eta, batch_size = 100L, passes = 1L,
                   seed = 1, threads = threads, progress = FALSE)
  if (local == "gibbs") fit_args <- c(fit_args, list(burnin = 3L, samples = 2L))
  if (local == "vb") fit_args <- c(fit_args, list(L = K, max_iter = 5L, restarts = FALSE))
  # a run over warm + timed minibatches; per-minibatch times from the trace
  sub <- nips[seq_len(100L * (warm + timed)), ]
  fit_args[[1]] <- sub
  fit <- do.call(fit_lda, c(fit_args, list(trace_every = "batch")))
  secs <- diff(c(0, fit$trace$seconds))
  mean(utils::tail(secs, timed))
}

Ks <- c(100, 500, 1000, 2000)
res1 <- data.frame(K = Ks, hybrid = NA_real_, online_vb = NA_real_)
for (i in seq_along(Ks)) {
  K <- Ks[i]
  res1$hybrid[i] <- time_engine("gibbs", K, warm = 4, timed = if (quick) 2 else 4)
  res1$online_vb[i] <- time_engine("vb", K, warm = 1, timed = if (quick) 1 else 2)
  say("K = %4d  hybrid %.3f s  online VB %.3f s  (VB / hybrid %.1fx)", K,
      res1$hybrid[i], res1$online_vb[i], res1$online_vb[i] / res1$hybrid[i])
}
say("hybrid K=2000 / K=1000: %.2f (target <= 2); online VB K=2000 / K=1000: %.2f",
    res1$hybrid[4] / res1$hybrid[3], res1$online_vb[4] / res1$online_vb[3])
