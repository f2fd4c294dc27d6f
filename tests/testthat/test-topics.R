# Dead and duplicate topics (R/topics.R): reported, listed, pruned, re-seeded.

overfit <- function(...) {
  sim <- simulate_lda(D = 200, V = 100, K = 3, seed = 1)
  list(sim = sim, fit = fit_lda(sim$dtm, local = "vb", K = 12, L = 3, passes = 8, seed = 1,
                                eta = 0.5,
                                converge_tol = 0, # all 8 laps
                                progress = FALSE, ...))
}

test_that("duplicates are found as by comparing every pair of topics", {
  # the pairwise reference: each live topic against every bigger one, the
  # most words in common, the biggest such topic first
  ref_duplicates <- function(fit, n, overlap) {
    share <- sparsevi:::lda_topic_share(fit)
    dead <- which(share < sparsevi:::dead_share_default(fit$K))
    reason <- rep("dead", length(dead))
    top <- sparsevi:::lda_top_words(fit, n)
    live <- setdiff(order(-share), dead)
    for (i in seq_along(live)[-1L]) {
      k <- live[i]
      bigger <- live[seq_len(i - 1L)]
      common <- vapply(bigger, function(j) length(intersect(top[, k], top[, j])), 1L)
      if (max(common) >= overlap * n) {
        dead <- c(dead, k)
        reason <- c(reason, sprintf("duplicate of %d", bigger[which.max(common)]))
      }
    }
    o <- order(dead)
    list(as.integer(dead[o]), reason[o])
  }
  fit <- overfit()$fit
  for (n in c(3, 10)) {
    for (overlap in c(0.05, 0.3, 0.8, 0.99)) {
      d <- dead_topics(fit, n = n, overlap = overlap)
      expect_identical(list(as.vector(d), attr(d, "reason")), ref_duplicates(fit, n, overlap))
    }
  }
})

test_that("dead and duplicate topics are listed and reported by print() and summary()", {
  o <- overfit()
  fit <- o$fit
  d <- dead_topics(fit)
  share <- attr(d, "share")
  expect_equal(sum(share), 1)
  # every topic under 0.1% of the tokens is listed as dead, and no other
  expect_setequal(d[attr(d, "reason") == "dead"], which(share < 0.001))
  expect_gt(length(d), 5L)
  # a duplicate shares at least 8 of its 10 top words with a bigger topic
  dup <- d[attr(d, "reason") != "dead"]
  for (k in dup) {
    j <- as.integer(sub("duplicate of ", "", attr(d, "reason")[match(k, d)]))
    expect_gt(share[j], share[k])
    tk <- order(-fit$topic_word[k, ])[1:10]
    tj <- order(-fit$topic_word[j, ])[1:10]
    expect_gte(length(intersect(tk, tj)), 8L)
  }
  expect_identical(as.vector(dead_topics(fit, duplicates = FALSE)), which(share < 0.001))
  out <- capture.output(print(fit))
  # dead and duplicate topics are listed apart, duplicates with their bigger topic
  dead_line <- grep("^  dead topics \\(under 0.1% of the tokens each\\): ", out, value = TRUE)
  expect_length(dead_line, 1L)
  expect_setequal(as.integer(strsplit(sub(".*: ", "", dead_line), ", ")[[1]]),
                  d[attr(d, "reason") == "dead"])
  if (length(dup)) {
    dup_line <- grep("^  duplicate topics ", out, value = TRUE)
    expect_length(dup_line, 1L)
    expect_match(dup_line, sprintf("%d (of %s)", dup[1], sub("duplicate of ", "", attr(d, "reason")[match(dup[1], d)])),
                 fixed = TRUE)
    expect_false(grepl(sprintf("\\b%d\\b", dup[1]), sub(".*: ", "", dead_line)))
  }
  largest <- out[grep("largest topics", out) + seq_len(3)]
  listed <- as.integer(sub("^ *([0-9]+) .*", "\\1", largest))
  expect_false(any(listed %in% d))
  expect_output(print(summary(fit)), "\\[dead\\]")
  # print() and summary() read the sizes and top words once for all they
  # show: the same as terms(), dead_topics() and topic_diversity() alone
  s <- summary(fit)
  expect_identical(s$junk, d)
  expect_identical(s$top_terms, terms(fit, 10))
  expect_identical(s$diversity, topic_diversity(fit, 25))
  tt <- terms(fit, 6)
  for (k in listed) {
    expect_true(any(grepl(sprintf("^ *%d \\(.*\\): %s$", k, paste(tt[, k], collapse = " ")), out)))
  }
  # a fit without junk prints no such line
  sim <- simulate_lda(D = 200, V = 100, K = 3, seed = 1)
  clean <- fit_lda(sim$dtm, local = "vb", K = 3, passes = 5, seed = 1, eta = 0.5, progress = FALSE)
  expect_length(dead_topics(clean), 0L)
  expect_false(any(grepl("junk", capture.output(print(clean)))))
  expect_error(dead_topics(list()), class = "sparsevi_error_argument")
  expect_error(dead_topics(fit, min_share = 2), class = "sparsevi_error_argument")
})

