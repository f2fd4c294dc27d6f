# Than & Doan (OPE), Fig. 3 and Fig. 4 (with the Fig. 1 learners) at the
# paper's settings where they fit this machine (issue 25).
#
#   cd <package root> && SPARSEVI_BENCH_DOCS=100000 nice -n 10 Rscript inst/bench/paper-than.R [parts]
#
# parts: "3" (Fig. 3), "4" (Fig. 1 / Fig. 4), default "34".
# Reads the first SPARSEVI_BENCH_DOCS + 1,000 paragraphs of
# ../shared/data/wikipara (the paper: New York Times, 300,000 articles, and
# Pubmed, 330,000; here paragraphs of Wikipedia, scaled down to what one
# shared core fits in minutes); holds out 1,000 of them at random
# (split_heldout(): 70/30 by tokens, the paper's App. A) and scores every
# model by the package's one evaluator, heldout_loglik() (predictive
# probability per held-out token; theta of the observed 70% by VB).
# Appends to inst/bench/results/paper-than.txt.
#
# The paper's settings: K = 100, alpha = eta = 1/K, minibatches of 5,000,
# kappa = 0.9, tau = 1, OPE T = 50, random initial topics. The training
# documents are shuffled once (seed 1) and streamed once, in order, as
# chunks of SPARSEVI_BENCH_CHUNK (10,000) documents; the model is scored
# after each chunk (the paper's x axis: documents seen). Each chunk is one
# call of the package's training loop with the corpus size D set to the
# whole training set, so the stochastic step sizes and the D / |C| scaling
# are those of one pass over the whole set (not of a fit per chunk).
#
# Fig. 3: ML-OPE with one setting changed at a time: (a) minibatch size,
#   (b) OPE iterations T, (c) kappa, (d) tau.
# Fig. 1 / Fig. 4: ML-OPE, Online-OPE, Streaming-OPE against Online-VB
#   (dense VB local step: L = K, no restarts, global "stochastic"),
#   Online-CGS (Mimno et al.'s Gibbs within SVI: local "gibbs", burnin 3,
#   samples 2) and SCVB0 (local "cvb0" at the same alpha, eta and topic
#   schedule as the rest, step_scale 1, no burn-in pass), each for one pass; predictive
#   probability against CPU seconds of training, the time each takes to
#   reach Online-VB's and Online-CGS's final score, and (Fig. 4 proper)
#   the inference time per document of OPE, VB, CVB0 and CGS with the same
#   topics (the ML-OPE model after the first chunk and after the pass).
suppressPackageStartupMessages(library(sparsevi))
ns <- asNamespace("sparsevi")
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
source(file.path(bench_dir, "bench-data.R"))
smoke <- bench_smoke()
data_dir <- if (!smoke) bench_data_dir()
say <- bench_logger(bench_out("paper-than.txt"))
args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args)) args[1] else "34"
n_docs <- as.integer(Sys.getenv("SPARSEVI_BENCH_DOCS", "100000"))
chunk <- as.integer(Sys.getenv("SPARSEVI_BENCH_CHUNK", if (smoke) "35" else "10000"))
K <- if (smoke) 5L else 100L

x <- bench_corpus(sprintf("wikipara%d", n_docs + 1000L), data_dir)
x <- x[ns$doc_lengths(x) > 0, ]
sp <- split_heldout(x, n_test = if (smoke) 10L else 1000L, observed_frac = 0.7, by = "tokens", seed = 1)
train <- sp$train
test <- sp$test
set.seed(1)
train <- train[sample.int(nrow(train)), ]
D <- nrow(train)
chunks <- split(seq_len(D), ceiling(seq_len(D) / chunk))
bench_header(say, sprintf("== Than & Doan at the paper's settings (inst/bench/paper-than.R), parts %s; load %s",
                           parts, paste(readLines("/proc/loadavg"), collapse = "")))
say("   wikipara: the first %d non-empty paragraphs; 1,000 held out at random (split_heldout, seed 1, 70/30 tokens); %d training paragraphs (%.1f M tokens), shuffled once, one pass in chunks of %d; V = %d",
    nrow(x), D, sum(train$count) / 1e6, chunk, ncol(train))
say("   paper's settings unless a row says otherwise: K = %d, alpha = eta = 1/K, minibatch 5000, kappa = 0.9, tau = 1, T = 50, init random; one thread; CPU seconds of training (scoring excluded); score = heldout_loglik() per held-out token",
    K)

