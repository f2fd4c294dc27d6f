# Batches of an LDA fit: how many, which documents each holds (fixed for the
# whole fit), the reader the executor uses, the per-(lap, batch) seeds and
# the local step of one batch as a worker runs it.

lda_resolve_batches <- function(D, global, n_batches, batch_size, call = caller_call()) {
  if (!is.null(n_batches) && !is.null(batch_size)) {
    abort("Give `n_batches` or `batch_size`, not both.", "argument", call = call)
  }
  if (lda_global_kind(global)$one_batch) {
    if ((!is.null(n_batches) && n_batches != 1) || (!is.null(batch_size) && batch_size < D)) {
      abort("`global = \"batch\"` uses all documents in one batch; drop `n_batches`/`batch_size` or use `global = \"memoized\"`.",
            "argument", call = call)
    }
    return(list(n_batches = 1L, batch_size = D))
  }
  if (!is.null(n_batches)) {
    n_batches <- check_count(n_batches, "n_batches", min = 1, max = D, call = call)
    batch_size <- as.integer(ceiling(D / n_batches))
  } else {
    if (is.null(batch_size)) batch_size <- max(100, ceiling(D / 10))
    batch_size <- check_count(batch_size, "batch_size", min = 1, max = .Machine$integer.max,
                              call = call)
    batch_size <- min(batch_size, D)
    n_batches <- as.integer(ceiling(D / batch_size))
  }
  list(n_batches = as.integer(n_batches), batch_size = as.integer(batch_size))
}

# The arguments the caller gave fit_lda(), by name, read from fit_lda()'s
# frame `env` (where the engines' control hooks run: its matched `call`).
lda_given <- function(env) {
  fcall <- get0("call", envir = env, inherits = FALSE)
  if (is.call(fcall)) names(as.list(fcall)) else character(0)
}

# An engine's own default minibatch of `size` documents, in place of the
# loop's (lda_resolve_batches()), for its control hook (R/engines.R): only
# when the caller of fit_lda() gave no `n_batches`, `batch_size` or
# `batches` (`given`: the names of the call's arguments). A corpus on disk
# gets the same steps, within its batch files (source_steps()).
lda_default_batches <- function(control, size, given, x) {
  if (!is.null(control$batches) || any(c("n_batches", "batch_size") %in% given)) {
    return(control)
  }
  if (inherits(x, "sparsevi_source")) {
    if (lda_global_kind(control$global)$one_batch) return(control)
    size <- min(as.integer(size), max(x$n_docs))
    control$batch_size <- as.integer(size)
    control$n_batches <- source_n_steps(x$n_docs, size)
    return(control)
  }
  control$batch_size <- as.integer(size)
  control$n_batches <- as.integer(ceiling(control$n_docs / size))
  control
}

# Uniforms from stream `stream` of the fit's seed.
lda_unif <- function(seed, stream, n) {
  .Call(ffi_svi_rng_unif, seed, as.double(stream), as.double(n))
}

# A seed for one (lap, batch), so local steps draw the same numbers whatever
# the thread count.
lda_batch_seed <- function(seed, lap, batch) {
  floor(lda_unif(seed, 1e6 + lap * 1e5 + batch, 2) * 4294967296)
}


# Batches of a corpus: fixed for the whole fit (memoized caches are per batch,
# and on a cluster each batch stays on its worker); stochastic and streaming
# training visit them in a new random order every lap. A source's batches
# are parts of its files (source_steps()).
lda_members <- function(x, control) {
  if (inherits(x, "sparsevi_source")) {
    return(source_steps(x$n_docs, control$batch_size, control$seed))
  }
  if (!is.null(control$batches) && sum(lengths(control$batches)) == nrow(x)) {
    return(control$batches)
  }
  batch_of <- lda_assign_batches(nrow(x), control$n_batches, control$seed)
  split(seq_len(nrow(x)), factor(batch_of, levels = seq_len(control$n_batches)))
}

