# Benchmark of L-sparse LDA (issue 3; Hughes & Sudderth). Run from the
# package root:  nice -n 10 Rscript inst/bench/lda-sparse.R
# Parts (env SPARSEVI_BENCH_PARTS, default "1234"):
#  1. local-step time vs L and K on nips_f20, with topics from a short fit;
#     L1 distance of L-sparse document-topic proportions from dense ones
#  2. held-out score vs training seconds, memoized and stochastic, L in {1, 8, K}
#  3. peers (scikit-learn online/batch, gensim, text2vec WarpLDA, topicmodels
#     VEM) on kos, same split, same held-out evaluator (ours)
#  4. restart proposals: acceptance rate and objective gained
#  6. (not in the default) restarts at fixed topics: local ELBO part with and
#     without restart proposals
#  7. (not in the default) restarts and the trained model: the vb default
#     call (K = 100, memoized, L = 8) with restart proposals in every lap, in
#     the first lap only, and never, on four corpora: final ELBO per token,
#     held-out score (our document completion, 10% of documents) and CPU
#     (env SPARSEVI_BENCH_RESTART_CORPORA, default kos,sotu_chunks,nips_f20,spamassassin)
#  8. (not in the default) Hughes & Sudderth Fig. 4 at large K: held-out
#     score vs CPU seconds of training on nips_f20 (part 2's split), vb
#     memoized and stochastic, restarts on, every lap run, for each L and
#     prior pair; per (K, global, priors) each L's best, the dense plateau,
#     the seconds to within 0.005 of it and the ratio to dense's seconds
#  5. (not in the default) alpha/eta sweep on a validation split carved out of
#     the training documents (env SPARSEVI_BENCH_SWEEP_CORPORA, _ALPHA, _ETA,
#     _LAPS; a corpus "wikipara20000" = the first 20,000 paragraphs)
# Writes inst/bench/results/lda-sparse.txt (or SPARSEVI_BENCH_OUT); every
# fit names its engine, global step, start, priors and schedule, and each
# section's header gives the commit, the command and the settings that ran
# (read back from the fits). Smoke mode (SPARSEVI_BENCH_SMOKE=1): every part
# on small simulated corpora, no peers, results in a temporary directory.
# Options (environment):
#  SPARSEVI_BENCH_PART2_CORPUS  part 2 corpus: nips_f20 (default) or wikipara
#  SPARSEVI_BENCH_WIKI_DOCS     wikipara: use the first N + 1,000 paragraphs,
#                               1,000 of them held out (default 50000); "all"
#                               reads the whole corpus
#  SPARSEVI_BENCH_SVI_BATCH     stochastic batch size in parts 2 and 8 (default 100)
#  SPARSEVI_BENCH_PART2_GLOBAL  part 2 global steps (default memoized,stochastic)
#  SPARSEVI_BENCH_PART2_L       part 2 values of L (default 1,8,100; must hold 100)
#  SPARSEVI_BENCH_PASSES        part 2 laps (default 6)
#  SPARSEVI_BENCH_FIG4_K       part 8 values of K (default 400,800)
#  SPARSEVI_BENCH_FIG4_L       part 8 values of L, "K" for dense (default
#                              1,4,8,16,K; dense always runs)
#  SPARSEVI_BENCH_FIG4_PRIORS  part 8 alpha/eta pairs (default 0.1/0.01,0.5/0.1:
#                              vb's defaults and the authors' code's)
#  SPARSEVI_BENCH_FIG4_GLOBAL  part 8 global steps (default memoized,stochastic)
#  SPARSEVI_BENCH_FIG4_LAPS    part 8 laps, all run (default 6)
#  SPARSEVI_BENCH_FIG4_MEMO_BATCHES  part 8 memoized batches (default 10);
#                              stochastic batch size: SPARSEVI_BENCH_SVI_BATCH
#  SPARSEVI_BENCH_FIG4_EVERY   part 8: also score within each lap, every this
#                              many batches (fit_lda(heldout_every = )); the
#                              curves and the reach then use every score
#                              (default 0: lap ends only)
#  SPARSEVI_BENCH_PEER_CORPUS   part 3 corpus: kos (default) or nips_f20
#  SPARSEVI_BENCH_VEM_EM        topicmodels VEM EM iterations (default 10)
#  SPARSEVI_BENCH_OURS          part 3 sparsevi fits, comma-separated among
#                               memoized8, memoized, stochastic8, batch, batch8
#                               (default all five)
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()
data_dir <- if (!smoke) normalizePath(bench_data_dir())
parts <- strsplit(Sys.getenv("SPARSEVI_BENCH_PARTS", if (smoke) "12345678" else "1234"), "")[[1]]
out_file <- bench_out("lda-sparse.txt")
# appends (earlier results stay for comparison); SPARSEVI_BENCH_APPEND=0 starts the file afresh
say <- bench_logger(out_file, append = Sys.getenv("SPARSEVI_BENCH_APPEND", "1") != "0")
# The settings every vb fit here names (never a default that may change):
# vb's priors, Bregman k-means++ start, the stochastic schedule (read by the
# stochastic global step only).
vb_alpha <- 0.1
vb_eta <- 0.01
vb_tau <- 1
vb_kappa <- 0.6
cpu <- function(expr) {
  t <- system.time(val <- force(expr))
  list(value = val, user = t[["user.self"]] + t[["user.child"]], elapsed = t[["elapsed"]])
}

