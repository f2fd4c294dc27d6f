# Fuzz harness: feeds random and adversarial arguments to every exported
# function and, directly, to every registered .Call entry point of sparsevi.
# Each batch of cases runs in a child R process; the child writes the case it
# is about to run to a file, so a crash (signal, abort) or a hang names it.
# Any outcome other than a clean R error or a returned value is a bug.
#
# Usage: Rscript tools/fuzz.R [cases] [seed] [seconds_per_batch]
# Prints "fuzz cases: N; crashes: C; hangs: H" and exits 1 on any crash/hang.

args <- commandArgs(trailingOnly = TRUE)
n_cases <- if (length(args) >= 1) as.integer(args[1]) else 2000L
seed <- if (length(args) >= 2) as.integer(args[2]) else 1L
batch_seconds <- if (length(args) >= 3) as.numeric(args[3]) else 120
batch_size <- 200L

child <- function(first, n, seed, progress_file) {
  suppressPackageStartupMessages(library(sparsevi))
  ns <- asNamespace("sparsevi")
  set.seed(seed)
  tiny <- simulate_lda(D = 6, V = 8, K = 2, doc_length = 10, seed = 1)$dtm
  pool <- list(
    NULL, NA, NA_integer_, NA_real_, NaN, Inf, -Inf, -1, 0, 1, 2, 0.5, 1e300,
    -1e300, .Machine$integer.max, 2^31, 2^53, integer(0), numeric(0),
    character(0), "a", c("x", NA), TRUE, FALSE, list(), list(1, "a"),
    matrix(NaN, 2, 2), matrix(0, 0, 3), matrix(1:6, 2), diag(3),
    c(0, 0), c(1, 2, 3), -(1:5), stats::runif(7), 1:10, letters,
    tiny, unclass(tiny), tiny$doc_ptr, tiny$term, tiny$count,
    matrix(stats::rnorm(40), 10, 4), as.raw(1:3), quote(x), sum,
    data.frame(a = 1:3, b = c("x", "y", "z")), factor(c("a", "b")),
    matrix(c(1, NA, 3, 4), 2), array(1, c(2, 2, 2))
  )
  routines <- getDLLRegisteredRoutines("sparsevi")$.Call
  exported <- getNamespaceExports("sparsevi")
  exported <- exported[vapply(exported, function(f) is.function(get(f, ns)), TRUE)]
  targets <- c(
    lapply(routines, function(r) list(kind = "call", name = r$name, nargs = r$numParameters)),
    lapply(exported, function(f) list(kind = "fun", name = f,
                                      formals = names(formals(get(f, ns)))))
  )
  pick <- function() pool[[sample.int(length(pool), 1L)]]
  for (i in seq.int(first, length.out = n)) {
    tgt <- targets[[(i %% length(targets)) + 1L]]
    if (tgt$kind == "call") {
      a <- replicate(tgt$nargs, pick(), simplify = FALSE)
      cat(i, "call", tgt$name, "\n", file = progress_file)
      sym <- get(tgt$name, ns)
      invisible(tryCatch(suppressWarnings(do.call(.Call, c(list(sym), a))),
                         error = function(e) NULL))
    } else {
      fm <- setdiff(tgt$formals, "...")
      k <- sample.int(length(fm) + 1L, 1L) - 1L
      a <- replicate(k, pick(), simplify = FALSE)
      names(a) <- fm[seq_len(k)]
      cat(i, "fun", tgt$name, paste(names(a), collapse = ","), "\n", file = progress_file)
      invisible(tryCatch(suppressWarnings(utils::capture.output(do.call(tgt$name, a, envir = ns))),
                         error = function(e) NULL))
    }
  }
  cat("done\n", file = progress_file)
}

crashes <- 0L
hangs <- 0L
ran <- 0L
first <- 1L
while (first <= n_cases) {
  n <- min(batch_size, n_cases - first + 1L)
  progress <- tempfile()
  script <- tempfile(fileext = ".R")
  src <- c(sprintf("child <- %s", paste(deparse(child), collapse = "\n")),
           sprintf("child(%d, %d, %d, '%s')", first, n, seed + first, progress))
  writeLines(src, script)
  status <- suppressWarnings(system2("timeout", c(batch_seconds, file.path(R.home("bin"), "Rscript"),
                                   "--vanilla", script), stdout = FALSE, stderr = FALSE))
  last <- if (file.exists(progress)) readLines(progress, warn = FALSE) else "no progress"
  if (!identical(last, "done")) {
    if (identical(status, 124L)) {
      hangs <- hangs + 1L
      cat("HANG at case:", last, "\n")
    } else {
      crashes <- crashes + 1L
      cat("CRASH (status ", status, ") at case: ", last, "\n", sep = "")
    }
    # resume after the failing case
    done_i <- suppressWarnings(as.integer(strsplit(last, " ")[[1]][1]))
    ran <- ran + if (is.na(done_i)) n else done_i - first + 1L
    first <- if (is.na(done_i)) first + n else done_i + 1L
  } else {
    ran <- ran + n
    first <- first + n
  }
}
cat(sprintf("fuzz cases: %d; crashes: %d; hangs: %d\n", ran, crashes, hangs))
quit(status = if (crashes + hangs > 0) 1L else 0L)
