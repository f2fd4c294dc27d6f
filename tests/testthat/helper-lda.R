# A small simulated corpus for the LDA tests.
sim_small <- function(seed = 1, D = 120, V = 40, K = 3) {
  simulate_lda(D = D, V = V, K = K, doc_length = 60, alpha = 0.1, eta = 0.05, seed = seed)
}

# vb's memoized global step (lda_global_memoized_lazy) failing with "boom"
# from its call `from` on: a lap that fails after some of its batches
# changed the store. Returns the function that puts the step back.
fail_memoized_from <- function(from) {
  ns <- asNamespace("sparsevi")
  orig <- get("lda_global_memoized_lazy", envir = ns)
  calls <- 0
  failing <- function(state, res, batch_id, control) {
    calls <<- calls + 1
    if (calls >= from) stop("boom")
    orig(state, res, batch_id, control)
  }
  utils::assignInNamespace("lda_global_memoized_lazy", failing, ns = "sparsevi")
  function() utils::assignInNamespace("lda_global_memoized_lazy", orig, ns = "sparsevi")
}

# The 30-word corpus x (e.g. simulate_lda(V = 30)$dtm) with three edge cases
# added after its first two documents: an empty document, and a document
# whose one entry counts 0, of a 31st word ("only0") no other document has.
cvb0_edge_corpus <- function(x) {
  p <- x$doc_ptr
  sparsevi:::new_sparsevi_dtm(
    doc_ptr = as.integer(c(p[1:3], p[3], p[3] + 1L, p[-(1:3)] + 1L)),
    term = as.integer(c(x$term[seq_len(p[3])], 30L, x$term[-seq_len(p[3])])),
    count = c(x$count[seq_len(p[3])], 0, x$count[-seq_len(p[3])]),
    vocab = c(x$vocab, "only0"))
}

# The background topic's test corpus (test-lda-cvb0.R, test-lda-vb.R,
# test-lda-ope.R): 300 simulated documents of 4 planted topics over 60
# words, and six words common to every document (about 40% of its tokens).
background_corpus <- function() {
  sim <- simulate_lda(D = 300, V = 60, K = 4, doc_length = 80, seed = 3)
  m <- as.matrix(Matrix::sparseMatrix(i = rep(seq_len(300), diff(sim$dtm$doc_ptr)),
                                      j = sim$dtm$term + 1L, x = sim$dtm$count,
                                      dims = c(300, 60)))
  colnames(m) <- sim$dtm$vocab
  u <- matrix(uniform_source(8)(300 * 6), 300, 6)
  common <- round(rowSums(m) / 9 * (0.5 + u))
  colnames(common) <- paste0("common", 1:6)
  as_dtm(cbind(m, common))
}

# The background topic of engine `local` on background_corpus() (10 laps,
# K = 5): with background = 0.5 the common words lead topic 1 and leave the
# others, without one they sit among every topic's top words; the same fit
# on two threads; the engine's default weight `default`; print() marks it;
# predict(method = local) uses it; `bad` is a classed error naming it.
# Returns the corpus, the fit and the counter of common words per topic.
expect_background_engine <- function(local, default, bad) {
  x <- background_corpus()
  common_in <- function(f) colSums(matrix(grepl("^common", terms(f, 6)), 6))
  fit_b <- function(...) fit_lda(x, K = 5, local = local, passes = 10, seed = 1,
                                 progress = FALSE, ...)
  fit <- fit_b(background = 0.5)
  with_bg <- common_in(fit)
  without <- common_in(fit_b(background = 0))
  expect_gte(with_bg[1], 3)
  expect_lte(sum(with_bg[-1]), 4)
  expect_gte(sum(without[-1]), 10)
  expect_identical(fit_b(background = 0.5, threads = 2)$topic_word, fit$topic_word)
  expect_identical(fit_lda(x, K = 5, local = local, passes = 1, seed = 1,
                           progress = FALSE)$control$background, default)
  expect_output(print(fit), "background topic")
  expect_gt(mean(predict(fit, x[1:20, ], method = local, seed = 1)[, 1]),
            mean(predict(fit, x[1:20, ], method = local, seed = 1, background = 0)[, 1]))
  expect_error(fit_lda(x, K = 5, local = local, passes = 1, background = bad, progress = FALSE),
               "background", class = "sparsevi_error_argument")
  invisible(list(x = x, fit = fit, common_in = common_in, fit_b = fit_b))
}

# x written as a UCI bag-of-words file and read back as a source
uci_source_of <- function(x, batch_size, ...) {
  f <- tempfile(fileext = ".txt.gz")
  vf <- tempfile(fileext = ".txt")
  write_uci_bow(x, f, vf)
  uci_source(f, vf, batch_size = batch_size, ...)
}

# Fits of engine `local` on 1 thread against 3 and 5 of the package's own
# threads (src/pool.c: more threads than cores or blocks of documents): the
# topics, the training proportions and predict() the same, bit for bit.
expect_same_bits_on_threads <- function(local) {
  sim <- simulate_lda(D = 260, V = 70, K = 4, doc_length = 40, seed = 21)
  fit <- function(th) fit_lda(sim$dtm, K = 4, local = local, passes = 2, batch_size = 130,
                              seed = 5, threads = th, progress = FALSE)
  one <- fit(1L)
  for (th in c(3L, 5L)) {
    f <- fit(th)
    expect_identical(f$topic_word, one$topic_word)
    expect_identical(f$doc_topic, one$doc_topic)
    expect_identical(predict(one, sim$dtm[1:40, ], seed = 2, threads = th),
                     predict(one, sim$dtm[1:40, ], seed = 2, threads = 1L))
  }
}
