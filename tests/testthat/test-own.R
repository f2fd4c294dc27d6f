# The one ownership guard of in-place writes (src/own.c): every entry point
# that may write an R object it is given writes it only when the package
# owns it (R does not share it, or it carries the flag "sparsevi_owned");
# given a shared object it copies it (or refuses it), and the caller's
# object is unchanged. "Shared" is R's MAYBE_SHARED: bound twice here.

ns <- asNamespace("sparsevi")
addr <- function(x) .Internal(address(x))
table_of <- function(K = 3, V = 5, seed = 1) {
  set.seed(seed)
  matrix(stats::runif(K * V) + 0.5, K, V)
}

test_that("the guard: a bound object is shared, a flagged one is owned", {
  x <- table_of()
  expect_true(.Call(ns$ffi_svi_owns, x)) # one binding: not shared
  y <- x
  expect_false(.Call(ns$ffi_svi_owns, x))
  expect_true(.Call(ns$ffi_svi_owns, x + 0)) # a value no binding holds
  z <- .Call(ns$ffi_svi_give_up, x + 0)
  w <- z
  expect_true(.Call(ns$ffi_svi_owns, z))
  expect_true(attr(z, "sparsevi_owned"))
  expect_error(.Call(ns$ffi_svi_give_up, quote(a)), class = "simpleError")
  # R's shared constants are never flagged (TRUE, NA, a list): an attribute
  # set on TRUE in place reached every TRUE of the session and overflowed
  # the C stack in a later call (the fuzz run)
  for (v in list(TRUE, NA, list(1), "a")) {
    expect_error(.Call(ns$ffi_svi_give_up, v), class = "simpleError")
  }
  expect_null(attributes(TRUE))
})

test_that("ffi_lda_store_new(in_place) copies a shared lambda, converts its own", {
  lambda <- table_of()
  held <- lambda
  keep <- lambda + 0
  opts <- list(tot = rowSums(lambda), eta = 0.1, t = 0, in_place = TRUE)
  st <- .Call(ns$ffi_lda_store_new, lambda, opts)
  expect_identical(lambda, keep)
  expect_null(attr(lambda, "sparsevi_owned"))
  expect_false(identical(addr(st$X), addr(lambda)))
  expect_equal(st$X, keep - 0.1, ignore_attr = TRUE)
  # a table only the store will hold: converted in place and flagged
  own <- .Call(ns$ffi_lda_store_new, keep + 0, opts)
  expect_true(attr(own$X, "sparsevi_owned"))
  expect_identical(c(own$X), c(st$X))
})

test_that("ffi_lda_store_counts(in_place) copies a shared table", {
  S <- table_of()
  held <- S
  keep <- S + 0
  for (kp in 0:1) {
    st <- .Call(ns$ffi_lda_store_counts, S,
                list(t = 0, K = NULL, V = NULL, in_place = TRUE, keep = kp))
    expect_identical(S, keep)
    expect_null(attr(S, "sparsevi_owned"))
    expect_false(identical(addr(st$X), addr(S)))
  }
  st <- .Call(ns$ffi_lda_store_counts, S, list(t = 0, K = NULL, V = NULL, in_place = TRUE,
                                               keep = 1L))
  expect_equal(st$X, keep, ignore_attr = TRUE)
})

test_that("ffi_lda_store_lambda(in_place) copies a shared store table", {
  st <- ns$lda_store_counts(table_of(), 0)
  X <- st$X
  keep <- X + 0
  out <- .Call(ns$ffi_lda_store_lambda, X, st$meta, list(eta = 0.2, in_place = TRUE))
  expect_identical(X + 0, keep)
  expect_false(identical(addr(out$lambda), addr(X)))
  expect_equal(out$lambda, keep + 0.2, ignore_attr = TRUE)
})

test_that("ffi_lda_store_copy_into writes only a table the package owns", {
  st <- ns$lda_store_counts(table_of(seed = 2), 3)
  dest <- table_of(seed = 3)
  held <- dest
  keep <- dest + 0
  cp <- .Call(ns$ffi_lda_store_copy_into, st$X, st$meta, dest)
  expect_identical(dest, keep) # shared, not flagged: a new table instead
  expect_false(identical(addr(cp$X), addr(dest)))
  expect_identical(c(cp$X), c(st$X))
  # a table given up to the package (a spare of an earlier lap): reused
  spare <- .Call(ns$ffi_svi_give_up, table_of(seed = 4))
  cp2 <- .Call(ns$ffi_lda_store_copy_into, st$X, st$meta, spare)
  expect_identical(addr(cp2$X), addr(spare))
  expect_identical(c(cp2$X), c(st$X))
})

