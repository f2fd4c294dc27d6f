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
# 4. Part 2 re-run closer to the paper's set-up (SPARSEVI_BENCH_PARTS=4):
#    online VB with as many coordinate-ascent iterations per document as the
#    hybrid's sweeps (B + S = 5; part 2 lets VB converge, up to 100), both
#    from the same random initialisation, the step offset tau at 1 and at
#    about one epoch of minibatches (the paper's tau_0 of 3,000-300,000 is
#    of the order of its minibatches per 500,000-document epoch).
#    Part 6 repeats it at tau = 14 after 10 passes (13,500 documents);
#    part 7 adds each topic's distance from the corpus word distribution.
# 5. Threads (SPARSEVI_BENCH_PARTS=5): the local step alone and the whole
#    one-pass fit on 1 and 2 threads, measured in one run (elapsed seconds).
#
# Sizes are reduced from the paper's (its corpora have 350,000 articles and
# 1.2 million books) to finish in about 15-20 minutes on one core: see the
# settings below and the notes printed into the results file.

suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
ns <- asNamespace("sparsevi")
smoke <- bench_smoke()
data_dir <- if (!smoke) bench_data_dir()
out_file <- bench_out("gibbs.txt")
quick <- nzchar(Sys.getenv("SPARSEVI_BENCH_QUICK")) || smoke
lines <- character(0)
say <- function(...) {
  txt <- sprintf(...)
  cat(txt, "\n", sep = "")
  lines <<- c(lines, txt)
  cat(txt, "\n", sep = "", file = out_file, append = TRUE) # keep earlier runs
}

