sim_small <- function(seed = 1, D = 120, V = 40, K = 3) {
  simulate_lda(D = D, V = V, K = K, doc_length = 60, alpha = 0.1, eta = 0.05, seed = seed)
}

test_that("fit_lda runs with every vb global step", {
  sim <- sim_small()
  for (g in c("memoized", "stochastic", "streaming", "batch")) {
    fit <- fit_lda(sim$dtm, K = 3, L = 2, global = g, passes = if (g == "streaming") 1 else 3, seed = 1,
                   progress = FALSE)
    expect_s3_class(fit, "sparsevi_lda")
    expect_equal(unname(rowSums(fit$topic_word)), rep(1, 3), tolerance = 1e-12)
    expect_identical(colnames(fit$topic_word), sim$dtm$vocab)
  }
})
