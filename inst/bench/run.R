# Regenerates any or every benchmark results file. From the package root:
#
#   nice -n 19 Rscript inst/bench/run.R lda-sparse scvb0     # these two
#   nice -n 19 Rscript inst/bench/run.R all                  # every script
#   nice -n 19 Rscript inst/bench/run.R --smoke all          # smoke mode
#   nice -n 19 Rscript inst/bench/run.R --list               # the scripts
#
# Each script runs in its own Rscript process, from the package root, with
# the environment of this one (R_LIBS: the library holding the sparsevi under
# test; SPARSEVI_PEER_LIB: the peers' library, e.g. /work/peerlib, for
# topicmodels, text2vec and mclust; each script's own SPARSEVI_BENCH_* and
# SCVB0_* knobs, described at its top). The corpora are read from
# ../shared/data relative to the package root. Every script appends a
# section to inst/bench/results/<name>.txt headed by the commit, the command
# and the settings that ran (inst/bench/bench-log.R); a few write a file of
# another name, given at their top. Scripts that compare two builds
# (engines, engines-identical, obs-refactor, and those taking
# SPARSEVI_BENCH_LIB) need the other build's library in the environment
# variable their header names.
#
# --smoke sets SPARSEVI_BENCH_SMOKE=1: tiny simulated data, no peers, no
# shared data, results in a temporary directory (what
# tests/testthat/test-bench-smoke.R runs). The exit status is the number of
# scripts that failed (0: all ran).

args <- commandArgs(trailingOnly = TRUE)
here <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
helpers <- c("bench-log", "bench-data", "run")
scripts <- setdiff(sub("\\.R$", "", list.files(here, pattern = "\\.R$")), helpers)

if (!length(args) || any(args %in% c("-h", "--help"))) {
  cat("usage: Rscript inst/bench/run.R [--smoke] all | --list | <script> ...\n",
      "scripts:", paste(scripts, collapse = " "), "\n")
  quit(status = if (length(args)) 0 else 1)
}
if ("--list" %in% args) {
  cat(scripts, sep = "\n")
  quit(status = 0)
}
smoke <- "--smoke" %in% args
if (smoke) Sys.setenv(SPARSEVI_BENCH_SMOKE = "1")
want <- sub("\\.R$", "", setdiff(args, "--smoke"))
if ("all" %in% want) want <- scripts
unknown <- setdiff(want, scripts)
if (length(unknown)) {
  stop("no such benchmark: ", paste(unknown, collapse = ", "),
       "; the scripts are: ", paste(scripts, collapse = ", "))
}
if (!smoke && !dir.exists(file.path("..", "shared", "data")) && !nzchar(Sys.getenv("SPARSEVI_DATA"))) {
  stop("Run from the package root, with the shared data in ../shared/data.")
}

rscript <- file.path(R.home("bin"), "Rscript")
failed <- character(0)
for (s in want) {
  path <- file.path(here, paste0(s, ".R"))
  t0 <- proc.time()[["elapsed"]]
  cat(sprintf("== %s: %s\n", s, path))
  status <- system2(rscript, path)
  cat(sprintf("== %s: %s in %.1f s\n", s, if (status == 0) "done" else
    sprintf("FAILED (status %d)", status), proc.time()[["elapsed"]] - t0))
  if (status != 0) failed <- c(failed, s)
}
if (length(failed)) cat("failed:", paste(failed, collapse = " "), "\n")
quit(status = length(failed))
