# A training state for tests that call an engine's steps directly: the
# fields given, its topic fields (lambda, S, store, gibbs, beta) moved into
# the topics object of R/lda-topics.R, as the training loop holds them.
lda_test_state <- function(...) sparsevi:::lda_state_topics(list(...))
