# Topic tables outside R's heap (src/table.c): ordinary matrices to R, freed
# with the vector that holds them, and collected for when too many pile up.

is_table <- function(x) .Call(sparsevi:::ffi_svi_is_table, x)
table_info <- function(reset = FALSE) {
  i <- .Call(sparsevi:::ffi_svi_table_info, reset)
  list(live = i[1], trigger = i[2], collections = i[3], peak = i[4])
}

test_that("a table is an ordinary numeric matrix to R", {
  m <- .Call(sparsevi:::ffi_svi_table_alloc, 3L, 4L)
  expect_true(is_table(m))
  expect_identical(dim(m), c(3L, 4L))
  expect_true(is.double(m) && is.matrix(m))
  m[] <- as.double(1:12)
  ref <- matrix(as.double(1:12), 3, 4)
  expect_identical(m, ref)
  expect_identical(m[2, 3], 8)
  expect_identical(colSums(m), colSums(ref))
  expect_identical(t(m), t(ref))
  # a copy is an ordinary vector, and writing it leaves the table alone
  m2 <- m
  m2[1, 1] <- -1
  expect_identical(m[1, 1], 1)
  expect_false(is_table(m2))
  # saved and read back: an ordinary matrix with the same values
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f))
  saveRDS(m, f)
  back <- readRDS(f)
  expect_false(is_table(back))
  expect_identical(back, ref)
  expect_identical(unserialize(serialize(m, NULL)), ref)
})

test_that("a table's memory is counted while it lives and returned when R collects it", {
  gc()
  before <- table_info()$live
  expect_identical(table_info(reset = TRUE)$peak, before)
  m <- .Call(sparsevi:::ffi_svi_table_alloc, 100L, 1000L)
  expect_identical(table_info()$live - before, 8 * 100 * 1000)
  rm(m)
  gc()
  expect_identical(table_info()$live, before)
  # the peak remembers it
  expect_identical(table_info()$peak - before, 8 * 100 * 1000)
})

test_that("dropped tables are collected before they pile up past the trigger", {
  gc()
  info <- table_info()
  # tables of a third of the trigger, each dropped at once: without
  # collections of its own, the fourth would pass the trigger
  n <- as.integer(ceiling(info$trigger / 8 / 3 / 1000))
  for (i in 1:6) {
    m <- .Call(sparsevi:::ffi_svi_table_alloc, 1000L, n)
    m[1] <- i
    rm(m)
  }
  after <- table_info()
  expect_gt(after$collections, info$collections)
  # what is left uncollected stays within the trigger
  expect_lte(after$live, after$trigger)
  gc()
  expect_identical(table_info()$live, info$live)
})

test_that("a default fit's topics are held in a table, and equal an ordinary matrix's fit", {
  sim <- simulate_lda(D = 60, V = 40, K = 3, doc_length = 30, seed = 1)
  fit <- fit_lda(sim$dtm, K = 3, init = "seeded", passes = 2, seed = 1, threads = 1,
                 progress = FALSE)
  expect_true(is_table(fit$lambda))
  lam <- fit$lambda + 0
  expect_false(is_table(lam))
  expect_identical(lam, unserialize(serialize(fit$lambda, NULL)))
  again <- update(unserialize(serialize(fit, NULL)), sim$dtm, passes = 1,
                  progress = FALSE)
  more <- update(fit, sim$dtm, passes = 1, progress = FALSE)
  expect_identical(again$lambda + 0, more$lambda + 0)
  expect_identical(again$doc_topic, more$doc_topic)
})