# One pass over `train`, scored after each chunk. spec: fit_lda arguments
# (over the paper's). Returns the curve (docs seen, CPU s, score) and the fit.
one_pass <- function(spec, score_every = 1L, keep_first = FALSE) {
  a <- list(K = K, local = "ope", global = "ml", L = K, alpha = 1 / K, eta = 1 / K,
            batch_size = 5000L, kappa = 0.9, tau = 1, step_scale = 1, init = "random",
            seed = 1, threads = 1L, progress = FALSE, doc_topics = 0)
  a[names(spec)] <- spec
  # each engine's own controls, named
  if (a$local == "ope" && is.null(a$ope_iter)) a$ope_iter <- 50L
  if (a$local == "vb") a$restarts <- FALSE
  if (a$local == "gibbs") a[c("burnin", "samples")] <- list(3L, 2L)
  # the papers re-seed no topic (gibbs and Online-OPE do by default since the
  # eleventh session; ML-OPE and Streaming-OPE never do)
  if (a$local == "gibbs" || (a$local == "ope" && a$global == "stochastic")) a$reuse_dead <- FALSE
  if (a$local == "cvb0") {
    a$global <- "stochastic"
    a$burnin <- 0L
  }
  bs <- a$batch_size
  # the control of a fit over the whole training set: fit_lda() on the first
  # chunk, then D, the batches and the start set for the stream
  first <- train[chunks[[1]], ]
  probe <- suppressWarnings(do.call(fit_lda, c(list(first), a)))
  say("    settings that ran: %s", bench_settings(probe))
  ctl <- probe$control
  ctl$n_docs <- D
  ctl$doc_topics <- 0
  t0 <- proc.time()
  fit <- list(control = ctl, state = ns$lda_init_state(first, ctl),
              trace = ns$lda_empty_trace(), call = NULL)
  secs <- 0
  cpu <- function() {
    p <- proc.time()
    p[["user.self"]] + p[["sys.self"]]
  }
  secs <- cpu() - (t0[["user.self"]] + t0[["sys.self"]])
  rows <- list()
  first_fit <- NULL
  for (i in seq_along(chunks)) {
    xi <- train[chunks[[i]], ]
    n <- nrow(xi)
    fit$control$batches <- split(seq_len(n), ceiling(seq_len(n) / min(bs, n)))
    fit$control$n_batches <- length(fit$control$batches)
    c0 <- cpu()
    fit <- suppressWarnings(ns$lda_train(fit, xi, 1L, FALSE, NULL))
    secs <- secs + cpu() - c0
    if (keep_first && i == 1L) first_fit <- fit
    if (i %% score_every == 0L || i == length(chunks)) {
      rows[[length(rows) + 1L]] <- data.frame(docs = chunks[[i]][n], seconds = secs,
                                              score = as.numeric(heldout_loglik(fit, test)))
    }
  }
  list(curve = do.call(rbind, rows), fit = fit, first = first_fit)
}
show_curve <- function(name, r) {
  cv <- r$curve
  say("  %-26s CPU s %7.1f  final %.4f  best %.4f  curve (k docs: score): %s", name,
      max(cv$seconds), cv$score[nrow(cv)], max(cv$score),
      paste(sprintf("%.0f: %.3f", cv$docs / 1000, cv$score), collapse = ", "))
}

if (grepl("3", parts)) {
  say("")
  say("## Fig. 3: ML-OPE, one setting changed at a time (paper: minibatch and tau matter, larger minibatch and tau = 1 best; kappa and T barely matter)")
  fig3 <- list(
    "(a) minibatch 100" = list(batch_size = 100L),
    "(a) minibatch 500" = list(batch_size = 500L),
    "(a) minibatch 1000" = list(batch_size = 1000L),
    "(a) minibatch 2500" = list(batch_size = 2500L),
    "(a) minibatch 5000 (paper)" = list(),
    "(a) minibatch 10000" = list(batch_size = 10000L),
    "(b) T = 20" = list(ope_iter = 20L),
    "(b) T = 100" = list(ope_iter = 100L),
    "(c) kappa = 0.6" = list(kappa = 0.6),
    "(c) kappa = 0.7" = list(kappa = 0.7),
    "(c) kappa = 0.8" = list(kappa = 0.8),
    "(c) kappa = 1" = list(kappa = 1),
    "(d) tau = 10" = list(tau = 10),
    "(d) tau = 100" = list(tau = 100),
    "(d) tau = 1000" = list(tau = 1000)
  )
  f3 <- list()
  for (nm in names(fig3)) {
    f3[[nm]] <- one_pass(fig3[[nm]])
    show_curve(nm, f3[[nm]])
  }
  fin <- vapply(f3, function(r) r$curve$score[nrow(r$curve)], 0)
  say("  final scores, by panel: %s", paste(sprintf("%s %.4f", names(fin), fin), collapse = "; "))
}

