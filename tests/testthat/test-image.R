test_that("image_patches cuts windows in column-major pixel order", {
  img <- matrix(as.double(1:(10 * 12)), 10, 12)
  P <- image_patches(img, size = 4, stride = 3, remove_mean = FALSE)
  expect_equal(dim(P), c(3L * 3L, 16L))
  pos <- attr(P, "positions")
  for (i in seq_len(nrow(P))) {
    r <- pos[i, 1]
    c <- pos[i, 2]
    expect_equal(P[i, ], as.vector(img[r:(r + 3), c:(c + 3)]))
  }
  Pm <- image_patches(img, size = 4, stride = 3)
  expect_equal(rowMeans(Pm), rep(0, nrow(Pm)))
  expect_equal(Pm, P - rowMeans(P), ignore_attr = TRUE)
  expect_error(image_patches(img, size = 11), class = "sparsevi_error_argument")
  expect_error(image_patches(img, stride = 0), class = "sparsevi_error_argument")
  expect_error(image_patches("a"), class = "sparsevi_error_argument")
  img[2, 2] <- NA
  expect_error(image_patches(img), class = "sparsevi_error_data")
})

test_that("read_pgm reads binary and plain graymaps", {
  img <- matrix(c(0, 0.5, 1, 0.25, 0.75, 1), 2, 3)
  path <- tempfile(fileext = ".pgm")
  write_pgm(img, path)
  expect_equal(read_pgm(path), round(img * 255) / 255)
  plain <- tempfile(fileext = ".pgm")
  writeLines(c("P2", "# a comment", "3 2", "4", "0 1 2", "3 4 4"), plain)
  expect_equal(read_pgm(plain), matrix(c(0, 3, 1, 4, 2, 4) / 4, 2, 3))
  junk <- tempfile()
  writeLines("hello", junk)
  expect_error(read_pgm(junk), class = "sparsevi_error_data")
  expect_error(read_pgm(tempfile()), class = "sparsevi_error_argument")
  shipped <- system.file("extdata", "nagasaki-boats.pgm", package = "sparsevi")
  skip_if(shipped == "")
  photo <- read_pgm(shipped)
  expect_equal(dim(photo), c(409L, 512L))
  expect_true(all(photo >= 0 & photo <= 1))
})

test_that("a zero-mean mixture of patches fits and scores held-out patches", {
  shipped <- system.file("extdata", "nagasaki-boats.pgm", package = "sparsevi")
  skip_if(shipped == "")
  photo <- read_pgm(shipped)
  P <- image_patches(photo[1:120, 1:160], size = 4, stride = 4)
  fit <- fit_mixture(P[1:900, ], K = 6, likelihood = "zm_gaussian", L = 2, seed = 1,
                     passes = 5, progress = FALSE)
  expect_true(is.finite(heldout_loglik(fit, P[901:1200, ])))
  expect_true(all(diff(fit$trace$objective) >= -1e-9 * abs(fit$trace$objective[-1])))
})