# The steps of a fit from a source: the file of `n` documents is an I/O
# unit, the step is the fit's own batch of `size` documents, as in memory.
# Each file is cut into ceiling(n / size) parts, as equal as can be, of rows
# drawn at random from the fit's seed (stream 906), each part's rows in
# increasing order; a step never spans two files, so a file smaller than
# `size` is one step. (Consecutive rows would not do: a shuffled source
# keeps each file's documents in the corpus's order, so 100 consecutive
# rows of a file of 10,000 are near neighbours in the corpus, paragraphs of
# a few articles: one pass at K = 1000 over 19,000 Wikipedia paragraphs
# scored -9.165 in such steps, -8.976 from files of 1,000 and -8.959 in
# memory.) Returns the rows of each step within its file, attribute "file"
# its file.
source_steps <- function(n_docs, size, seed) {
  n_docs <- as.integer(n_docs)
  k <- source_parts_per_file(n_docs, size)
  steps <- vector("list", sum(k))
  file <- rep.int(seq_along(n_docs), k)
  u <- if (any(k > 1L)) lda_unif(seed, 906, sum(as.double(n_docs)))
  first <- c(0, cumsum(as.double(n_docs)))
  at <- 0L
  for (f in seq_along(n_docs)) {
    if (k[f] == 1L) {
      steps[[at + 1L]] <- seq_len(n_docs[f])
    } else {
      o <- order(u[first[f] + seq_len(n_docs[f])])
      cut <- floor(n_docs[f] * (0:k[f]) / k[f])
      for (j in seq_len(k[f])) steps[[at + j]] <- sort(o[(cut[j] + 1L):cut[j + 1L]])
    }
    at <- at + k[f]
  }
  attr(steps, "file") <- file
  steps
}
source_parts_per_file <- function(n_docs, size) {
  pmax(1L, as.integer(ceiling(as.double(n_docs) / as.double(size))))
}
source_n_steps <- function(n_docs, size) sum(source_parts_per_file(n_docs, size))

# The batches of a fit from a source (fit_lda()'s n_batches and batch_size):
# steps of `batch_size` documents within its files (source_steps()), by
# default the loop's max(100, D / 10) (an engine's control hook may take its
# own, lda_default_batches()); `n_batches` only as the number of files.
source_batches <- function(x, global, n_batches, batch_size, call = caller_call()) {
  nb <- length(x$files)
  if (!is.null(n_batches) && !is.null(batch_size)) {
    abort("Give `n_batches` or `batch_size`, not both.", "argument", call = call)
  }
  if (!is.null(n_batches) &&
      check_count(n_batches, "n_batches", min = 1, max = .Machine$integer.max, call = call) != nb) {
    abort(sprintf("A corpus on disk is cut into steps within its %d batch files: give `batch_size` (documents per step) instead of `n_batches`.",
                  nb), "argument", call = call)
  }
  if (lda_global_kind(global)$one_batch) {
    if (nb != 1L) {
      abort("`global = \"batch\"` needs all documents in one batch; use `global = \"memoized\"` with a corpus on disk.",
            "argument", call = call)
    }
    if (!is.null(batch_size) && batch_size < x$D) {
      abort("`global = \"batch\"` uses all documents in one batch; drop `batch_size` or use `global = \"memoized\"`.",
            "argument", call = call)
    }
    return(list(n_batches = 1L, batch_size = as.integer(x$D)))
  }
  size <- if (!is.null(n_batches)) {
    max(x$n_docs)
  } else if (is.null(batch_size)) {
    max(100, ceiling(x$D / 10))
  } else {
    check_count(batch_size, "batch_size", min = 1, max = .Machine$integer.max, call = call)
  }
  size <- as.integer(min(size, max(x$n_docs)))
  list(n_batches = source_n_steps(x$n_docs, size), batch_size = size)
}

# Batch b of a corpus in memory (a source's: source_step_reader()).
lda_batch <- function(x, members, b) {
  dtm_subset(x, members[[b]])
}

