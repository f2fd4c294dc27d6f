# What every benchmark shares: where it lives, where it writes, the results
# logger and the header of each section (commit, command, and the settings
# that ran, read back from the fit objects).
#
# A script finds this file next to itself (run from the package root as
# `Rscript inst/bench/<name>.R`, by inst/bench/run.R, or from an installed
# package's bench directory, as tests/testthat/test-bench-smoke.R does):
#
#   bench_dir <- local({
#     a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
#     d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
#            system.file("bench", package = "sparsevi"))
#     d[file.exists(file.path(d, "bench-log.R"))][1]
#   })
#   source(file.path(bench_dir, "bench-log.R"))
#
# Smoke mode (SPARSEVI_BENCH_SMOKE=1): tiny simulated data, no peers, no
# ../shared/data, results written to a temporary directory (never to
# inst/bench/results); it checks that a script runs at HEAD, not what it
# measures.

if (!exists("bench_dir", inherits = TRUE)) bench_dir <- file.path("inst", "bench")

# TRUE in smoke mode.
bench_smoke <- function() identical(Sys.getenv("SPARSEVI_BENCH_SMOKE"), "1")

# The results file `name` (e.g. "lda-sparse.txt"): `env` (default
# SPARSEVI_BENCH_OUT) when set, else inst/bench/results/<name>; in smoke mode
# a file of SPARSEVI_BENCH_SMOKE_DIR (default: the session's temporary
# directory), whatever else is set.
bench_out <- function(name, env = "SPARSEVI_BENCH_OUT") {
  if (bench_smoke()) {
    dir <- Sys.getenv("SPARSEVI_BENCH_SMOKE_DIR", tempdir())
    dir.create(dir, recursive = TRUE, showWarnings = FALSE)
    return(file.path(dir, name))
  }
  out <- Sys.getenv(env, "")
  if (!nzchar(out)) out <- file.path(bench_dir, "results", name)
  dir.create(dirname(out), recursive = TRUE, showWarnings = FALSE)
  out
}

# The shared corpora: ../shared/data relative to the working directory (the
# package root), or SPARSEVI_DATA. Smoke mode reads no shared data.
bench_data_dir <- function(must_exist = TRUE) {
  if (bench_smoke()) stop("internal: smoke mode reads no shared data (use bench_sim_corpus())")
  d <- Sys.getenv("SPARSEVI_DATA", file.path("..", "shared", "data"))
  if (must_exist && !dir.exists(d)) {
    stop("Run the benchmarks from the package root, with the shared data in ../shared/data (or set SPARSEVI_DATA).")
  }
  d
}

# The peers' library (SPARSEVI_PEER_LIB, e.g. /work/peerlib) appended to the
# library path, so that sparsevi itself still comes from the library under
# test. Returns FALSE in smoke mode (no peers) or when unset.
bench_use_peers <- function() {
  if (bench_smoke()) return(FALSE)
  lib <- Sys.getenv("SPARSEVI_PEER_LIB", "")
  if (!nzchar(lib)) return(FALSE)
  .libPaths(c(.libPaths(), lib))
  TRUE
}
# requireNamespace() that says no in smoke mode.
bench_has <- function(pkg) !bench_smoke() && requireNamespace(pkg, quietly = TRUE)

# A small simulated corpus (smoke mode's stand-in for every corpus).
bench_sim_corpus <- function(D = 60, V = 40, K = 4, seed = 1, doc_length = 40) {
  sparsevi::simulate_lda(D = D, V = V, K = K, doc_length = doc_length, seed = seed)$dtm
}

