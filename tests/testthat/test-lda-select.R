# Choosing K (R/lda-select.R): fit_lda(x, K = c(...)) fits each K on one
# validation split, keeps the best by held-out score and refits it on all.

select_corpus <- function() simulate_lda(D = 120, V = 50, K = 4, doc_length = 60, seed = 5)

test_that("several K: each scored on one validation split, the best refitted on all", {
  sim <- select_corpus()
  # (simulated LDA documents have no words common to all topics: SCVB0's
  # background topic would take the place of a planted one, ?scvb0)
  f <- fit_lda(sim$dtm, K = c(6, 2, 4), passes = 3, seed = 7, progress = FALSE,
               background = 0)
  sel <- f$select
  expect_s3_class(sel, "data.frame")
  expect_identical(sel$K, c(2L, 4L, 6L))
  expect_true(all(c("heldout", "coherence", "seconds", "chosen") %in% names(sel)))
  expect_identical(sum(sel$chosen), 1L)
  # the chosen K has the best held-out score, and is the fit's K
  expect_identical(sel$K[sel$chosen], sel$K[which.max(sel$heldout)])
  expect_identical(f$K, sel$K[sel$chosen])
  # the planted 4 topics beat 2 on held-out documents
  expect_gt(sel$heldout[sel$K == 4], sel$heldout[sel$K == 2])
  # each score is the completion score of that K fitted on the training part
  split <- split_heldout(sim$dtm, test_frac = 0.1, seed = 7)
  expect_identical(attr(sel, "n_valid"), length(split$test_index))
  one <- fit_lda(split$train, K = 6, passes = 3, seed = 7, progress = FALSE, doc_topics = 0,
                 background = 0)
  expect_equal(sel$heldout[3], as.numeric(heldout_loglik(one, split$test)))
  expect_equal(sel$coherence[3], mean(as.numeric(coherence(one, split$train, "umass"))))
  # and its dead topics are those dead_topics() finds by their shares
  expect_identical(sel$dead[3], length(dead_topics(one, duplicates = FALSE)))
  expect_true(all(sel$dead >= 0L))
  # the returned model is the one fit_lda() gives for the chosen K on all documents
  direct <- fit_lda(sim$dtm, K = f$K, passes = 3, seed = 7, progress = FALSE, background = 0)
  expect_identical(f$topic_word, direct$topic_word)
  expect_identical(f$doc_topic, direct$doc_topic)
  # reproducible and independent of threads
  f2 <- fit_lda(sim$dtm, K = c(2, 4, 6), passes = 3, seed = 7, threads = 2, progress = FALSE,
                background = 0)
  expect_identical(f2$select[c("K", "heldout", "coherence", "dead", "chosen")],
                   sel[c("K", "heldout", "coherence", "dead", "chosen")])
  expect_identical(f2$topic_word, f$topic_word)
  # print() and summary() show the table; plot() draws it
  out <- capture.output(print(f))
  expect_true(any(grepl("K chosen by held-out", out)))
  expect_true(any(grepl(sprintf("^  \\* +%d ", f$K), out)))
  expect_true(any(grepl("held-out +coherence +dead +seconds", out)))
  # a table saved before `dead` existed still prints
  old <- f
  old$select$dead <- NULL
  expect_false(any(grepl("dead +seconds", capture.output(print(old)))))
  expect_true(any(grepl(sprintf("^  \\* +%d ", f$K), capture.output(print(old)))))
  expect_output(print(summary(f)), "K chosen by held-out")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(f, type = "select"), f)
})

test_that("choosing K keeps the user's settings and checks K", {
  sim <- select_corpus()
  f <- fit_lda(sim$dtm, K = c(2, 3), L = 3, local = "cvb0", passes = 2, seed = 1,
               progress = FALSE)
  expect_identical(f$local, "cvb0")
  expect_identical(f$L, min(3L, f$K)) # L is capped at each K
  expect_length(f$select$K, 2L)
  # one distinct K is an ordinary fit
  expect_message(g <- fit_lda(sim$dtm, K = c(3, 3), passes = 1, seed = 1, progress = FALSE),
                 class = "sparsevi_message_duplicate_k")
  expect_null(g$select)
  expect_identical(g$K, 3L)
  expect_error(fit_lda(sim$dtm, K = c(2, 1.5)), class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = c(2, 99)), "vocabulary", class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm[1:5, ], K = c(2, 3)), "10 documents",
               class = "sparsevi_error_argument")
})