test_that("prune_topics() removes topics and update() trains on", {
  o <- overfit()
  fit <- o$fit
  d <- dead_topics(fit)
  p <- prune_topics(fit)
  keep <- setdiff(seq_len(12), d)
  expect_identical(p$K, length(keep))
  expect_identical(p$pruned, as.vector(d))
  expect_equal(unname(p$topic_word), unname(fit$topic_word[keep, ] / rowSums(fit$topic_word[keep, ])))
  expect_identical(p$lambda, unname(fit$lambda[keep, ]))
  expect_identical(dim(p$doc_topic), c(200L, length(keep)))
  expect_length(dead_topics(p, duplicates = FALSE), 0L)
  up <- update(p, o$sim$dtm, passes = 2, progress = FALSE)
  expect_identical(up$K, length(keep))
  expect_true(all(diff(up$trace$objective[-(1:8)]) >= -1e-6))
  # fewer topics, no dead ones: a better ELBO than the overfitted model's
  expect_gt(up$trace$objective[10], fit$trace$objective[8])
  # other engines too
  cv <- fit_lda(o$sim$dtm, K = 8, local = "cvb0", passes = 2, seed = 1, progress = FALSE)
  pc <- prune_topics(cv, c(2, 5))
  expect_identical(pc$K, 6L)
  expect_s3_class(update(pc, o$sim$dtm, passes = 1, progress = FALSE), "sparsevi_lda")
  expect_identical(prune_topics(fit, integer(0)), fit)
  expect_error(prune_topics(fit, 13), class = "sparsevi_error_argument")
  expect_error(prune_topics(fit, 1:11), class = "sparsevi_error_argument")
})

test_that("reuse_dead re-seeds dead topics between laps, reproducibly", {
  o <- overfit(reuse_dead = TRUE)
  r <- o$fit
  expect_length(r$reused_dead, 7L)
  expect_identical(r$reused_dead[1], 0L) # nothing dies in the first lap
  expect_true(any(r$reused_dead > 0))
  plain <- overfit()$fit
  expect_false(identical(r$topic_word, plain$topic_word))
  again <- overfit(reuse_dead = TRUE, threads = 2)$fit
  expect_identical(again$topic_word, r$topic_word)
  expect_null(plain$reused_dead)
  expect_error(fit_lda(o$sim$dtm, K = 4, local = "cvb0", reuse_dead = TRUE),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(o$sim$dtm, K = 4, reuse_dead = 2), class = "sparsevi_error_argument")
  # the re-seeded topic starts from a document: memoized training revives
  # some topics on a corpus with more structure than the model holds
  sim <- simulate_lda(D = 300, V = 120, K = 8, seed = 3)
  # (alpha = 0.1, vb's default from K = 100 on: under K = 8's default, 0.5,
  # re-seeding leaves as many dead topics on this corpus as without it)
  a <- fit_lda(sim$dtm, local = "vb", K = 8, L = 3, passes = 10, seed = 4, init = "random",
               alpha = 0.1, eta = 0.5,
               converge_tol = 0, progress = FALSE)
  b <- fit_lda(sim$dtm, local = "vb", K = 8, L = 3, passes = 10, seed = 4, init = "random",
               alpha = 0.1, eta = 0.5,
               reuse_dead = TRUE, converge_tol = 0, progress = FALSE)
  expect_lt(length(dead_topics(b, duplicates = FALSE)),
            length(dead_topics(a, duplicates = FALSE)))
  expect_gt(b$trace$objective[10], a$trace$objective[10])
})