# Training seconds of a trace: CPU seconds of training when fit_lda records
# them (steady on a shared machine; evaluation excluded), else wall seconds.
tsec <- function(tr) if (!is.null(tr$cpu_seconds)) tr$cpu_seconds else tr$seconds
tsec_label <- function(tr) if (!is.null(tr$cpu_seconds)) "CPU" else "wall"

read_corpus <- function(name) {
  if (smoke) return(bench_sim_corpus(D = 80, V = 50, K = 4, seed = 1))
  dir <- file.path(data_dir, name)
  docword <- file.path(dir, sprintf("docword.%s.txt.gz", name))
  vocab <- file.path(dir, sprintf("vocab.%s.txt", name))
  reader <- get0("read_uci_bow", envir = asNamespace("sparsevi"), mode = "function")
  if (!is.null(reader)) return(reader(docword, vocab))
  con <- gzfile(docword)
  on.exit(close(con))
  tab <- scan(con, what = list(0L, 0L, 0), skip = 3, quiet = TRUE)
  v <- readLines(vocab)
  as_dtm(Matrix::sparseMatrix(i = tab[[1]], j = tab[[2]], x = tab[[3]],
                              dims = c(max(tab[[1]]), length(v)), dimnames = list(NULL, v)))
}

# The first n documents of a UCI corpus (documents listed in increasing order),
# read with read_uci_bow() from a truncated copy, the vocabulary restricted to
# the terms these documents use.
read_corpus_head <- function(name, n) {
  if (smoke) return(bench_sim_corpus(D = 80, V = 50, K = 4, seed = 2))
  dir <- file.path(data_dir, name)
  docword <- file.path(dir, sprintf("docword.%s.txt.gz", name))
  vocab <- file.path(dir, sprintf("vocab.%s.txt", name))
  body <- tempfile("head-body-")
  status <- system(sprintf("gzip -dc %s | awk 'NR <= 3 { next } $1 > %d { exit } { print }' > %s",
                           shQuote(docword), as.integer(n), shQuote(body)))
  if (status != 0) stop("could not extract the first documents of ", name)
  nnz <- as.numeric(strsplit(trimws(system(sprintf("wc -l < %s", shQuote(body)), intern = TRUE)), " ")[[1]][1])
  head_file <- tempfile("head-", fileext = ".txt")
  writeLines(c(as.character(n), as.character(length(readLines(vocab))), as.character(nnz)),
             head_file)
  file.append(head_file, body)
  x <- read_uci_bow(head_file, vocab)
  unlink(c(body, head_file))
  used <- tabulate(x$term + 1L, nbins = length(x$vocab)) > 0
  sparsevi:::dtm_keep_terms(x, used)
}

theta_of <- function(res, alpha) {
  N <- t(res$doc_topic)
  (N + alpha) / (rowSums(N) + ncol(N) * alpha)
}

bench_header(say, sprintf("sparsevi LDA benchmark (inst/bench/lda-sparse.R), parts %s; host %s; threads = 1 unless said",
                           paste(parts, collapse = ""), Sys.info()[["nodename"]]))
