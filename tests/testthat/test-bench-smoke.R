# Every benchmark script of the installed package's bench directory runs in
# its smoke mode (SPARSEVI_BENCH_SMOKE=1: tiny simulated data, no peers, no
# ../shared/data, results in a temporary directory), each in a child
# Rscript with this session's library path: a script that errors at HEAD
# fails here. Run from a temporary directory, so that a script leaning on the
# package root (inst/bench/..., ../shared/data) fails too.

bench_scripts <- function() {
  dir <- system.file("bench", package = "sparsevi")
  if (!nzchar(dir)) return(character(0))
  s <- list.files(dir, pattern = "\\.R$", full.names = TRUE)
  s[!basename(s) %in% c("bench-log.R", "bench-data.R", "run.R")]
}

test_that("every benchmark script runs in smoke mode", {
  skip_on_cran()
  scripts <- bench_scripts()
  skip_if(!length(scripts), "the installed package has no bench directory")
  out_dir <- tempfile("bench-smoke-")
  work <- tempfile("bench-wd-")
  dir.create(out_dir)
  dir.create(work)
  old <- setwd(work)
  on.exit(setwd(old), add = TRUE)
  env <- c(SPARSEVI_BENCH_SMOKE = "1", SPARSEVI_BENCH_SMOKE_DIR = out_dir,
           R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep),
           OMP_NUM_THREADS = "1")
  old_env <- Sys.getenv(names(env), unset = NA)
  do.call(Sys.setenv, as.list(env))
  on.exit({
    for (n in names(old_env)) {
      if (is.na(old_env[[n]])) Sys.unsetenv(n) else do.call(Sys.setenv, as.list(old_env[n]))
    }
  }, add = TRUE)
  # the benchmarks' own knobs must not leak into the smoke runs
  knobs <- grep("^(SPARSEVI_BENCH_|SCVB0_)", names(Sys.getenv()), value = TRUE)
  knobs <- setdiff(knobs, c("SPARSEVI_BENCH_SMOKE", "SPARSEVI_BENCH_SMOKE_DIR"))
  if (length(knobs)) {
    saved <- Sys.getenv(knobs)
    Sys.unsetenv(knobs)
    on.exit(do.call(Sys.setenv, as.list(saved)), add = TRUE)
  }
  rscript <- file.path(R.home("bin"), "Rscript")
  t_all <- proc.time()[["elapsed"]]
  for (s in scripts) {
    log <- tempfile("bench-smoke-log-")
    t0 <- proc.time()[["elapsed"]]
    status <- system2(rscript, shQuote(s), stdout = log, stderr = log)
    took <- proc.time()[["elapsed"]] - t0
    msg <- if (status != 0) paste(utils::tail(readLines(log, warn = FALSE), 20), collapse = "\n")
    expect(status == 0, sprintf("bench script %s failed in smoke mode (status %d, %.1f s):\n%s",
                                basename(s), status, took, msg))
  }
  # nothing was written next to the installed scripts
  results <- system.file("bench", "results", package = "sparsevi")
  if (nzchar(results)) {
    fresh <- file.info(list.files(results, full.names = TRUE))$mtime
    expect_false(any(fresh > Sys.time() - (proc.time()[["elapsed"]] - t_all) - 1))
  }
  expect_true(length(list.files(out_dir)) > 0)
})