# The commit of the checkout the benchmark runs in (short hash), with
# "+uncommitted" when the package's sources (R/, src/, DESCRIPTION), the
# running script or the shared helpers differ from it; "unknown" outside a
# git checkout (an installed package).
bench_commit <- function() {
  h <- tryCatch(suppressWarnings(system2("git", c("rev-parse", "--short", "HEAD"),
                                         stdout = TRUE, stderr = FALSE)),
                error = function(e) character(0))
  if (!length(h) || !is.null(attr(h, "status"))) return("unknown (not a git checkout)")
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  paths <- c("R", "src", "DESCRIPTION", file.path(bench_dir, c("bench-log.R", "bench-data.R")),
             if (length(f)) f[1])
  dirty <- tryCatch(suppressWarnings(system2("git", c("status", "--porcelain", "--",
                                                      shQuote(paths)),
                                             stdout = TRUE, stderr = FALSE)),
                    error = function(e) character(0))
  paste0(h[1], if (length(dirty)) "+uncommitted" else "")
}

# The niceness this process runs at, as the command's prefix ("nice -n 19 "
# or "" at 0): read from the system, not assumed.
bench_nice <- function() {
  n <- suppressWarnings(tools::psnice(Sys.getpid()))
  if (is.na(n) || n == 0L) "" else sprintf("nice -n %d ", n)
}

# The command that reproduces this run: the benchmark environment variables
# that are set, the niceness it ran at, then the script and its arguments.
bench_command <- function() {
  env <- Sys.getenv()
  keep <- (grepl("^(SPARSEVI_|SCVB0_|OMP_)", names(env)) | names(env) == "R_LIBS") &
    !names(env) %in% c("SPARSEVI_BENCH_SMOKE_DIR")
  vars <- if (any(keep)) paste0(names(env)[keep], "=", shQuote(env[keep]), collapse = " ")
  a <- commandArgs(FALSE)
  f <- sub("^--file=", "", grep("^--file=", a, value = TRUE))
  script <- if (length(f)) f[1] else "<sourced>"
  args <- commandArgs(trailingOnly = TRUE)
  paste(c(vars, paste0(bench_nice(), "Rscript"), script, if (length(args)) shQuote(args)),
        collapse = " ")
}

# An LDA training state for scripts that call an engine's steps directly,
# from its fields (lambda, store, gibbs, ...): builds with the topics object
# (notes/architecture.md §5) hold the topic fields in it, older ones in the
# state itself.
bench_lda_state <- function(...) {
  state <- list(...)
  to <- get0("lda_state_topics", asNamespace("sparsevi"), inherits = FALSE)
  if (is.null(to)) state else to(state)
}

# A fit's training state as its engine's local step reads it: with its
# lambda (lda_fit_state(); a build before it kept lambda in the state too).
bench_fit_state <- function(fit) {
  f <- get0("lda_fit_state", asNamespace("sparsevi"), inherits = FALSE)
  if (is.null(f)) fit$state else f(fit)
}

# A topic field of an LDA training state or fit state (by its old name:
# lambda, S, store, gibbs, beta), in either form.
bench_lda_topics <- function(state, name) {
  tp <- state$topics
  if (is.null(tp)) return(state[[name]])
  tp[[if (identical(name, "gibbs")) "sparse" else name]]
}

# The state with the store `st` in place of its dense topics, in either form.
bench_lda_with_store <- function(state, st) {
  if (is.null(state$topics)) {
    state$store <- st
    state$lambda <- NULL
    return(state)
  }
  state$topics$store <- st
  state$topics$lambda <- NULL
  state
}

