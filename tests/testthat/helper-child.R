# Runs R code in a child R process (Rscript through system2()), with this
# process's library paths: for probes that may crash the process, unload the
# package or signal it. Returns the output lines and the exit status.
run_child <- function(code) {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(code, script)
  rscript <- file.path(R.home("bin"), "Rscript")
  env <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
  out <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(script)),
                                  stdout = TRUE, stderr = TRUE, env = env))
  list(output = out, status = attr(out, "status") %||% 0L)
}

# Code for a child: the function `name` of sparsevi's namespace sends this
# process an interrupt (SIGINT) at the start of its `at`-th call, as Ctrl-C
# would, and waits for it to land.
child_interrupt_at <- function(name, at) {
  c(sprintf('local({ calls <- 0; ns <- asNamespace("sparsevi"); orig <- get("%s", ns)', name),
    sprintf('  utils::assignInNamespace("%s", function(...) {', name),
    sprintf('    calls <<- calls + 1; if (calls == %d) { tools::pskill(Sys.getpid(), tools::SIGINT); Sys.sleep(2) }', at),
    '    orig(...)',
    '  }, ns = "sparsevi") })')
}
