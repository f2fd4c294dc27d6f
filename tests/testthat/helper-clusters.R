# Shared by test-executor.R and test-scale.R: a small LDA corpus for fits
# run locally, in rounds and on clusters, and the check that two such fits
# are the same bits.

cluster_corpus <- function() {
  simulate_lda(D = 120, V = 60, K = 4, doc_length = 40, seed = 21)$dtm
}

expect_same_lda <- function(a, b) {
  expect_identical(a$topic_word, b$topic_word)
  expect_identical(a$lambda, b$lambda)
  expect_identical(a$trace$objective, b$trace$objective)
}
