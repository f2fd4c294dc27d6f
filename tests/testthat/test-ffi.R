# .Call() with a native symbol object does not check the number of
# arguments against the registration, so a call with too few would read
# past its arguments in C: every .Call() of the package's R functions must
# pass the registered number.
test_that("every .Call() passes the number of arguments its routine is registered with", {
  ns <- asNamespace("sparsevi")
  reg <- getDLLRegisteredRoutines("sparsevi")$.Call
  n_args <- vapply(reg, function(r) r$numParameters, 1)
  names(n_args) <- vapply(reg, function(r) r$name, "")
  found <- 0L
  walk <- function(e, where) {
    if (is.call(e)) {
      if (identical(e[[1]], quote(.Call)) && is.symbol(e[[2]])) {
        name <- as.character(e[[2]])
        if (name %in% names(n_args)) {
          found <<- found + 1L
          expect_identical(length(e) - 2L, as.integer(n_args[[name]]),
                           info = paste(where, name))
        }
      }
      # empty arguments (x[, 1]) are the empty symbol: skipped
      args <- as.list(e)[-1]
      for (i in seq_along(args)) {
        if (!(is.symbol(args[[i]]) && !nzchar(as.character(args[[i]])))) walk(args[[i]], where)
      }
    }
  }
  for (f in ls(ns, all.names = TRUE)) {
    fun <- get(f, envir = ns)
    if (is.function(fun) && !is.primitive(fun)) walk(body(fun), f)
  }
  expect_gt(found, 50L)
})