test_that("print() after prune_topics() shows figures of the pruned model, and recommends pruning only when safe", {
  sim <- simulate_lda(D = 220, V = 100, K = 3, seed = 1)
  sp <- split_heldout(sim$dtm, n_test = 20, seed = 3)
  fit <- fit_lda(sp$train, local = "vb", K = 12, L = 3, passes = 6, seed = 1, eta = 0.5,
                 heldout = sp$test, progress = FALSE)
  junk <- dead_topics(fit)
  expect_gt(length(junk), 0L)
  before <- fit$trace$heldout[nrow(fit$trace)]
  p <- prune_topics(fit)
  info <- p$prune_info
  expect_identical(info$topics, as.vector(junk))
  expect_equal(info$heldout_before, before)
  # the held-out score printed is the pruned model's, scored again
  expect_equal(info$heldout_after, as.numeric(heldout_loglik(p, sp$test)))
  expect_equal(info$heldout_after, sparsevi:::completion_score(p$topic_word, p$alpha,
                                                               fit$heldout, 1L))
  out <- capture.output(print(p))
  expect_true(any(grepl(sprintf("held-out log-likelihood per token: %.4f \\(before pruning: %.4f\\)",
                                info$heldout_after, before), out)))
  expect_false(any(grepl("final objective", out)))
  expect_true(any(grepl("pruned topics", out)))
  expect_output(print(summary(p)), "not recomputed since pruning")
  # pruned: no objective until update(), so logLik() is the held-out score
  # of the fit's held-out documents, scored again
  ll <- logLik(p)
  expect_identical(attr(ll, "type"), "heldout")
  expect_equal(attr(ll, "per_token"), info$heldout_after)
  expect_false(is.na(logLik(fit)))
  # update() trains the pruned model: the trace is true of it again
  up <- update(p, sp$train, passes = 1, progress = FALSE)
  out <- capture.output(print(up))
  expect_true(any(grepl("final objective", out)))
  expect_false(any(grepl("pruned topics", out)))
  # the recommendation follows the measured held-out cost
  cost <- sparsevi:::lda_prune_cost(fit, junk)
  expect_equal(cost$after, info$heldout_after)
  expect_equal(cost$drop, cost$before - cost$after)
  out <- paste(capture.output(print(fit)), collapse = "\n")
  if (cost$drop > sparsevi:::prune_safe_drop) {
    expect_match(out, "pruning them would lower the held-out score")
    expect_no_match(out, "removes them safely")
  } else {
    expect_match(out, "removes them safely")
  }
  # a cost above the threshold is never called safe (drive it through print_junk)
  bad <- capture.output(sparsevi:::print_junk(junk, list(before = -5, after = -5.04,
                                                         drop = 0.04)))
  expect_match(bad[2], "lower the held-out score by 0.0400 per token")
  good <- capture.output(sparsevi:::print_junk(junk, list(before = -5, after = -5.0005,
                                                          drop = 0.0005)))
  expect_match(good[2], "removes them safely")
  # without held-out documents the cost is not judged
  none <- capture.output(sparsevi:::print_junk(junk, NULL))
  expect_match(none[2], "not measured")
})