# The settings that actually ran, read back from a fit: an LDA fit's control
# list (engine, global step, start, priors, schedule, batches, restarts and
# the engine's own controls), a mixture's likelihood, prior, hyperparameters
# and control (n_init, schedule), a VDP fit's control and prior. One line,
# "name=value" pairs.
bench_settings <- function(fit) {
  fmt <- function(v) {
    if (is.null(v)) return(NULL)
    if (is.list(v) || is.matrix(v) || length(v) > 4L || is.function(v)) return(NULL)
    if (is.numeric(v)) return(paste(format(v, digits = 6), collapse = ","))
    paste(as.character(v), collapse = ",")
  }
  pairs <- function(lst, keys = names(lst)) {
    keys <- intersect(keys, names(lst))
    v <- lapply(keys, function(k) fmt(lst[[k]]))
    keep <- !vapply(v, is.null, TRUE)
    if (!any(keep)) return(character(0))
    paste0(keys[keep], "=", unlist(v[keep]))
  }
  ctl <- .subset2(fit, "control")
  if (inherits(fit, "sparsevi_lda")) {
    first <- c("local", "global", "K", "L", "init", "alpha", "eta", "step_scale", "tau",
               "kappa", "n_batches", "batch_size", "restarts", "seed", "threads")
    skip <- c("n_docs", "n_tokens", "n_tokens_docs", "global_step", "batches",
              "init_lambda", "cvb0_settings", "sync", "dead_share", "source_batches")
    rest <- setdiff(names(ctl), c(first, skip))
    return(paste(c(pairs(ctl, first), pairs(ctl, rest)), collapse = " "))
  }
  if (inherits(fit, "sparsevi_vdp")) {
    return(paste(c(pairs(ctl), pairs(.subset2(fit, "prior"))), collapse = " "))
  }
  if (inherits(fit, "sparsevi_mixture")) {
    top <- list(likelihood = .subset2(fit, "likelihood"), prior = .subset2(fit, "prior"),
                K = .subset2(fit, "K"))
    return(paste(c(pairs(top), pairs(ctl, setdiff(names(ctl), "init_seconds")),
                   pairs(.subset2(fit, "hyper"))), collapse = " "))
  }
  if (is.list(ctl)) return(paste(pairs(ctl), collapse = " "))
  "(no control recorded)"
}

# The header of a results section, written through `say`: the title, the
# commit and the command, and for each fit given (named) the settings that
# ran, read back from it. Call it again with only fits (title = NULL) to add
# the settings of fits made later in the section.
bench_header <- function(say, title = NULL, ..., fits = list(...)) {
  if (!is.null(title)) {
    say("")
    say("%s", title)
    say("  %s; commit %s; R %s, sparsevi %s%s", format(Sys.time(), "%Y-%m-%d %H:%M"),
        bench_commit(), getRversion(), utils::packageVersion("sparsevi"),
        if (bench_smoke()) "; SMOKE MODE (tiny simulated data, no peers)" else "")
    say("  command: %s", bench_command())
  }
  for (nm in names(fits)) {
    say("  settings that ran [%s]: %s", nm, bench_settings(fits[[nm]]))
  }
  invisible(NULL)
}

# The results logger: say(fmt, ...) prints a line and appends it to the
# results file at once (a long run killed half-way keeps what it measured).
#   say <- bench_logger(bench_out("name.txt"))
# and call attr(say, "close")() at the end.
bench_logger <- function(out_file, append = TRUE) {
  con <- file(out_file, open = if (append) "a" else "w")
  say <- function(...) {
    line <- sprintf(...)
    cat(line, "\n", sep = "")
    cat(line, "\n", sep = "", file = con)
    flush(con)
  }
  attr(say, "close") <- function() close(con)
  say
}

# Runs the Python script `code` (lines) with interpreter `py` on one BLAS /
# OpenMP thread and returns the numbers on the last line it printed
# (numeric(0) when it printed nothing, e.g. a missing module).
bench_python_numbers <- function(py, code) {
  pf <- tempfile(fileext = ".py")
  on.exit(unlink(pf))
  writeLines(code, pf)
  res <- tryCatch(system2(py, pf, stdout = TRUE, stderr = FALSE,
                          env = c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1",
                                  "MKL_NUM_THREADS=1")),
                  error = function(e) character())
  if (!length(res)) return(numeric(0))
  suppressWarnings(as.numeric(strsplit(utils::tail(res, 1), " ")[[1]]))
}

# The machine's load averages over 1, 5 and 15 minutes, as one string
# ("unknown" where /proc/loadavg cannot be read).
bench_loadavg <- function() {
  la <- tryCatch(readLines("/proc/loadavg", n = 1L), error = function(e) "unknown")
  paste(strsplit(la, " ")[[1]][1:3], collapse = " ")
}