# UCI bag-of-words reader (only the first max_docs documents).
read_bow <- function(name, max_docs = Inf) {
  if (smoke) return(bench_sim_corpus(D = 200, V = 60, K = 5, seed = 1, doc_length = 30))
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
parts <- as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_PARTS", if (smoke) "1,2,3,5" else "1,2,3"), ",")[[1]])
# CPU seconds of this process (the machine is shared: wall-clock time
# includes waiting for a core; with one thread CPU time is the work done).
cpu <- function() {
  p <- proc.time()
  p[["user.self"]] + p[["sys.self"]]
}
bench_header(say, sprintf("sparsevi gibbs benchmark (inst/bench/gibbs.R), threads = %d%s, parts %s, load %s",
                           threads, if (quick) " (QUICK mode)" else "",
                           paste(parts, collapse = ","),
                           paste(readLines("/proc/loadavg", warn = FALSE), collapse = " ")))

# ---------------------------------------------------------------------------
# 1. seconds per minibatch of 100 documents
# ---------------------------------------------------------------------------
nips <- read_bow("nips_f20")
# nips_f20's split (documents 1-1350 train, 1351-1500 test, as in the source)
n_tr <- if (smoke) 150L else 1350L
tr_rows <- seq_len(n_tr)
te_rows <- n_tr + seq_len(if (smoke) 50L else 150L)
if (1 %in% parts) {
say("\n## 1. Seconds per minibatch of 100 documents (nips_f20: D = %d, V = %d)",
    nrow(nips), ncol(nips))
say("CPU seconds (local + global step), mean of the timed minibatches after warm-up ones")
}

# Control lists as fit_lda() builds them (through the engines' own control
# resolvers), for driving the local and global steps directly.
make_control <- function(local, K, D, eta, alpha, ...) {
  ctl <- list(K = K, L = K, alpha = alpha, eta = eta, local = local,
              global = "stochastic", n_batches = ceiling(D / 100), batch_size = 100L,
              restarts = FALSE, init = "random", tau = 1, kappa = 0.6, step_scale = 1,
              seed = c(0, 1), threads = threads, n_docs = D, ...)
  if (local == "vb") ns$lda_vb_control(ctl) else ns$lda_gibbs_control(ctl)
}

# Seconds per minibatch (local + global step), mean over `timed` minibatches
# after `warm` warm-up ones. The hybrid starts from lambda = eta (the empty
# sparse store), online VB from the loop's random initialisation.
time_engine <- function(local, K, warm, timed, eta = 0.3, alpha = 0.1) {
  D <- nrow(nips)
  if (local == "vb") {
    ctl <- make_control("vb", K, D, eta, alpha, max_iter = 5L)
    state <- bench_lda_state(lambda = ns$lda_init_random(nips, K, eta, c(0, 7)), t = 0L)
    local_fun <- ns$lda_local_vb
    global_fun <- ns$lda_global_stochastic
  } else {
    ctl <- make_control("gibbs", K, D, eta, alpha, burnin = 3L, samples = 2L)
    state <- bench_lda_state(gibbs = ns$gibbs_store_empty(K, ncol(nips)), t = 0L)
    local_fun <- ns$lda_local_gibbs
    global_fun <- ns$lda_global_gibbs
  }
  u <- ns$uniform_source(K)
  secs <- numeric(0)
  extra <- NULL
  for (b in seq_len(warm + timed)) {
    idx <- sort(order(u(D))[1:100])
    batch <- ns$dtm_subset(nips, idx)
    t0 <- cpu()
    res <- local_fun(batch, state, ctl, c(0, b), threads)
    state <- global_fun(state, res, b, ctl)
    secs <- c(secs, cpu() - t0)
  }
  if (local == "gibbs") {
    extra <- sprintf("store non-zeros %.2f%% of K x V; word-doc part entries/draw %.1f",
                     100 * length(bench_lda_topics(state, "gibbs")$x) / (K * ncol(nips)),
                     res$stats$entries_per_draw)
  }
  list(sec = mean(utils::tail(secs, timed)), extra = extra)
}

if (1 %in% parts) {
Ks <- if (smoke) c(5, 10, 20) else if (quick) c(100, 1000, 2000) else c(100, 500, 1000, 2000)
res1 <- data.frame(K = Ks, hybrid = NA_real_, online_vb = NA_real_)
for (i in seq_along(Ks)) {
  K <- Ks[i]
  h <- time_engine("gibbs", K, warm = if (smoke) 1 else 4, timed = if (quick) 2 else 4)
  v <- time_engine("vb", K, warm = 1, timed = 2)
  res1$hybrid[i] <- h$sec
  res1$online_vb[i] <- v$sec
  say("K = %4d  hybrid %.3f s  online VB %.3f s  (VB / hybrid %.1fx)  [%s]", K,
      h$sec, v$sec, v$sec / h$sec, h$extra)
}
i1 <- length(Ks) - 1L; i2 <- length(Ks)
say("hybrid K=%d / K=%d: %.2f (target <= 2); online VB K=%d / K=%d: %.2f", Ks[i2], Ks[i1],
    res1$hybrid[i2] / res1$hybrid[i1], Ks[i2], Ks[i1], res1$online_vb[i2] / res1$online_vb[i1])
say("(online VB here runs 5 coordinate-ascent iterations per document, as many as the hybrid's 3 + 2 sweeps, as in the paper)")
}

# ---------------------------------------------------------------------------
# 2. K = 200: per-topic UMass and left-to-right held-out probability
# ---------------------------------------------------------------------------
compare_quality <- function(train, test, label, K = if (smoke) 8 else 200, passes = 1, particles = if (smoke) 2 else 10,
                            eta = 0.3, alpha = 0.1, vb_max_iter = 100L, tau = 1,
                            init = "bregman", part = 2) {
  say("\n## %d. %s: K = %d, %d training documents x %d pass(es), minibatches of 100; test %d documents",
      part, label, K, nrow(train), passes, nrow(test))
  say("alpha = %g, eta = %g, kappa = 0.6, tau = %g, init = \"%s\"; hybrid B = 3, S = 2; online VB at most %d coordinate-ascent iterations per document (tol 0.05)",
      alpha, eta, tau, init, vb_max_iter)
  fits <- list()
  t0 <- cpu()
  fits$hybrid <- fit_lda(train, K = K, local = "gibbs", global = "stochastic",
                         alpha = alpha, eta = eta, batch_size = 100, passes = passes,
                         seed = 1, threads = threads, progress = FALSE,
                         burnin = 3, samples = 2, tau = tau, kappa = 0.6, init = init,
                         step_scale = 1, reuse_dead = FALSE)
  t_h <- cpu() - t0
  t0 <- cpu()
  fits$online_vb <- fit_lda(train, K = K, local = "vb", global = "stochastic", L = K,
                            alpha = alpha, eta = eta, batch_size = 100,
                            passes = passes, seed = 1, threads = threads,
                            progress = FALSE, restarts = FALSE, tau = tau, kappa = 0.6,
                            init = init, max_iter = vb_max_iter, tol = 0.05, step_scale = 1)
  t_v <- cpu() - t0
  bench_header(say, fits = fits)
  out <- list()
  for (nm in names(fits)) {
    f <- fits[[nm]]
    coh <- as.numeric(coherence(f, train, measure = "umass", n = 10))
    ltr <- heldout_loglik(f, test, method = "left_to_right", particles = particles,
                          seed = 1, threads = threads)
    comp <- heldout_loglik(f, test, seed = 3)
    ent <- -rowSums(f$topic_word * log(f$topic_word))
    # how far each topic is from the corpus' word distribution: UMass scores
    # a topic whose top words are the corpus' most frequent words well, so
    # topics still close to the (near-uniform) start look coherent
    bg <- tabulate(rep.int(train$term + 1L, train$count), ncol(train)) + 1e-12
    bg <- bg / sum(bg)
    kl <- rowSums(f$topic_word * (log(f$topic_word) - rep(log(bg), each = nrow(f$topic_word))))
    out[[nm]] <- list(coh = coh, ltr = ltr, comp = comp, ent = ent, kl = kl)
  }
  pooled <- unlist(lapply(out, `[[`, "coh"))
  poor <- stats::quantile(pooled, 0.1)
  for (nm in names(out)) {
    o <- out[[nm]]
    say("%-9s train %6.1f CPU s  UMass mean %8.2f  median %8.2f  10%%-quantile %8.2f  topics below pooled 10%% (%.1f): %3d  left-to-right %.4f/token  completion %.4f/token  topic entropy %.2f +- %.2f",
        nm, if (nm == "hybrid") t_h else t_v, mean(o$coh), stats::median(o$coh),
        stats::quantile(o$coh, 0.1), poor, sum(o$coh < poor), as.numeric(o$ltr),
        as.numeric(o$comp), mean(o$ent), stats::sd(o$ent))
    say("%-9s KL(topic || corpus word distribution): median %.2f nats, topics within 0.5 nats %d, within 1 nat %d; UMass of the topics beyond 1 nat: mean %.2f (%d topics)",
        nm, stats::median(o$kl), sum(o$kl < 0.5), sum(o$kl < 1), mean(o$coh[o$kl >= 1]),
        sum(o$kl >= 1))
  }
  tt <- stats::t.test(out$hybrid$coh, out$online_vb$coh)
  dl <- attr(out$hybrid$ltr, "per_doc") / attr(out$hybrid$ltr, "doc_tokens") -
    attr(out$online_vb$ltr, "per_doc") / attr(out$online_vb$ltr, "doc_tokens")
  say("UMass hybrid - VB: %.2f (Welch t-test p = %.2g); left-to-right per document: hybrid higher for %d of %d test documents",
      mean(out$hybrid$coh) - mean(out$online_vb$coh), tt$p.value, sum(dl > 0), length(dl))
  invisible(out)
}

if (2 %in% parts) {
# nips_f20: documents 1-1350 train, 1351-1500 test, as in the source.
compare_quality(nips[tr_rows, ], nips[te_rows, ], "nips_f20",
                passes = if (quick) 1 else 2, particles = if (quick) 3 else 10)

# wikipara: the first paragraphs of the dump (the full corpus has 615,012).
n_wiki <- if (smoke) 150 else if (quick) 4000 else 20000
wiki <- read_bow("wikipara", max_docs = n_wiki + 500)
say("\n(wikipara subset: the first %d paragraphs, %d terms in use)", nrow(wiki), ncol(wiki))
nw <- nrow(wiki)
n_wt <- if (smoke) 50L else 500L
compare_quality(wiki[1:(nw - n_wt), ], wiki[(nw - n_wt + 1L):nw, ], "wikipara subset",
                passes = 1, particles = if (quick) 3 else 10)
rm(wiki)
}

# ---------------------------------------------------------------------------
# 3. coherence against eta
# ---------------------------------------------------------------------------
if (3 %in% parts) {
K3 <- if (smoke) 5 else 100
say("\n## 3. Hybrid UMass coherence (top 10 words, reference = training set) against eta; nips_f20 train, K = %d, %d passes",
    K3, if (quick) 1 else 2)
for (eta in if (smoke) 0.2 else c(0.1, 0.2, 0.3, 0.4, 0.5, 0.6)) {
  f <- fit_lda(nips[tr_rows, ], K = K3, local = "gibbs", global = "stochastic", alpha = 0.1,
               eta = eta, init = "bregman", burnin = 3, samples = 2, step_scale = 1, tau = 1,
               kappa = 0.6, batch_size = 100, passes = if (quick) 1 else 2, seed = 1,
               threads = threads, progress = FALSE)
  bench_header(say, fits = stats::setNames(list(f), sprintf("eta %g", eta)))
  coh <- as.numeric(coherence(f, nips[tr_rows, ], measure = "umass", n = 10))
  say("eta = %.1f  UMass mean %8.2f  median %8.2f  10%%-quantile %8.2f  worst %8.2f",
      eta, mean(coh), stats::median(coh), stats::quantile(coh, 0.1), min(coh))
}
}

# ---------------------------------------------------------------------------
# 4. part 2 re-run with the paper's set-up for online VB (see the header)
# ---------------------------------------------------------------------------
if (4 %in% parts) {
for (tau in c(1, 14)) {
  for (vb_it in c(5L, 100L)) {
    compare_quality(nips[tr_rows, ], nips[te_rows, ],
                    sprintf("nips_f20, online VB max_iter = %d, tau = %g", vb_it, tau),
                    passes = if (quick) 1 else 2, particles = if (quick) 3 else 10,
                    vb_max_iter = vb_it, tau = tau, init = "random", part = 4)
  }
}
}

# 6. as part 4 with tau = 14, after 10 passes (13,500 documents)
if (6 %in% parts) {
for (vb_it in c(5L, 100L)) {
  compare_quality(nips[tr_rows, ], nips[te_rows, ],
                  sprintf("nips_f20, 10 passes, online VB max_iter = %d, tau = 14", vb_it),
                  passes = 10, particles = 10, vb_max_iter = vb_it, tau = 14,
                  init = "random", part = 6)
}
}

# 7. parts 4 and 6 again (online VB with 5 iterations, tau = 14) with the
#    distance of each topic from the corpus' word distribution
if (7 %in% parts) {
for (ps in c(2L, 10L)) {
  compare_quality(nips[tr_rows, ], nips[te_rows, ],
                  sprintf("nips_f20, %d passes, online VB max_iter = 5, tau = 14", ps),
                  passes = ps, particles = 10, vb_max_iter = 5L, tau = 14,
                  init = "random", part = 7)
}
}

# ---------------------------------------------------------------------------
# 5. threads: local step alone and whole one-pass fit, 1 and 2 threads
# ---------------------------------------------------------------------------
if (5 %in% parts) {
x5 <- nips[seq_len(min(600L, nrow(nips))), ]
K5 <- if (smoke) 5 else 100
say("\n## 5. threads: nips_f20 first 600 documents, K = %d, minibatches of 100 (elapsed seconds, best of 3, one run)", K5)
# gibbs's settings at 06ddbb6, named
gibbs5 <- list(local = "gibbs", global = "stochastic", alpha = 0.1, eta = 0.2, init = "bregman",
               burnin = 3, samples = 2, step_scale = 1, tau = 1, kappa = 0.6, batch_size = 100)
ref5 <- do.call(fit_lda, c(list(x5, K = K5, passes = 1, seed = 1, progress = FALSE), gibbs5))
bench_header(say, fits = list(`part 5` = ref5))
b5 <- ns$dtm_subset(x5, 1:100)
best5 <- function(f) min(replicate(3, system.time(f())[["elapsed"]]))
loc5 <- function(th) for (i in 1:6) ns$lda_local_gibbs(b5, bench_fit_state(ref5), ref5$control, c(1, 2), th)
fit5 <- function(th) do.call(fit_lda, c(list(x5, K = K5, passes = 1, seed = 1, threads = th,
                                             progress = FALSE), gibbs5))
for (w in list(list("local step, 6 x 100 documents", loc5),
               list("whole fit_lda, 1 pass", fit5))) {
  t1 <- best5(function() w[[2]](1L))
  t2 <- best5(function() w[[2]](2L))
  say("%-32s 1 thread %6.3f s  2 threads %6.3f s  speed-up %.2fx", w[[1]], t1, t2, t1 / t2)
}
same <- identical(fit5(1L)$topic_word, fit5(2L)$topic_word)
say("threads = 1 and 2 give identical topics: %s", same)

  # the loop's initialisation (R/lda-start.R: random or Bregman start) is serial;
  # its share of the one-thread one-pass fit bounds the whole-fit speed-up
  # CPU seconds (user + system) of one thread: not inflated by the load
  cpu5 <- function(f) min(replicate(3, {
    p0 <- proc.time()
    f()
    p1 <- proc.time() - p0
    p1[["user.self"]] + p1[["sys.self"]]
  }))
  t_init5 <- cpu5(function() ns$lda_init_state(x5, ref5$control))
  t_fit5 <- cpu5(function() fit5(1L))
  say("of the one-thread one-pass fit (%.3f CPU s), the serial initialisation takes %.3f CPU s (%.0f%%): whole-fit speed-up on 2 threads at most %.2fx",
      t_fit5, t_init5, 100 * t_init5 / t_fit5, t_fit5 / (t_init5 + (t_fit5 - t_init5) / 2))

  # The load-balance bound of the document loop on 2 threads, from a cost
  # model (OPE: distinct words per document; Gibbs: tokens), for the batches
  # fit_lda() forms here: greedy dynamic scheduling of blocks of 64
  # documents (before) against single documents (now). Independent of the
  # machine's load.
  members5 <- ns$lda_members(x5, list(n_batches = as.integer(ceiling(nrow(x5) / 100)),
                                      seed = ns$resolve_seed(1)))
  cost5 <- ns$doc_lengths(x5)
  makespan <- function(cost) {
    w <- c(0, 0)
    for (cc5 in cost) {
      i <- which.min(w)
      w[i] <- w[i] + cc5
    }
    max(w)
  }
  old5 <- new5 <- tot5 <- 0
  for (b in members5) {
    cb <- cost5[b]
    old5 <- old5 + makespan(tapply(cb, (seq_along(cb) - 1L) %/% 64L, sum))
    new5 <- new5 + makespan(cb)
    tot5 <- tot5 + sum(cb)
  }
  say("load-balance bound of the document loop on 2 threads (cost model: %s): blocks of 64 documents %.2fx, single documents %.2fx",
      "tokens per document", tot5 / old5, tot5 / new5)
}
say("\ndone in %.0f s elapsed, %.0f CPU s", proc.time()[["elapsed"]], cpu())