test_that("dead_topics() prints a table, not its attributes, and stays a vector of topic numbers", {
  fit <- overfit()$fit
  d <- dead_topics(fit)
  expect_s3_class(d, "sparsevi_dead_topics")
  out <- capture.output(print(d))
  expect_false(any(grepl("attr\\(", out)))
  expect_match(out[1], sprintf("^%d dead and %d duplicate of 12 topics",
                               sum(attr(d, "reason") == "dead"), sum(attr(d, "reason") != "dead")))
  expect_true(any(grepl("^ *topic +share +reason", out)))
  expect_length(out, length(d) + 2L)
  # usable as topic numbers
  expect_identical(prune_topics(fit, d)$K, 12L - length(d))
  expect_identical(setdiff(1:12, d), setdiff(1:12, as.vector(d)))
  sim <- simulate_lda(D = 200, V = 100, K = 3, seed = 1)
  clean <- fit_lda(sim$dtm, local = "vb", K = 3, passes = 5, seed = 1, eta = 0.5, progress = FALSE)
  expect_output(print(dead_topics(clean)), "No dead or duplicate topics")
})

test_that("prune_topics() works on a saved fit in a fresh session without library(Matrix)", {
  skip_on_cran()
  fit <- overfit()$fit
  rds <- tempfile(fileext = ".rds")
  saveRDS(fit, rds)
  script <- tempfile(fileext = ".R")
  writeLines(c(sprintf('f <- readRDS("%s")', rds),
               'stopifnot(!"package:Matrix" %in% search())',
               'p <- sparsevi::prune_topics(f)',
               'cat("K =", p$K, "\n")',
               '# nothing is loaded during a fit (lap 1 would count it)',
               'sim <- sparsevi::simulate_lda(D = 50, V = 30, K = 3, seed = 1)',
               'before <- loadedNamespaces()',
               'g <- sparsevi::fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)',
               'cat("loaded during the fit:", setdiff(loadedNamespaces(), before), "\n")'),
             script)
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(rscript, c("--vanilla", script), stdout = TRUE, stderr = TRUE,
                                  env = paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))))
  expect_null(attr(out, "status"))
  expect_true(any(out == sprintf("K = %d ", 12L - length(dead_topics(fit)))))
  expect_true(any(out == "loaded during the fit:  "))
})

test_that("a topic counts as dead below 0.1% up to K = 100, below a tenth of the average share above", {
  expect_equal(sparsevi:::dead_share_default(20), 0.001)
  expect_equal(sparsevi:::dead_share_default(100), 0.001)
  expect_equal(sparsevi:::dead_share_default(1000), 1e-4)
  expect_equal(sparsevi:::dead_share_default(10000), 1e-5)
  # at K = 150 a topic is dead under 0.1 / K of the tokens, not under 0.1%
  # (vb: its unused topics hold almost nothing, so no floor applies)
  sim <- simulate_lda(D = 400, V = 300, K = 3, doc_length = 40, seed = 2)
  fit <- fit_lda(sim$dtm, K = 150, local = "vb", passes = 1, seed = 1, progress = FALSE)
  d <- dead_topics(fit, duplicates = FALSE)
  share <- attr(d, "share")
  expect_identical(attr(d, "min_share"), 0.1 / 150)
  expect_identical(as.vector(d), which(share < 0.1 / 150))
  expect_identical(as.vector(dead_topics(fit, min_share = 0.001, duplicates = FALSE)),
                   which(share < 0.001))
})

test_that("SCVB0's unused topics are dead: under 1.5 times the share the prior alone gives them", {
  sim <- simulate_lda(D = 400, V = 300, K = 3, doc_length = 40, seed = 2)
  fit <- fit_lda(sim$dtm, K = 150, passes = 1, seed = 1, progress = FALSE)
  # the floor: alpha D / (C + D K alpha), the average document's part; the
  # exact sum over documents of alpha N_d / (N_d + K alpha), over C, is at
  # most that (N / (N + K alpha) is concave) and, for these lengths, close
  N <- sparsevi:::doc_lengths(sparsevi::as_dtm(sim$dtm))
  a <- fit$alpha
  exact <- a * sum(N / (N + 150 * a)) / sum(N)
  floor <- sparsevi:::lda_prior_floor(fit)
  expect_equal(floor, a * 400 / (sum(N) + 400 * 150 * a))
  expect_gte(floor, exact)
  expect_lt(floor, 1.05 * exact)
  # an unused topic keeps about that share: the smallest topics sit near it,
  # above the old default (0.1 / K) and under 1.5 times the floor
  d <- dead_topics(fit, duplicates = FALSE)
  share <- attr(d, "share")
  expect_identical(attr(d, "min_share"), max(0.1 / 150, 1.5 * floor))
  expect_identical(as.vector(d), which(share < 1.5 * floor))
  expect_gt(length(d), 0L)
  expect_gt(min(share), 0.1 / 150)
  expect_gt(min(share), 0.8 * floor)
  # print() says the share it used; a share given explicitly is used alone
  out <- capture.output(print(fit))
  expect_true(any(grepl(sprintf("dead topics (under %s%% of the tokens each)",
                                format(100 * 1.5 * floor, digits = 3)), out, fixed = TRUE)))
  expect_match(capture.output(print(d))[1], "dead: under ", fixed = TRUE)
  expect_identical(as.vector(dead_topics(fit, min_share = 0.1 / 150, duplicates = FALSE)),
                   which(share < 0.1 / 150))
  # (summary() reports the same topics)
  expect_identical(as.vector(summary(fit)$junk), as.vector(dead_topics(fit)))
})