say("load average at start: %s", paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
say("times are CPU seconds of this process (user), the machine being shared; wall seconds in brackets")

nips <- read_corpus("nips_f20")
say("nips_f20: %d documents, %d terms, %d tokens", nrow(nips), ncol(nips), sum(nips$count))

## ---- 1. local step vs L and K -------------------------------------------
if ("1" %in% parts) {
  Ks <- as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_K", if (smoke) "4,12" else "100,400,800"), ",")[[1]])
  n_docs <- as.integer(Sys.getenv("SPARSEVI_BENCH_DOCS", if (smoke) "30" else "300"))
  docs <- nips[seq_len(n_docs), ]
  say("")
  say("== 1. local step time (one pass, no restarts) over the same %d nips_f20 documents (%d tokens)",
      n_docs, sum(docs$count))
  for (K in Ks) {
    # the topics: memoized L-sparse VB (Hughes & Sudderth's own learner),
    # every setting named
    tr <- cpu(fit_lda(nips, K = K, local = "vb", global = "memoized", L = min(8L, K),
                      alpha = vb_alpha, eta = vb_eta, init = "bregman", tau = vb_tau,
                      kappa = vb_kappa, passes = 2, restarts = FALSE, seed = 1,
                      threads = 1, progress = FALSE))
    fit <- tr$value
    if (fit$local != "vb" || fit$global != "memoized") stop("part 1 must time vb's local step on vb's topics")
    say("K = %d: topics from a 2-lap memoized vb L = 8 fit (%.0f s)", K, tr$user)
    bench_header(say, fits = stats::setNames(list(fit), sprintf("part 1 topics, K = %d", K)))
    ctl <- sparsevi:::lda_vb_control(list(alpha = fit$alpha))
    res <- list()
    times <- c()
    for (L in unique(c(1, 2, 4, min(8, K), 16, K))) {
      if (L > K) next
      r <- cpu(sparsevi:::lda_vb_call(docs, fit$lambda, 0L, ctl, 1L, L = L, restarts = FALSE))
      res[[as.character(L)]] <- r$value
      times[as.character(L)] <- r$user
      say("  L = %4d: %7.2f s [%6.2f]  mean iterations %.1f  tokens/s %s", L, r$user,
          r$elapsed, mean(r$value$iters), format(round(sum(docs$count) / r$user), big.mark = ","))
    }
    dense <- theta_of(res[[as.character(K)]], fit$alpha)
    for (L in unique(c(1, min(8, K)))) {
      th <- theta_of(res[[as.character(L)]], fit$alpha)
      say("  mean L1 distance of L = %d document-topic proportions from dense: %.4f", L,
          mean(rowSums(abs(th - dense))))
    }
    say("  speed-up of L = 8 over dense: %.2fx; of L = 1: %.2fx",
        times[as.character(K)] / times[as.character(min(8, K))], times[as.character(K)] / times["1"])
    # Hughes & Sudderth Fig. 3b at the defaults: the whole local step as
    # training runs it, restart proposals included (restart_max 4,
    # restart_iter 10), L = 8 against the dense product-form step (L = K,
    # the same proposals), best of 3 CPU times each, interleaved
    best <- c(sparse = Inf, dense = Inf)
    for (rep in 1:3) {
      for (L in unique(c(min(8L, K), K))) {
        r <- cpu(sparsevi:::lda_vb_call(docs, fit$lambda, 0L, ctl, 1L, L = L, restarts = TRUE))
        nm <- if (L == K) "dense" else "sparse"
        best[nm] <- min(best[nm], r$user)
      }
    }
    say("  Fig. 3b, restarts included (best of 3): L = 8 %.2f s, dense %.2f s: speed-up %.2fx",
        best["sparse"], best["dense"], best["dense"] / best["sparse"])
    if (K == 100 && !smoke) {
      r <- cpu(sparsevi:::lda_vb_call(nips, fit$lambda, 0L, ctl, 1L, L = 8, restarts = FALSE))
      say("  K = 100, L = 8, all %d documents, one core: %.2f s, %s tokens/s per pass",
          nrow(nips), r$user, format(round(sum(nips$count) / r$user), big.mark = ","))
      r <- cpu(sparsevi:::lda_vb_call(nips, fit$lambda, 0L, ctl, 1L, L = 8, restarts = TRUE))
      say("  ... with restart proposals: %.2f s, %s tokens/s per pass", r$user,
          format(round(sum(nips$count) / r$user), big.mark = ","))
    }
  }
}

## ---- 2. held-out score vs seconds ---------------------------------------
if ("2" %in% parts) {
  K <- if (smoke) 8L else 100L
  passes <- as.integer(Sys.getenv("SPARSEVI_BENCH_PASSES", if (smoke) "2" else "6"))
  corpus2 <- Sys.getenv("SPARSEVI_BENCH_PART2_CORPUS", "nips_f20")
  svi_batch <- as.integer(Sys.getenv("SPARSEVI_BENCH_SVI_BATCH", if (smoke) "20" else "100"))
  say("")
  if (corpus2 == "nips_f20") {
    sp <- split_heldout(nips, test_frac = 0.1, seed = 1)
    note2 <- ""
  } else {
    n_wiki <- Sys.getenv("SPARSEVI_BENCH_WIKI_DOCS", "50000")
    t_read <- cpu({
      x2 <- if (n_wiki == "all") read_corpus(corpus2) else
        read_corpus_head(corpus2, as.integer(n_wiki) + 1000L)
      x2
    })
    sp <- split_heldout(x2, n_test = 1000L, seed = 1)
    note2 <- sprintf(" (%s: %s; %d terms used by these documents, %s tokens; read in %.0f s)",
                     corpus2, if (n_wiki == "all") "all documents" else
                       sprintf("first %d paragraphs of 615,012, 1,000 held out at random", nrow(x2)),
                     ncol(x2), format(sum(x2$count), big.mark = ","), t_read$elapsed)
    rm(x2)
  }
  say("== 2. held-out log-likelihood per token (document completion) vs training seconds, %s, K = %d, %d laps, %d train / %d test documents, stochastic batch size %d%s",
      corpus2, K, passes, nrow(sp$train), nrow(sp$test$observed), svi_batch, note2)
  runs <- list()
  globals2 <- strsplit(Sys.getenv("SPARSEVI_BENCH_PART2_GLOBAL", "memoized,stochastic"), ",")[[1]]
  Ls2 <- unique(as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_PART2_L", sprintf("1,8,%d", K)), ",")[[1]]))
  for (g in globals2) {
    for (L in Ls2) {
      fit <- fit_lda(sp$train, K = K, local = "vb", L = L, global = g, alpha = vb_alpha,
                     eta = vb_eta, init = "bregman", tau = vb_tau, kappa = vb_kappa,
                     restarts = TRUE, passes = passes, seed = 1,
                     threads = 1, progress = FALSE, heldout = sp$test,
                     batch_size = if (g == "stochastic") svi_batch else NULL)
      key <- sprintf("%s L=%d", g, L)
      bench_header(say, fits = stats::setNames(list(fit), sprintf("part 2 vb %s", key)))
      runs[[key]] <- fit$trace
      say("  %-16s seconds: %s", key, paste(sprintf("%.1f", tsec(fit$trace)), collapse = " "))
      say("  %-16s heldout: %s", key, paste(sprintf("%.4f", fit$trace$heldout), collapse = " "))
    }
    dense <- runs[[sprintf("%s L=%d", g, K)]]
    plateau <- max(dense$heldout)
    t_dense <- tsec(dense)[which(dense$heldout >= plateau - 0.005)[1]]
    for (L in setdiff(Ls2, K)) {
      tr <- runs[[sprintf("%s L=%d", g, L)]]
      hit <- which(tr$heldout >= plateau - 0.005)[1]
      say("  %s: L = %d best %.4f vs dense %.4f; reaches dense plateau (-0.005) at %s s vs dense %.1f s%s",
          g, L, max(tr$heldout), plateau,
          if (is.na(hit)) "never" else sprintf("%.1f", tsec(tr)[hit]), t_dense,
          if (is.na(hit)) "" else sprintf(" (%.1fx sooner)", t_dense / tsec(tr)[hit]))
    }
  }
  say("  (seconds are the %s seconds of training recorded by fit_lda; evaluation excluded)",
      tsec_label(dense))
}

## ---- 3. peers --------------------------------------------------------------
if ("3" %in% parts) {
  K <- if (smoke) 8L else 100L
  has_peers <- bench_use_peers()
  corpus_name <- Sys.getenv("SPARSEVI_BENCH_PEER_CORPUS", "kos")
  x <- if (corpus_name == "nips_f20") nips else read_corpus(corpus_name)
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  train <- sp$train
  say("")
  say("== 3. peers on %s (%d train / %d test documents), K = %d; every topic-word matrix scored by sparsevi's completion evaluator",
      corpus_name, nrow(train), nrow(sp$test$observed), K)
  results <- data.frame(system = character(0), seconds = numeric(0), heldout = numeric(0))
  # every topic-word matrix is scored twice by the same evaluator: with the
  # document-topic prior alpha of its own model (ours: fit$alpha; scikit-learn
  # 1/K; gensim its alpha; WarpLDA 0.1; topicmodels 0.5), and with common
  # alphas shared by every system
  common_alpha <- as.numeric(strsplit(Sys.getenv("SPARSEVI_BENCH_EVAL_ALPHA", "0.01,0.1,0.5"), ",")[[1]])
  say("  columns: seconds, held-out with the system's own alpha [its alpha]; then held-out with the common alphas %s",
      paste(common_alpha, collapse = ", "))
  add <- function(system, seconds, heldout, tw = NULL, alpha = NA) {
    results[nrow(results) + 1L, ] <<- list(system, seconds, heldout)
    common <- if (is.null(tw)) "" else paste(vapply(common_alpha, function(a)
      sprintf("%.4f", sparsevi:::completion_score(tw, a, sp$test)), ""), collapse = " ")
    say("  %-34s %8.1f s  held-out %.4f [%-6g]  common: %s", system, seconds, heldout, alpha, common)
  }
  # ours
  ours_cfgs <- list(memoized8 = list(g = "memoized", L = 8L), memoized = list(g = "memoized", L = K),
                    stochastic8 = list(g = "stochastic", L = 8L),
                    batch = list(g = "batch", L = K, alpha = 0.01, eta = 0.01),
                    batch8 = list(g = "batch", L = 8L, alpha = 0.01, eta = 0.01))
  if (smoke) ours_cfgs <- ours_cfgs[c("memoized8", "batch8")]
  ours_sel <- strsplit(Sys.getenv("SPARSEVI_BENCH_OURS", paste(names(ours_cfgs), collapse = ",")),
                       ",")[[1]]
  vem_em <- as.integer(Sys.getenv("SPARSEVI_BENCH_VEM_EM", "10"))
  ours_traces <- list()
  for (nm in intersect(names(ours_cfgs), ours_sel)) {
    cfg <- ours_cfgs[[nm]]
    tf <- cpu(fit_lda(train, K = K, local = "vb", L = cfg$L, global = cfg$g,
                      passes = if (smoke) 2 else 10, seed = 1,
                      threads = 1, progress = FALSE, heldout = sp$test,
                      alpha = if (is.null(cfg$alpha)) vb_alpha else cfg$alpha,
                      eta = if (is.null(cfg$eta)) vb_eta else cfg$eta, init = "bregman",
                      tau = vb_tau, kappa = vb_kappa, restarts = TRUE,
                      batch_size = if (cfg$g == "stochastic") 100 else NULL))
    fit <- tf$value
    bench_header(say, fits = stats::setNames(list(fit), sprintf("part 3 %s", nm)))
    add(sprintf("sparsevi %s L=%d%s (10 laps)", cfg$g, cfg$L,
                if (is.null(cfg$alpha)) "" else " alpha=eta=0.01"),
        max(tsec(fit$trace)), max(fit$trace$heldout), fit$topic_word, fit$alpha)
    say("    held-out by lap: %s", paste(sprintf("%.4f", fit$trace$heldout), collapse = " "))
    say("    %s seconds of training by lap: %s; wall: %s; CPU seconds of the whole call %.1f (held-out evaluation of every lap included); alpha %g, eta %g",
        tsec_label(fit$trace), paste(sprintf("%.1f", tsec(fit$trace)), collapse = " "),
        paste(sprintf("%.1f", fit$trace$seconds), collapse = " "), tf$user, fit$alpha, fit$eta)
    if (cfg$L == 8L) ours_traces[[sprintf("%s L=8%s", cfg$g, if (is.null(cfg$alpha)) "" else
      " alpha=eta=0.01")]] <- fit$trace
  }
  if (smoke || Sys.getenv("SPARSEVI_BENCH_PEERS", "1") == "0") {
    say("  (peers skipped: %s)", if (smoke) "smoke mode" else "SPARSEVI_BENCH_PEERS=0")
  } else {
  # export for python: UCI-like docword (1-based) and vocab
  tmp <- tempfile("lda-peers-")
  dir.create(tmp)
  D <- nrow(train)
  doc_of <- rep.int(seq_len(D), diff(train$doc_ptr))
  utils::write.table(data.frame(doc_of, train$term + 1L, as.integer(train$count)),
                     file.path(tmp, "docword.txt"), row.names = FALSE, col.names = FALSE)
  writeLines(train$vocab, file.path(tmp, "vocab.txt"))
  py <- file.path(tmp, "peers.py")
  writeLines(c(
    "import sys, time, numpy as np, scipy.sparse as sps",
    "d = np.loadtxt(sys.argv[1] + '/docword.txt', dtype=np.int64)",
    "V = sum(1 for _ in open(sys.argv[1] + '/vocab.txt'))",
    "D = d[:, 0].max()",
    "X = sps.csr_matrix((d[:, 2].astype(float), (d[:, 0] - 1, d[:, 1] - 1)), shape=(D, V))",
    "K = int(sys.argv[2]); which = sys.argv[3]",
    "if which in ('sk_online', 'sk_batch'):",
    "    from sklearn.decomposition import LatentDirichletAllocation",
    "    m = LatentDirichletAllocation(n_components=K, learning_method=which[3:], max_iter=10, batch_size=128, random_state=1, n_jobs=1)",
    "    t = time.process_time(); m.fit(X); el = time.process_time() - t",
    "    tw = m.components_ / m.components_.sum(axis=1, keepdims=True)",
    "    alpha = 1.0 / K",
    "else:",
    "    from gensim.models import LdaModel",
    "    from gensim.matutils import Sparse2Corpus",
    "    corpus = list(Sparse2Corpus(X, documents_columns=False))",
    "    t = time.process_time()",
    "    m = LdaModel(corpus, num_topics=K, passes=10, chunksize=2000, random_state=1, id2word={i: str(i) for i in range(V)})",
    "    el = time.process_time() - t",
    "    tw = m.get_topics(); alpha = float(np.mean(m.alpha))",
    "np.savetxt(sys.argv[1] + '/tw_' + which + '.txt', tw)",
    "print(el, alpha)"), py)
  env <- c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
  for (which in c("sk_online", "sk_batch", "gensim")) {
    outp <- tryCatch(system2("/usr/bin/python3", c(py, tmp, K, which), stdout = TRUE,
                             stderr = FALSE, env = env), error = function(e) NULL)
    if (is.null(outp) || !length(outp)) {
      say("  %-34s failed or absent", which)
      next
    }
    vals <- as.numeric(strsplit(utils::tail(outp, 1), " ")[[1]])
    tw <- as.matrix(utils::read.table(file.path(tmp, sprintf("tw_%s.txt", which))))
    colnames(tw) <- train$vocab
    label <- c(sk_online = "scikit-learn online (10 epochs)", sk_batch = "scikit-learn batch (10 iter)",
               gensim = "gensim LdaModel (10 passes)")[[which]]
    add(label, vals[1], sparsevi:::completion_score(tw, vals[2], sp$test), tw, vals[2])
  }
  if (requireNamespace("text2vec", quietly = TRUE)) {
    m <- as_dgCMatrix(train)
    mdl <- text2vec::LDA$new(n_topics = K, doc_topic_prior = 0.1, topic_word_prior = 0.01)
    t <- cpu(suppressMessages(mdl$fit_transform(m, n_iter = 200, convergence_tol = -1,
                                                 progress = FALSE)))
    # topic_word_distribution is the normalised sample counts without the
    # prior (most entries exactly zero); score it as it comes and, fairer,
    # smoothed with the topic-word prior: (counts + 0.01) / row sums
    tw <- mdl$topic_word_distribution
    tw <- tw[, match(train$vocab, colnames(tw))]
    colnames(tw) <- train$vocab
    add("text2vec WarpLDA (200 iter), raw", t$user, sparsevi:::completion_score(tw, 0.1, sp$test), tw, 0.1)
    cc <- mdl$components
    cc <- cc[, match(train$vocab, colnames(cc))] + 0.01
    tw <- cc / rowSums(cc)
    colnames(tw) <- train$vocab
    add("text2vec WarpLDA (200 iter), +prior", t$user, sparsevi:::completion_score(tw, 0.1, sp$test), tw, 0.1)
  } else {
    say("  text2vec not installed: WarpLDA skipped")
  }
  if (requireNamespace("topicmodels", quietly = TRUE) && requireNamespace("slam", quietly = TRUE)) {
    m <- as_dgCMatrix(train)
    mt <- methods::as(m, "TsparseMatrix")
    stm <- slam::simple_triplet_matrix(mt@i + 1L, mt@j + 1L, as.integer(mt@x), nrow(mt), ncol(mt),
                                       dimnames = list(NULL, train$vocab))
    t <- cpu(topicmodels::LDA(stm, k = K, method = "VEM",
                              control = list(seed = 1, estimate.alpha = FALSE, alpha = 0.5,
                                             em = list(iter.max = vem_em), var = list(iter.max = 20))))
    tw <- exp(t$value@beta)
    colnames(tw) <- train$vocab
    add(sprintf("topicmodels VEM (%d EM iterations)", vem_em), t$user, sparsevi:::completion_score(tw, 0.5, sp$test), tw, 0.5)
  } else {
    say("  topicmodels or slam not installed: VEM skipped")
  }
  }
  peers <- results[!grepl("^sparsevi", results$system), ]
  # peers measured by an earlier run (same split and evaluator), given as
  # "system;seconds;heldout" in SPARSEVI_BENCH_PEER_BEST
  pb <- Sys.getenv("SPARSEVI_BENCH_PEER_BEST")
  if (!nrow(peers) && nzchar(pb)) {
    f <- strsplit(pb, ";")[[1]]
    peers <- data.frame(system = paste(f[1], "(from an earlier run)"), seconds = as.numeric(f[2]),
                        heldout = as.numeric(f[3]))
  }
  if (nrow(peers) && length(ours_traces)) {
    best <- peers[which.max(peers$heldout), ]
    say("  best peer: %s, %.4f in %.1f s", best$system, best$heldout, best$seconds)
    for (nm in names(ours_traces)) {
      tr <- ours_traces[[nm]]
      hit <- which(tr$heldout >= best$heldout)[1]
      say("  sparsevi %s reaches it %s", nm, if (is.na(hit)) "not within 10 laps" else
        sprintf("after %.1f %s s of training (lap %d): %.1fx less time than that peer",
                tsec(tr)[hit], tsec_label(tr), hit, best$seconds / tsec(tr)[hit]))
    }
    say("  (peer seconds: CPU time of the fit, one thread; ours: %s seconds of training, evaluation excluded)",
        tsec_label(ours_traces[[1]]))
  }
}

## ---- 4. restarts ------------------------------------------------------------
if ("4" %in% parts) {
  kos <- read_corpus("kos")
  say("")
  # the default alpha, and the former default 0.5 for comparison: restarts
  # remove a topic from a document, which pays only when the prior favours
  # few topics per document (small alpha)
  alphas4 <- Sys.getenv("SPARSEVI_BENCH_RESTART_ALPHA", "default,0.5")
  alphas4 <- strsplit(alphas4, ",")[[1]]
  K4 <- if (smoke) 6L else 50L
  say("== 4. restart proposals: kos, K = %d, vb memoized, %d laps, same seed; alpha: %s (\"default\" = %g, named in the call)",
      K4, if (smoke) 2L else 6L, paste(alphas4, collapse = ", "), vb_alpha)
  for (a4 in alphas4) for (L in unique(c(min(8L, K4), K4))) {
    a <- if (a4 == "default") vb_alpha else as.numeric(a4)
    on <- fit_lda(kos, K = K4, local = "vb", global = "memoized", L = L, alpha = a,
                  eta = vb_eta, init = "bregman", passes = if (smoke) 2 else 6, seed = 1,
                  restarts = TRUE, progress = FALSE, threads = 1)
    off <- fit_lda(kos, K = K4, local = "vb", global = "memoized", L = L, alpha = a,
                   eta = vb_eta, init = "bregman", passes = if (smoke) 2 else 6, seed = 1,
                   restarts = FALSE, progress = FALSE, threads = 1)
    bench_header(say, fits = stats::setNames(list(on, off), sprintf("part 4 alpha %g L %d restarts %s",
                                                                   a, L, c("on", "off"))))
    say("  alpha = %g, L = %d: acceptance rate per lap %s; final ELBO with restarts %.1f, without %.1f (gain %.1f, %.4f per token); seconds %.1f vs %.1f",
        on$alpha, L, paste(sprintf("%.3f", on$trace$restart_accept), collapse = " "),
        utils::tail(on$trace$objective, 1), utils::tail(off$trace$objective, 1),
        utils::tail(on$trace$objective, 1) - utils::tail(off$trace$objective, 1),
        (utils::tail(on$trace$objective, 1) - utils::tail(off$trace$objective, 1)) / sum(kos$count),
        max(tsec(on$trace)), max(tsec(off$trace)))
  }
}

## ---- 5. prior sweep on a validation split of the TRAINING documents ----------
# The test split of part 3 (split_heldout(x, test_frac = 0.1, seed = 1)) is
# never used here: its training documents are split again (seed = 2) into a
# fitting part and a validation part; each (alpha, eta) is fitted on the
# fitting part and scored on the validation part (completion evaluator, with
# the alpha of the fit), every lap.
if ("5" %in% parts) {
  K <- if (smoke) 8L else 100L
  corpora5 <- strsplit(Sys.getenv("SPARSEVI_BENCH_SWEEP_CORPORA", "kos,nips_f20"), ",")[[1]]
  alphas <- as.numeric(strsplit(Sys.getenv("SPARSEVI_BENCH_SWEEP_ALPHA", if (smoke) "0.1" else "0.01,0.05,0.1,0.5"), ",")[[1]])
  etas <- as.numeric(strsplit(Sys.getenv("SPARSEVI_BENCH_SWEEP_ETA", if (smoke) "0.01" else "0.01,0.05,0.1"), ",")[[1]])
  laps5 <- as.integer(Sys.getenv("SPARSEVI_BENCH_SWEEP_LAPS", if (smoke) "2" else "10"))
  if (smoke) corpora5 <- corpora5[1]
  for (cn in corpora5) {
    x5 <- if (cn == "nips_f20") nips else if (grepl("^wikipara", cn))
      read_corpus_head("wikipara", as.integer(sub("wikipara", "", cn))) else read_corpus(cn)
    tr5 <- split_heldout(x5, test_frac = 0.1, seed = 1)$train
    sv <- split_heldout(tr5, test_frac = 0.1, seed = 2)
    say("")
    say("== 5. prior sweep, %s: vb memoized L = 8, restarts on, K = %d, %d laps; fitted on %d, validated on %d of the %d training documents (test split untouched)",
        cn, K, laps5, nrow(sv$train), nrow(sv$test$observed), nrow(tr5))
    say("  %-6s %-6s %8s %8s %5s %8s  %s", "alpha", "eta", "best", "final", "lap", "seconds", "validation score by lap")
    for (a in alphas) for (e in etas) {
      fit <- fit_lda(sv$train, K = K, local = "vb", global = "memoized", L = 8, alpha = a,
                     eta = e, init = "bregman", restarts = TRUE, passes = laps5, seed = 1,
                     threads = 1, progress = FALSE, heldout = sv$test)
      bench_header(say, fits = stats::setNames(list(fit), sprintf("part 5 %s alpha %g eta %g", cn, a, e)))
      h <- fit$trace$heldout
      say("  %-6g %-6g %8.4f %8.4f %5d %8.1f  %s", a, e, max(h), utils::tail(h, 1), which.max(h),
          max(tsec(fit$trace)), paste(sprintf("%.4f", h), collapse = " "))
    }
    rm(x5, tr5, sv)
  }
}

## ---- 6. restarts at fixed topics ----------------------------------------------
# One local step over the same documents with the same topics, with and
# without restart proposals: the local part of the ELBO (sum of H_d plus
# sum S * Elogb), which restarts should raise, free of the training trajectory.
if ("6" %in% parts) {
  kos <- read_corpus("kos")
  K6 <- if (smoke) 6L else 50L
  docs <- kos[seq_len(min(800L, nrow(kos))), ]
  say("")
  say("== 6. restarts at fixed topics: kos, K = %d, topics from a 2-lap vb memoized L = 8 fit (alpha %g, eta %g), one local step over its first %d documents",
      K6, vb_alpha, vb_eta, nrow(docs))
  fit <- fit_lda(kos, K = K6, local = "vb", global = "memoized", L = min(8L, K6),
                 alpha = vb_alpha, eta = vb_eta, init = "bregman", passes = 2,
                 restarts = FALSE, seed = 1, threads = 1, progress = FALSE)
  bench_header(say, fits = list(`part 6 topics` = fit))
  lam <- fit$lambda
  Elogb <- digamma(lam) - digamma(rowSums(lam))
  ctl <- sparsevi:::lda_vb_control(list(alpha = fit$alpha))
  for (L in unique(c(min(8L, K6), K6))) {
    val <- function(rs) {
      r <- sparsevi:::lda_vb_call(docs, lam, 0L, ctl, 1L, L = L, restarts = rs, objective = TRUE)
      S <- if (is.null(r$summary)) {
        as.matrix(methods::new("dgCMatrix", i = r$i, p = r$p, x = r$x, Dim = dim(lam)))
      } else as.matrix(r$summary)
      c(sum(r$doc_obj) + sum(S * Elogb), sum(r$accepts) / max(1, sum(r$tries)),
        sum(r$tries) / nrow(docs))
    }
    on <- val(TRUE)
    off <- val(FALSE)
    say("  alpha = %g, L = %d: local ELBO part with restarts %.1f, without %.1f (gain %.1f, %.3f per document); acceptance %.3f of %.2f proposals per document",
        fit$alpha, L, on[1], off[1], on[1] - off[1], (on[1] - off[1]) / nrow(docs), on[2], on[3])
  }
}
if ("7" %in% parts) {
  say("")
  K7 <- if (smoke) 8L else 100L
  say("== 7. restarts and the trained model: fit_lda(train, K = %d, local = \"vb\", global = \"memoized\", L = 8, alpha = %g, eta = %g, init = \"bregman\", passes = 10) (its ELBO stop), seed 1, held-out = 10%% of the documents (split seed 1)",
      K7, vb_alpha, vb_eta)
  rc <- strsplit(Sys.getenv("SPARSEVI_BENCH_RESTART_CORPORA",
                            "kos,sotu_chunks,nips_f20,spamassassin"), ",")[[1]]
  if (smoke) rc <- rc[1]
  for (cn in rc) {
    x <- read_corpus(cn)
    sp <- split_heldout(x, test_frac = 0.1, seed = 1)
    for (rl in c(Inf, 1, 0)) {
      f <- fit_lda(sp$train, K = K7, local = "vb", global = "memoized", L = 8,
                   alpha = vb_alpha, eta = vb_eta, init = "bregman", passes = if (smoke) 2 else 10,
                   seed = 1, heldout = sp$test,
                   progress = FALSE, doc_topics = 0, restarts = rl > 0,
                   restart_laps = if (is.finite(rl)) max(rl, 1) else 1e6, threads = 1)
      bench_header(say, fits = stats::setNames(list(f), sprintf("part 7 %s restart laps %g", cn, rl)))
      n <- nrow(f$trace)
      say("  %-13s restarts in %-9s laps %2d  ELBO/token %.4f  held-out %.4f  CPU %5.1f s  held-out by lap %s",
          cn, if (is.infinite(rl)) "every lap" else if (rl == 0) "no lap" else "lap 1", n,
          f$trace$objective[n] / sum(sp$train$count), f$trace$heldout[n],
          max(f$trace$cpu_seconds), paste(sprintf("%.3f", f$trace$heldout), collapse = " "))
    }
  }
}

## ---- 8. Hughes & Sudderth Fig. 4 at large K ------------------------------
# Held-out score against CPU seconds of training on nips_f20 (the part 2
# split) for each L, memoized and stochastic vb with restart proposals, at
# each prior pair; every lap runs (converge_tol = 0). Per (K, global step,
# priors): each L's best score, the dense (L = K) plateau (its best score),
# the first lap end at which the fit is within 0.005 of that plateau, the
# ratio of dense's seconds to it, and the final score's difference to
# dense's final score. With SPARSEVI_BENCH_FIG4_EVERY = n the scores are
# also taken within the laps, every n batches (fit$learning_curve), and the
# best, plateau and reach use them all.
if ("8" %in% parts) {
  env_list <- function(name, default) strsplit(Sys.getenv(name, default), ",")[[1]]
  Ks8 <- as.integer(env_list("SPARSEVI_BENCH_FIG4_K", if (smoke) "8" else "400,800"))
  L8_spec <- env_list("SPARSEVI_BENCH_FIG4_L", if (smoke) "1,4,K" else "1,4,8,16,K")
  priors8 <- lapply(strsplit(env_list("SPARSEVI_BENCH_FIG4_PRIORS", "0.1/0.01,0.5/0.1"), "/"),
                    as.numeric)
  globals8 <- env_list("SPARSEVI_BENCH_FIG4_GLOBAL", "memoized,stochastic")
  laps8 <- as.integer(Sys.getenv("SPARSEVI_BENCH_FIG4_LAPS", if (smoke) "2" else "6"))
  svi_batch8 <- as.integer(Sys.getenv("SPARSEVI_BENCH_SVI_BATCH", if (smoke) "20" else "100"))
  memo_batches8 <- as.integer(Sys.getenv("SPARSEVI_BENCH_FIG4_MEMO_BATCHES", "10"))
  every8 <- as.integer(Sys.getenv("SPARSEVI_BENCH_FIG4_EVERY", if (smoke) "1" else "0"))
  sp8 <- split_heldout(nips, test_frac = 0.1, seed = 1)
  for (K in Ks8) {
    Ls8 <- unique(vapply(L8_spec, function(l) if (l == "K") K else as.integer(l), 1L))
    Ls8 <- sort(unique(c(Ls8[Ls8 <= K], K)))
    for (g in globals8) for (pr in priors8) {
      bench_header(say, sprintf(
        "== 8. Hughes & Sudderth Fig. 4: nips_f20, K = %d, vb %s, alpha %g / eta %g, L in {%s}, %d laps (every lap: converge_tol = 0), restarts on, %d train / %d test documents, %s%s",
        K, g, pr[1], pr[2], paste(Ls8, collapse = ", "), laps8, nrow(sp8$train),
        nrow(sp8$test$observed), if (g == "stochastic") sprintf("batch size %d", svi_batch8) else
          sprintf("%d batches", memo_batches8),
        if (every8 > 0) sprintf(", scored every %d batches within each lap (heldout_every = %d)",
                                every8, every8) else ""))
      say("  load average: %s", paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
      runs8 <- list()
      for (L in Ls8) {
        fit <- fit_lda(sp8$train, K = K, local = "vb", global = g, L = L, alpha = pr[1],
                       eta = pr[2], init = "bregman", tau = vb_tau, kappa = vb_kappa,
                       restarts = TRUE, passes = laps8, converge_tol = 0, seed = 1,
                       threads = 1, progress = FALSE, heldout = sp8$test, doc_topics = 0,
                       n_batches = if (g == "memoized") memo_batches8 else NULL,
                       batch_size = if (g == "stochastic") svi_batch8 else NULL,
                       heldout_every = if (every8 > 0) every8)
        if (fit$local != "vb" || fit$global != g || fit$K != K) stop("part 8: the fit is not the one asked")
        if (every8 > 0 && !identical(fit$control$heldout_every, every8)) {
          stop("part 8: the fit was not scored within its laps")
        }
        bench_header(say, fits = stats::setNames(list(fit), sprintf("K=%d %s L=%d", K, g, L)))
        curve <- if (every8 > 0) fit$learning_curve else fit$trace
        runs8[[as.character(L)]] <- curve
        if (every8 > 0) {
          say("  L = %-4d at (lap.batches): %s", L,
              paste(sprintf("%d.%d", curve$lap, curve$batches), collapse = " "))
        }
        say("  L = %-4d %s s: %s", L, tsec_label(curve),
            paste(sprintf("%.1f", tsec(curve)), collapse = " "))
        say("  L = %-4d held-out: %s", L, paste(sprintf("%.4f", curve$heldout), collapse = " "))
      }
      dense <- runs8[[as.character(K)]]
      plateau <- max(dense$heldout)
      t_dense <- tsec(dense)[which(dense$heldout >= plateau - 0.005)[1]]
      final_dense <- utils::tail(dense$heldout, 1)
      say("  %-6s %9s %9s %12s %9s %8s %12s", "L", "best", "dense", "s to reach", "dense s",
          "x sooner", "final - dense")
      for (L in Ls8) {
        tr <- runs8[[as.character(L)]]
        hit <- which(tr$heldout >= plateau - 0.005)[1]
        t_hit <- if (is.na(hit)) NA_real_ else tsec(tr)[hit]
        say("  %-6d %9.4f %9.4f %12s %9.1f %8s %+12.4f", L, max(tr$heldout), plateau,
            if (is.na(hit)) "never" else sprintf("%.1f", t_hit), t_dense,
            if (is.na(hit)) "-" else sprintf("%.2fx", t_dense / t_hit),
            utils::tail(tr$heldout, 1) - final_dense)
      }
      say("  (reach = first %s with held-out >= dense plateau - 0.005; seconds = %s seconds of training recorded by fit_lda, one thread, evaluation excluded)",
          if (every8 > 0) "score (within or at the end of a lap)" else "lap end",
          tsec_label(dense))
    }
  }
}
say("")
say("done %s", format(Sys.time()))
attr(say, "close")()