if (grepl("4", parts)) {
  say("")
  say("## Fig. 1 / Fig. 4: learners, one pass, predictive probability against CPU seconds of training")
  learners <- list(
    "ML-OPE" = list(local = "ope", global = "ml"),
    "Online-OPE" = list(local = "ope", global = "stochastic"),
    "Streaming-OPE" = list(local = "ope", global = "streaming"),
    "Online-VB (dense, L = K)" = list(local = "vb", global = "stochastic"),
    "Online-CGS (gibbs)" = list(local = "gibbs", global = "stochastic"),
    "SCVB0 (cvb0, the OPE schedule)" = list(local = "cvb0")
  )
  f4 <- list()
  for (nm in names(learners)) {
    f4[[nm]] <- one_pass(learners[[nm]], keep_first = nm == "ML-OPE")
    show_curve(nm, f4[[nm]])
  }
  for (ref in c("Online-VB (dense, L = K)", "Online-CGS (gibbs)")) {
    rc <- f4[[ref]]$curve
    target <- rc$score[nrow(rc)]
    for (nm in c("ML-OPE", "Online-OPE", "Streaming-OPE")) {
      cv <- f4[[nm]]$curve
      hit <- which(cv$score >= target)
      say("  time to %s's final score (%.4f, %.1f CPU s): %s %s", ref, target, max(rc$seconds), nm,
          if (length(hit)) sprintf("%.1f s (%.1fx sooner)", cv$seconds[hit[1]],
                                   max(rc$seconds) / cv$seconds[hit[1]])
          else "not reached in the pass")
    }
  }
  say("")
  say("## Fig. 4 proper: inference time per document, the same topics for every method (ML-OPE model), 1,000 held-out documents (observed 70%%), best of 3")
  xo <- test$observed
  timed <- function(f) {
    min(replicate(3, {
      p0 <- proc.time()
      f()
      p1 <- proc.time() - p0
      p1[["user.self"]] + p1[["sys.self"]]
    }))
  }
  for (w in list(list("after the first chunk", f4[["ML-OPE"]]$first),
                 list("after the pass", f4[["ML-OPE"]]$fit))) {
    fit <- w[[2]]
    xa <- ns$dtm_align(xo, fit$vocab)$x
    tw <- unname(fit$topic_word)
    nd <- nrow(xa)
    t_ope <- timed(function() ns$ope_run(xa, tw, 1 / K, 50L, 1e-10, "none",
                                         ns$resolve_seed(1), 0, 1L))
    ctl <- ns$lda_vb_control(list(alpha = 1 / K, L = K))
    t_vb <- timed(function() ns$lda_vb_call(xa, tw, 1L, ctl, 1L, L = K, restarts = FALSE,
                                            summary = FALSE))
    t_cvb0 <- timed(function() predict(fit, xa, method = "cvb0", seed = 1, threads = 1L))
    t_cgs <- timed(function() predict(fit, xa, method = "gibbs", seed = 1, threads = 1L))
    say("  %-22s ms/doc: OPE (T = 50) %.3f; VB dense %.3f (%.1fx OPE); CVB0 %.3f (%.1fx); CGS %.3f (%.1fx); mean %.0f tokens/doc",
        w[[1]], 1000 * t_ope / nd, 1000 * t_vb / nd, t_vb / t_ope, 1000 * t_cvb0 / nd,
        t_cvb0 / t_ope, 1000 * t_cgs / nd, t_cgs / t_ope, mean(ns$doc_lengths(xa)))
  }
  say("  (predict() CVB0 and CGS at their default controls; VB dense to its default convergence, max_iter 100)")
}
say("   done in %.0f s", proc.time()[["elapsed"]])
attr(say, "close")()