test_that("print() points to reuse_dead only for a fit that could and did not re-seed", {
  o <- overfit()
  expect_true(length(dead_topics(o$fit, duplicates = FALSE)) > 0)
  expect_output(print(o$fit), "reuse_dead = TRUE")
  expect_output(print(summary(o$fit)), "reuse_dead = TRUE")
  r <- overfit(reuse_dead = TRUE)$fit
  # (topics the last lap killed are still reported, without the pointer)
  expect_true(length(dead_topics(r, duplicates = FALSE)) > 0)
  expect_output(print(r), "dead topics")
  expect_false(any(grepl("reuse_dead", capture.output(print(r)))))
  expect_false(any(grepl("reuse_dead", capture.output(print(summary(r))))))
  # cvb0 cannot re-seed: never pointed to
  cv <- fit_lda(o$sim$dtm, K = 12, local = "cvb0", passes = 2, seed = 1, progress = FALSE)
  expect_false(any(grepl("reuse_dead", capture.output(print(cv)))))
})

test_that("a re-seeded vb topic is its document's counts over eta, not a near-uniform topic", {
  sim <- simulate_lda(D = 60, V = 400, K = 3, seed = 2)
  x <- sim$dtm
  V <- ncol(x)
  eta <- 0.01
  # three trained-looking topics and one dead one (lambda = eta)
  lambda <- matrix(eta, 4, V)
  lambda[1:3, ] <- lambda[1:3, ] + 50 * sim$topic_word
  state <- list(topics = list(lambda = lambda))
  control <- list(eta = eta, dead_share = 0.001, seed = c(0, 1))
  rd <- sparsevi:::lda_reuse_dead(state, x, control, lap = 1L)
  expect_identical(rd$n, 1L)
  row <- rd$state$topics$lambda[4, ]
  expect_identical(rd$state$topics$lambda[1:3, ], lambda[1:3, ])
  # which document: the one whose counts the row holds above its eta floor
  above <- which(row > 2 * eta)
  d <- which(vapply(seq_len(nrow(x)), function(i) {
    idx <- x$doc_ptr[i] + seq_len(x$doc_ptr[i + 1L] - x$doc_ptr[i])
    setequal(x$term[idx] + 1L, above)
  }, TRUE))
  expect_length(d, 1L)
  idx <- x$doc_ptr[d] + seq_len(x$doc_ptr[d + 1L] - x$doc_ptr[d])
  # its words carry their counts; every other word stays near eta (jittered
  # so that topics re-seeded together differ)
  expect_equal(row[x$term[idx] + 1L] - x$count[idx], rep(eta, length(idx)), tolerance = 0.5)
  rest <- row[-(x$term[idx] + 1L)]
  expect_true(all(rest > 0.5 * eta & rest < 1.5 * eta))
  expect_gt(stats::sd(rest), 0)
  # the document dominates the topic: the old base of one pseudo-count per
  # word (V of them) drowned it and the topic died again
  expect_lt(sum(row) - sum(x$count[idx]), 2 * V * eta)
})