test_that("the store's in-place updates refuse a shared store", {
  st <- ns$lda_store_counts(table_of(seed = 5), 1)
  X <- st$X # (now held by st and by X: shared)
  keep <- X + 0
  S <- list(words = c(0L, 2L), x = rep(1, 6))
  expect_error(.Call(ns$ffi_lda_store_update, X, st$meta, S$words, S$x,
                     list(rho = 0.5, mult = 1, rescale_below = 1e-100, t = 2)),
               "shared")
  expect_error(.Call(ns$ffi_lda_store_add, X, st$meta, S$words, S$x, list(sign = 1)),
               "shared")
  expect_error(.Call(ns$ffi_lda_store_recount, X, st$meta, list(t = 2)), "shared")
  expect_identical(X + 0, keep)
  # a shared meta alone is refused too (X and meta are written together)
  st2 <- ns$lda_store_counts(table_of(seed = 8), 1)
  meta <- st2$meta
  m0 <- meta + 0
  expect_error(.Call(ns$ffi_lda_store_add, st2$X, meta, S$words, S$x, list(sign = 1)),
               "shared")
  expect_identical(meta, m0)
  # the R side copies a shared store before writing (lda_store_own())
  own <- ns$lda_store_own(st)
  ns$lda_store_add(own, S, 1)
  expect_identical(X + 0, keep)
  expect_equal(own$X[, 1], keep[, 1] + 1)
})

test_that("ffi_lda_store_release writes nothing on a table it does not own", {
  X <- table_of()
  attr(X, "other") <- "kept"
  keep <- X # (shared)
  out <- .Call(ns$ffi_lda_store_release, X)
  expect_identical(X, keep)
  expect_identical(attr(out, "other"), "kept")
  # a flagged table loses the flag
  Y <- .Call(ns$ffi_svi_give_up, table_of() + 0)
  expect_null(attr(.Call(ns$ffi_lda_store_release, Y), "sparsevi_owned"))
})

test_that("ffi_lda_store_save flags the table it saved and keeps its values", {
  st <- ns$lda_store_counts(table_of(seed = 6), 2)
  keep <- st$X + 0
  keep <- unname(keep)
  path <- tempfile(fileext = ".bin")
  on.exit(unlink(path))
  .Call(ns$ffi_lda_store_save, st$X, st$meta, path)
  expect_true(attr(st$X, "sparsevi_owned"))
  expect_identical(c(st$X), c(keep))
  back <- .Call(ns$ffi_lda_store_load, path)
  expect_identical(back$X + 0, keep)
  expect_null(attr(back$X, "sparsevi_owned"))
})

test_that("ffi_lda_ope_rows(in_place) copies a shared table; topic_word copies unflagged beta", {
  X <- table_of()
  held <- X
  keep <- X + 0
  out <- .Call(ns$ffi_lda_ope_rows, X, list(r_sums = TRUE, divide = TRUE, in_place = TRUE,
                                            given = FALSE, mark = 0L))
  expect_identical(X, keep)
  expect_equal(out, keep / rowSums(keep))
  beta <- keep / rowSums(keep)
  b0 <- beta + 0
  held_beta <- beta
  tw <- .Call(ns$ffi_lda_ope_topic_word, beta, list(NULL, letters[1:5]))
  expect_identical(beta, b0)
  expect_null(colnames(beta))
  expect_identical(colnames(tw), letters[1:5])
})

test_that("SCVB0's local step never writes buffers it does not own", {
  sim <- simulate_lda(D = 12, V = 15, K = 3, doc_length = 20, seed = 1)
  x <- sim$dtm
  lambda <- table_of(3, 15, seed = 7)
  settings <- sparsevi:::cvb0_settings(list(alpha = 0.1))
  opts <- sparsevi:::cvb0_opts(settings, 0, TRUE)
  ref <- .Call(ns$ffi_lda_local_cvb0, x, 15L, lambda, NULL, opts, c(0, 1), 1L,
               sparsevi:::cvb0_buffers())
  scratch <- rep(-7, 5000)
  marks <- rep(-1L, 20)
  sbuf <- rep(-3, 200)
  held <- list(scratch, marks, sbuf)
  k1 <- scratch + 0; k2 <- marks + 0L; k3 <- sbuf + 0
  res <- .Call(ns$ffi_lda_local_cvb0, x, 15L, lambda, NULL, opts, c(0, 1), 1L,
               sparsevi:::cvb0_buffers(scratch = scratch, marks = marks, summary = sbuf))
  expect_identical(scratch, k1)
  expect_identical(marks, k2)
  expect_identical(sbuf, k3)
  expect_identical(res$x[seq_along(ref$x)], ref$x)
  expect_identical(res$theta, ref$theta)
  # the session's own buffers (given up) are used, with the same result
  own <- sparsevi:::cvb0_buffers(scratch = sparsevi:::cvb0_scratch(5000),
                                 marks = sparsevi:::cvb0_marks(15),
                                 summary = .Call(ns$ffi_svi_give_up, rep(0, 200)))
  res2 <- .Call(ns$ffi_lda_local_cvb0, x, 15L, lambda, NULL, opts, c(0, 1), 1L, own)
  expect_identical(addr(res2$x), addr(own$summary))
  expect_identical(res2$x[seq_along(ref$x)], ref$x)
})

test_that("the UCI parser refuses output vectors it does not own", {
  doc <- integer(4); word <- integer(4); count <- double(4)
  held <- list(doc, word, count)
  st <- .Call(ns$ffi_dtm_uci_state)
  expect_error(.Call(ns$ffi_dtm_parse_uci, charToRaw("1 1 1\n"), TRUE, st, doc, word, count, 0),
               "shared")
  expect_identical(doc, integer(4))
})
