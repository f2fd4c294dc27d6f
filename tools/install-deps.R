# Installs, from CRAN, what building and checking sparsevi needs and the
# machine lacks: knitr and markdown (vignettes, no pandoc needed), testthat and
# generics (small, no compiled code: the tests of tidy(), glance() and
# augment() skip without it).
# Run-time dependencies are base R and Matrix, a recommended package.
need <- c("Matrix", "testthat", "knitr", "markdown", "generics")
have <- rownames(installed.packages())
missing <- setdiff(need, have)
if (length(missing)) {
  repos <- getOption("repos")
  if (is.null(repos) || identical(unname(repos["CRAN"]), "@CRAN@")) {
    repos <- c(CRAN = "https://cloud.r-project.org")
  }
  message("Installing from CRAN: ", paste(missing, collapse = ", "))
  # fs (a dependency of testthat) builds its bundled libuv when the system has none
  Sys.setenv(USE_BUNDLED_LIBUV = "1")
  install.packages(missing, repos = repos)
}
still <- setdiff(need, rownames(installed.packages()))
if (length(still)) stop("Could not install: ", paste(still, collapse = ", "))
