library(testthat)
library(sparsevi)

test_check("sparsevi")
