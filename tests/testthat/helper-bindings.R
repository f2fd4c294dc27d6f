# Replace a binding of the namespace until the calling test ends
# (testthat 3.1.6 has no local_mocked_bindings()).
swap_binding <- function(name, value, env = parent.frame()) {
  orig <- get(name, envir = asNamespace("sparsevi"))
  utils::assignInNamespace(name, value, ns = "sparsevi")
  withr::defer(utils::assignInNamespace(name, orig, ns = "sparsevi"), envir = env)
}
