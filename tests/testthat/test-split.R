test_that("split_heldout by types conserves counts and splits word types", {
  x <- simulate_lda(D = 80, V = 60, K = 3, doc_length = 60, seed = 1)$dtm
  sp <- split_heldout(x, n_test = 20, observed_frac = 0.8, seed = 2)
  expect_s3_class(sp$test, "sparsevi_heldout")
  expect_identical(nrow(sp$train), 60L)
  expect_identical(length(sp$test_index), 20L)
  expect_identical(sp$train, x[-sp$test_index, ])
  test <- as.matrix(x[sp$test_index, ])
  obs <- as.matrix(sp$test$observed)
  held <- as.matrix(sp$test$heldout)
  # observed + held-out = the test documents, and no word type is in both
  expect_identical(obs + held, test)
  expect_false(any(obs > 0 & held > 0))
  types <- rowSums(test > 0)
  expect_identical(unname(rowSums(obs > 0)),
                   unname(ifelse(types >= 2, pmin(types - 1, pmax(1, round(0.8 * types))), types)))
  expect_identical(sp$test$observed$vocab, x$vocab)
  expect_output(print(sp$test), "20 test documents")
})

test_that("split_heldout by tokens conserves counts and splits tokens", {
  x <- simulate_lda(D = 50, V = 40, K = 3, doc_length = 40, seed = 3)$dtm
  sp <- split_heldout(x, test_frac = 0.2, observed_frac = 0.7, by = "tokens", seed = 4)
  expect_identical(length(sp$test_index), 10L)
  test <- as.matrix(x[sp$test_index, ])
  obs <- as.matrix(sp$test$observed)
  held <- as.matrix(sp$test$heldout)
  expect_identical(obs + held, test)
  n <- rowSums(test)
  expect_identical(unname(rowSums(obs)), unname(pmin(n - 1, pmax(1, round(0.7 * n)))))
  expect_identical(sp$test$by, "tokens")
})

test_that("split_heldout is reproducible by seed and leaves the user's RNG alone", {
  x <- simulate_lda(D = 30, V = 20, K = 2, seed = 5)$dtm
  set.seed(99)
  before <- .Random.seed
  a <- split_heldout(x, n_test = 5, seed = 7)
  expect_identical(.Random.seed, before)
  expect_identical(a, split_heldout(x, n_test = 5, seed = 7))
  expect_false(identical(a$test_index, split_heldout(x, n_test = 5, seed = 8)$test_index) &&
                 identical(a$test, split_heldout(x, n_test = 5, seed = 8)$test))
  set.seed(1)
  b <- split_heldout(x, n_test = 5)
  set.seed(1)
  expect_identical(b, split_heldout(x, n_test = 5))
})

test_that("split_heldout accepts any corpus format and checks its arguments", {
  sp <- split_heldout(list(c("a", "b", "c"), c("b", "c"), c("a", "a")), n_test = 1, seed = 1)
  expect_identical(nrow(sp$train), 2L)
  x <- simulate_lda(D = 10, V = 10, K = 2, seed = 1)$dtm
  expect_error(split_heldout(x, n_test = 10), class = "sparsevi_error_argument")
  expect_error(split_heldout(x, n_test = 0), class = "sparsevi_error_argument")
  expect_error(split_heldout(x, test_frac = 1.5), class = "sparsevi_error_argument")
  expect_error(split_heldout(x, n_test = 2, observed_frac = 1), class = "sparsevi_error_argument")
  expect_error(split_heldout(x, n_test = 2, by = "words"), class = "sparsevi_error_argument")
  expect_error(split_heldout(x[1, ], n_test = 1), class = "sparsevi_error_argument")
  y <- suppressWarnings(as_dtm(matrix(c(0.5, 1, 2, 3), 2, dimnames = list(NULL, c("a", "b")))))
  expect_error(split_heldout(y, n_test = 1, by = "tokens"), class = "sparsevi_error_argument")
})

test_that("a split's parts given where documents go say which part to give", {
  x <- simulate_lda(D = 30, V = 20, K = 2, seed = 1)$dtm
  sp <- split_heldout(x, n_test = 5, seed = 1)
  fit <- fit_lda(sp$train, K = 2, passes = 2, seed = 1)
  # the test part (observed and held-out words of the same documents)
  expect_error(predict(fit, sp$test), class = "sparsevi_error_input",
               regexp = "sp$test$observed", fixed = TRUE)
  expect_error(fit_lda(sp$test, K = 2), class = "sparsevi_error_input",
               regexp = "sp$test$observed", fixed = TRUE)
  # the whole split
  expect_error(fit_lda(sp, K = 2), class = "sparsevi_error_input",
               regexp = "sp$train", fixed = TRUE)
  expect_error(predict(fit, sp), class = "sparsevi_error_input",
               regexp = "sp$train", fixed = TRUE)
  # what the messages name works
  expect_identical(dim(predict(fit, sp$test$observed)), c(5L, 2L))
  expect_true(is.finite(as.numeric(heldout_loglik(fit, sp$test))))
})
