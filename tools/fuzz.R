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
  # adversarial corpora: empty documents, no documents, a wide vocabulary
  # (K x V overflows for huge K), counts near the limits, malformed parts
  empty_docs <- structure(list(doc_ptr = c(0L, 0L, 0L, 0L), term = integer(0),
                               count = numeric(0), vocab = letters[1:5], doc_names = NULL),
                          class = "sparsevi_dtm")
  no_docs <- structure(list(doc_ptr = 0L, term = integer(0), count = numeric(0),
                            vocab = letters[1:5], doc_names = NULL), class = "sparsevi_dtm")
  wide <- as_dtm(Matrix::sparseMatrix(i = c(1, 2, 3), j = c(1, 40000, 2), x = 1,
                                      dims = c(3, 40000)))
  huge_counts <- tiny
  huge_counts$count[] <- 1e9
  bad_parts <- list(
    structure(list(doc_ptr = c(0, 1), term = "a", count = 1L, vocab = "a"),
              class = "sparsevi_dtm"),
    structure(list(doc_ptr = c(0L, 5L, 2L), term = c(0L, 1L), count = c(1, 1),
                   vocab = c("a", "b")), class = "sparsevi_dtm"),
    structure(list(doc_ptr = c(0L, 2L), term = c(0L, 9L), count = c(1, 1),
                   vocab = c("a", "b")), class = "sparsevi_dtm"),
    structure(list(doc_ptr = c(0L, 2L), term = c(0L, 1L), count = c(NaN, -1),
                   vocab = c("a", "b")), class = "sparsevi_dtm"),
    structure(list(), class = "sparsevi_dtm"),
    structure(list(doc_ptr = NULL, term = NULL, count = NULL, vocab = NULL),
              class = "sparsevi_dtm")
  )
  fit_l <- fit_lda(tiny, K = 2, passes = 1, seed = 1, progress = FALSE)
  fit_m <- fit_mixture(simulate_mixture(N = 40, D = 2, K = 2, seed = 1)$X, K = 2,
                       passes = 1, seed = 1, progress = FALSE)
  corrupt <- function(fit) {
    f <- fit
    j <- sample.int(length(f), 1L)
    f[[j]] <- pool0[[sample.int(length(pool0), 1L)]]
    f
  }
  pool0 <- list(
    NULL, NA, NA_integer_, NA_real_, NaN, Inf, -Inf, -1, 0, 1, 2, 0.5, 1e300,
    -1e300, .Machine$integer.max, 2^31, 2^53, integer(0), numeric(0),
    character(0), "a", c("x", NA), TRUE, FALSE, list(), list(1, "a"),
    matrix(NaN, 2, 2), matrix(0, 0, 3), matrix(1:6, 2), diag(3),
    c(0, 0), c(1, 2, 3), -(1:5), stats::runif(7), 1:10, letters,
    tiny, unclass(tiny), tiny$doc_ptr, tiny$term, tiny$count,
    matrix(stats::rnorm(40), 10, 4), as.raw(1:3), quote(x), sum,
    data.frame(a = 1:3, b = c("x", "y", "z")), factor(c("a", "b")),
    matrix(c(1, NA, 3, 4), 2), array(1, c(2, 2, 2)),
    1e9, 1e15, 5e4, -.Machine$integer.max, c(NA, 1), matrix(1, 1, 1),
    matrix(rep(1, 20), 10, 2), matrix(c(1, 1, 1, 1 + 1e-12), 2, 2)
  )
  pool <- c(pool0, list(empty_docs, no_docs, wide, huge_counts, fit_l, fit_m),
            bad_parts)
  pool <- c(pool, list(corrupt(fit_l), corrupt(fit_m)))

  # Valid argument lists of every entry point, recorded by running small
  # real workloads with every `.Call(sym, ...)` in the namespace rewritten to
  # record its arguments; fuzz cases then mutate one or two of them.
  recorded <- new.env()
  record <- function(sym, ...) {
    nm <- sym$name
    if (length(recorded[[nm]]) < 3L) recorded[[nm]] <- c(recorded[[nm]], list(list(...)))
    .Call(sym, ...)
  }
  rewrite <- function(e) {
    if (is.call(e)) {
      if (identical(e[[1L]], as.name(".Call"))) e[[1L]] <- quote(.fuzz_record)
      for (i in seq_along(e)) if (!is.null(e[[i]])) e[[i]] <- rewrite(e[[i]])
    }
    e
  }
  for (f in ls(ns, all.names = TRUE)) {
    fun <- get(f, ns)
    if (!is.function(fun) || is.primitive(fun)) next
    b <- body(fun)
    if (!any(grepl(".Call", deparse(b), fixed = TRUE))) next
    body(fun) <- rewrite(b)
    environment(fun) <- list2env(list(.fuzz_record = record), parent = ns)
    # (not utils::assignInNamespace(): for a registered S3 method of an
    # internal generic, such as lda_topics_lambda(), it looks the generic up
    # from the caller's frame and fails)
    locked <- bindingIsLocked(f, ns)
    if (locked) unlockBinding(f, ns)
    assign(f, fun, ns)
    if (locked) lockBinding(f, ns)
    # exported copies and registered S3 methods are separate bindings
    pkg <- as.environment("package:sparsevi")
    if (exists(f, pkg, inherits = FALSE)) {
      unlockBinding(f, pkg)
      assign(f, fun, pkg)
    }
    tbl <- get(".__S3MethodsTable__.", ns)
    if (exists(f, tbl, inherits = FALSE)) assign(f, fun, tbl)
  }
  quiet <- function(expr) invisible(tryCatch(suppressWarnings(utils::capture.output(expr)),
                                             error = function(e) NULL))
  sp <- split_heldout(tiny, n_test = 2, seed = 1)
  for (loc in c("vb", "cvb0", "gibbs", "ope")) {
    quiet({
      ff <- fit_lda(sp$train, K = 2, local = loc, passes = 2, seed = 1, progress = FALSE)
      predict(ff, tiny, seed = 1)
      heldout_loglik(ff, sp$test)
      heldout_loglik_left_to_right(ff, sp$test, particles = 2, seed = 1)
      coherence(ff, tiny, measure = "umass", n = 3)
      coherence(ff, tiny, n = 3)
      update(ff, tiny, passes = 1, progress = FALSE)
    })
  }
  quiet(fit_lda(tiny, K = 3, L = 2, global = "stochastic", passes = 2, seed = 1, progress = FALSE))
  quiet(fit_lda(tiny, K = 3, L = 2, global = "streaming", passes = 1, seed = 1, progress = FALSE))
  Xm <- simulate_mixture(N = 40, D = 2, K = 2, seed = 1)$X
  for (lik in c("gaussian", "zm_gaussian", "diag_gaussian")) {
    quiet({
      fm <- fit_mixture(Xm, K = 2, likelihood = lik, passes = 2, seed = 1, progress = FALSE)
      predict(fm, Xm)
      heldout_loglik(fm, Xm)
    })
  }
  quiet(fit_mixture(tiny, K = 2, likelihood = "multinomial", passes = 2, seed = 1,
                    progress = FALSE))
  quiet(fit_vdp(Xm, seed = 1, progress = FALSE))
  dw <- tempfile()
  writeLines(c("2", "3", "3", "1 1 2", "1 3 1", "2 2 4"), dw)
  quiet(read_uci_bow(dw))

  # test hooks no workload reaches
  recorded$ffi_svi_special <- list(list(c(0.5, 2, 30), 0L))
  recorded$ffi_svi_select_top <- list(list(matrix(stats::runif(12), 4, 3), 2L, 0L))
  writeLines(ls(recorded), paste0(progress_file, ".rec"))

  mutate_value <- function(v) {
    r <- sample.int(9L, 1L)
    if (r == 1L || length(v) == 0L) return(pool[[sample.int(length(pool), 1L)]])
    if (r == 2L) return(v[seq_len(max(0L, length(v) - sample.int(3L, 1L)))])
    if (r == 3L) return(c(v, v))
    if (r == 4L && (is.numeric(v) || is.logical(v))) {
      i <- sample.int(length(v), 1L)
      bad <- if (is.integer(v)) c(NA, -1L, .Machine$integer.max, 0L, 2147483647L)
             else c(NA, NaN, Inf, -Inf, -1, 0, 1e300, 2^53, 2^31)
      v[i] <- bad[sample.int(length(bad), 1L)]
      return(v)
    }
    if (r == 5L && is.numeric(v)) {
      d <- dim(v)
      v <- if (is.integer(v)) as.double(v) else suppressWarnings(as.integer(v))
      if (!is.null(d)) dim(v) <- d
      return(v)
    }
    if (r == 6L && !is.null(dim(v))) return(as.vector(v))
    if (r == 7L && is.list(v) && length(v)) {
      j <- sample.int(length(v), 1L)
      v[[j]] <- mutate_value(v[[j]])
      return(v)
    }
    if (r == 8L && is.numeric(v) && length(v) > 1L) return(rev(v))
    pool[[sample.int(length(pool), 1L)]]
  }

  routines <- getDLLRegisteredRoutines("sparsevi")$.Call
  exported <- getNamespaceExports("sparsevi")
  exported <- exported[vapply(exported, function(f) is.function(get(f, ns)), TRUE)]
  targets <- c(
    lapply(routines, function(r) list(kind = "call", name = r$name, nargs = r$numParameters)),
    lapply(routines, function(r) list(kind = "mutate", name = r$name, nargs = r$numParameters)),
    lapply(exported, function(f) list(kind = "fun", name = f,
                                      formals = names(formals(get(f, ns)))))
  )
  pick <- function() pool[[sample.int(length(pool), 1L)]]
  for (i in seq.int(first, length.out = n)) {
    tgt <- targets[[(i %% length(targets)) + 1L]]
    if (tgt$kind == "mutate" && (length(recorded[[tgt$name]]) == 0L || tgt$nargs == 0L))
      tgt$kind <- "call"
    if (tgt$kind == "call" || tgt$kind == "mutate") {
      if (tgt$kind == "call") {
        a <- replicate(tgt$nargs, pick(), simplify = FALSE)
      } else {
        recs <- recorded[[tgt$name]]
        a <- recs[[sample.int(length(recs), 1L)]]
        for (m in seq_len(sample.int(2L, 1L))) {
          j <- sample.int(length(a), 1L)
          a[j] <- list(tryCatch(mutate_value(a[[j]]), error = function(e) pick()))
        }
      }
      cat(i, tgt$kind, tgt$name, "\n", file = progress_file)
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
  if (first == 1L && file.exists(paste0(progress, ".rec"))) {
    rec <- readLines(paste0(progress, ".rec"))
    cat(sprintf("entry points with recorded valid calls (mutated): %d\n", length(rec)))
  }
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