test_that("choosing K scores the user's heldout with the final fit only, and works through wrappers", {
  sim <- select_corpus()
  sp <- split_heldout(sim$dtm, test_frac = 0.2, seed = 2)
  f <- fit_lda(sp$train, K = c(2, 4), passes = 2, seed = 3, heldout = sp$test,
               progress = FALSE)
  # the user's test documents are the final fit's, scored after every lap
  expect_equal(f$trace$heldout[nrow(f$trace)], as.numeric(heldout_loglik(f, sp$test)))
  # the validation scores come from the training documents alone
  split <- split_heldout(sp$train, test_frac = 0.1, seed = 3)
  one <- fit_lda(split$train, K = 2, passes = 2, seed = 3, progress = FALSE)
  expect_equal(f$select$heldout[1], as.numeric(heldout_loglik(one, split$test)))
  # arguments passed on by a wrapper's dots are found
  wrap <- function(data, ...) fit_lda(data, ...)
  g <- wrap(sp$train, K = c(2, 4), passes = 2, seed = 3, progress = FALSE, local = "vb",
            max_iter = 50)
  expect_identical(g$select$K, c(2L, 4L))
  expect_equal(g$control$max_iter, 50)
  out <- capture.output(invisible(fit_lda(sp$train, K = c(2, 3), passes = 1, seed = 3,
                                          progress = TRUE)), type = "message")
  expect_true("choosing K: K = 2 (1 of 2)" %in% out)
  expect_true(any(grepl("^choosing K: K = [23] is best; refitting it on all 96 documents$", out)))
})

test_that("print() and plot() say when the chosen K is at the grid's edge", {
  sim <- select_corpus()
  f <- fit_lda(sim$dtm, K = c(2, 3), passes = 3, seed = 7, progress = FALSE)
  expect_identical(f$K, 3L) # 4 planted topics: the largest K of the grid wins
  out <- capture.output(print(f))
  expect_true(any(grepl("K = 3 is the largest K of the grid: .*widen the grid upwards", out)))
  sel <- f$select
  sel$chosen <- sel$K == 2L
  expect_match(sparsevi:::select_edge(sel), "smallest K of the grid")
  # the largest K chosen: widen the grid upwards, unless that K already
  # leaves topics unused
  top <- data.frame(K = c(2L, 4L), heldout = c(-3, -2), dead = c(0L, 0L), chosen = c(FALSE, TRUE))
  expect_match(sparsevi:::select_edge(top), "widen the grid upwards")
  top$dead[2] <- 3L
  expect_match(sparsevi:::select_edge(top), "3 of its topics are dead")
  expect_false(grepl("widen", sparsevi:::select_edge(top)))
  mid <- fit_lda(sim$dtm, K = c(2, 4, 12), passes = 3, seed = 7, progress = FALSE)
  if (mid$K == 4L) {
    expect_null(sparsevi:::select_edge(mid$select))
    expect_false(any(grepl("of the grid", capture.output(print(mid)))))
  }
  rec <- new.env()
  rec$texts <- character(0)
  trace(graphics::mtext, bquote(assign("texts", c(get("texts", .(rec)), text), envir = .(rec))),
        print = FALSE, where = asNamespace("graphics"))
  on.exit(untrace(graphics::mtext, where = asNamespace("graphics")))
  grDevices::pdf(NULL)
  plot(f, type = "select")
  grDevices::dev.off()
  expect_true(any(grepl("grid's upper edge", rec$texts)))
})

test_that("K values that are not counts of topics are errors naming the value (issue 36, item 5)", {
  sim <- select_corpus()
  for (bad in list(c(5, Inf), c(5, 3e9), c(5, NA), c(5, -Inf))) {
    err <- expect_error(fit_lda(sim$dtm, K = bad, progress = FALSE),
                        class = "sparsevi_error_argument")
    expect_match(conditionMessage(err), sprintf("K[2] is %s", format(bad[2])), fixed = TRUE)
  }
  # duplicates are dropped, with a message naming them; the grid is the same
  expect_message(f <- fit_lda(sim$dtm, K = c(3, 2, 3), passes = 1, seed = 1, progress = FALSE),
                 "lists 3 more than once", class = "sparsevi_message_duplicate_k")
  expect_identical(f$select$K, 2:3)
})
