# Unloading and reloading the package with fits alive (issue 36, item 1):
# each probe runs in its own R process (a crash there must not take the test
# run with it) and prints "OK" when it gets to its end.

reload_fits <- c(
  'suppressMessages(library(sparsevi))',
  'x <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 40, alpha = 0.1, eta = 0.05, seed = 1)$dtm',
  'f <- fit_lda(x, K = 3, passes = 2, seed = 1, progress = FALSE)',
  'g <- fit_lda(x, K = 3, passes = 2, seed = 1, progress = FALSE, local = "vb", global = "memoized")',
  'tb <- .Call(sparsevi:::ffi_svi_table_alloc, 3L, 5L); tb[2] <- 7',
  'stopifnot(.Call(sparsevi:::ffi_svi_is_table, g$lambda), .Call(sparsevi:::ffi_svi_is_table, tb))',
  'lam <- g$lambda[, ]; pred <- predict(f, x[1:5, ])'
)

test_that("fits survive pkgload::unload() and library(): they print, predict and save", {
  skip_on_cran()
  skip_if_not_installed("pkgload")
  res <- run_child(c(reload_fits,
    'pkgload::unload("sparsevi")',
    'invisible(gc())',
    'stopifnot(sum(tb) == 7, identical(g$lambda[, ], lam))',
    'suppressMessages(library(sparsevi))',
    'invisible(capture.output(print(f), print(g)))',
    'stopifnot(isTRUE(all.equal(predict(f, x[1:5, ]), pred)))',
    'invisible(terms(g))',
    'path <- tempfile(); saveRDS(list(f, g, tb), path); back <- readRDS(path)',
    'stopifnot(identical(back[[2]]$lambda[, ], lam), sum(back[[3]]) == 7)',
    'rm(f, g, tb, back); invisible(gc())',
    'cat("OK\\n")'))
  expect_identical(res$status, 0L, info = paste(res$output, collapse = "\n"))
  expect_true("OK" %in% res$output)
})

test_that("unloadNamespace() and dropping a fit after it do not crash, nor does quitting", {
  skip_on_cran()
  res <- run_child(c(reload_fits,
    'unloadNamespace("sparsevi")',
    'stopifnot(!"sparsevi" %in% names(getLoadedDLLs()))',
    'rm(f); invisible(gc())',
    'stopifnot(sum(tb) == 7, identical(g$lambda[, ], lam))',
    'cat("OK\\n")'))
  expect_identical(res$status, 0L, info = paste(res$output, collapse = "\n"))
  expect_true("OK" %in% res$output)
})

test_that("unloading after a fit_vdp() call, with no topic table made, does not crash", {
  skip_on_cran()
  # each fit_vdp() call's workspace holder keeps a finalizer in the DLL
  # until it is collected: the unload must run it first
  probe <- c('suppressMessages(library(sparsevi))',
             'X <- matrix(stats::rnorm(40), 20); invisible(gc())',
             'f <- fit_vdp(X, seed = 1, progress = FALSE)',
             'unloadNamespace("sparsevi")',
             'invisible(gc())',
             'stopifnot(inherits(f, "sparsevi_vdp"))',
             'cat("OK\\n")')
  res <- run_child(probe)
  expect_identical(res$status, 0L, info = paste(res$output, collapse = "\n"))
  expect_true("OK" %in% res$output)
})