# The rows in the file (or files) of each step of a source, as lda_members()
# cuts them.
source_step_rows <- function(x, members) {
  rows <- source_rows(x)
  file <- attr(members, "file")
  lapply(seq_along(members), function(b) rows[[file[b]]][members[[b]]])
}

# The executor's reader of a fit's batches (function(b)). A corpus in memory
# of at most lda_batch_cache_max entries keeps each batch once made, for the
# later laps: a second copy of the corpus (12 bytes an entry) instead of a
# new one every lap (every lap re-made every minibatch: 40 of the 307 MB a
# default fit on spamassassin allocated, which R's collector then cleared).
# A corpus on disk is read batch by batch, and a larger one re-made. A
# training call of one lap keeps nothing: no batch is read twice, and the
# kept batches only grew the live heap during the lap (a one-pass OPE fit
# over 60,000 Wikipedia paragraphs at K = 100: garbage collection 0.50 ->
# 0.37 s, peak memory 0.48 -> 0.43 GB).
lda_batch_reader <- function(x, members, laps = 2L) {
  if (inherits(x, "sparsevi_source")) return(source_step_reader(x, members))
  if (length(x$term) > lda_batch_cache_max || laps < 2L) {
    return(function(b) lda_batch(x, members, b))
  }
  cache <- vector("list", length(members))
  function(b) {
    if (is.null(cache[[b]])) cache[[b]] <<- lda_batch(x, members, b)
    cache[[b]]
  }
}

# The reader of a source's steps: a file is read once for its steps in a
# row (a lap visits a file's steps together, lda_lap_visit()), and let go
# when the next file is read or the step is its whole file.
source_step_reader <- function(x, members) {
  file <- attr(members, "file")
  held <- NULL
  held_file <- 0L
  function(b) {
    f <- file[b]
    if (f != held_file) {
      held <<- NULL
      xb <- source_batch(x, f)
      if (length(members[[b]]) == nrow(xb)) {
        held_file <<- 0L
        return(xb)
      }
      held <<- xb
      held_file <<- f
    }
    dtm_subset(held, members[[b]])
  }
}

# Entries of the largest corpus whose batches are kept (about 100 MB).
lda_batch_cache_max <- 2^23

# The local step of one batch, as the executor (here or on a worker) runs it:
# the engine's own (engine$local, R/engines.R).
lda_batch_step <- function(batch, seed, state, control) {
  lda_engine(control$local)$local(batch, state, control, seed, control$threads)
}

check_batches <- function(batches, D, n_batches, batch_size, global, call = caller_call()) {
  if (!is.null(n_batches) || !is.null(batch_size)) {
    abort("Give `batches`, or `n_batches`/`batch_size`, not both.", "argument", call = call)
  }
  ok <- is.list(batches) && length(batches) >= 1L &&
    all(vapply(batches, function(b) is.numeric(b) && length(b) > 0 && !anyNA(b), TRUE))
  if (ok) {
    all_docs <- unlist(batches, use.names = FALSE)
    ok <- length(all_docs) == D && all(all_docs == round(all_docs)) &&
      identical(sort(as.integer(all_docs)), seq_len(D))
  }
  if (!ok) {
    abort(sprintf("`batches` must be a list of non-empty vectors of document numbers that together hold each of the %s documents exactly once.",
                  fmt_int(D)), "argument", call = call)
  }
  if (lda_global_kind(global)$one_batch && length(batches) != 1L) {
    abort("`global = \"batch\"` uses one batch; give a single batch or use `global = \"memoized\"`.",
          "argument", call = call)
  }
  lapply(batches, as.integer)
}


corpus_tokens <- function(x) {
  if (inherits(x, "sparsevi_source")) sum(x$n_tokens) else sum(x$count)
}

# Documents to batches, once, by a random permutation from our streams.
lda_assign_batches <- function(D, n_batches, seed, stream = 500) {
  perm <- order(lda_unif(seed, stream, D))
  b <- integer(D)
  b[perm] <- (seq_len(D) - 1L) %% n_batches + 1L
  b
}
