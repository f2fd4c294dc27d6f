#' A corpus on disk, read batch by batch
#'
#' `uci_source()` reads a UCI bag-of-words file once, in chunks, and writes its
#' documents to batch files on disk; training then reads one batch at a time,
#' so streaming, stochastic and memoized fits never hold the whole corpus
#' (memoized training keeps only the batch summaries). Pass the source to
#' [fit_lda()] in place of a corpus. `dir_source()` makes a source of a
#' directory of UCI files sharing one vocabulary (`docword.*.txt[.gz]`), one
#' or more batches per file.
#' A fit's start picks its seed documents from the whole corpus, as it
#' does in memory (`init` in [fit_lda()]): the batches that hold them are read
#' once before training, each keeping only those documents.
#'
#' By default the documents go to the batches at random (`shuffle = TRUE`),
#' as a fit in memory makes its minibatches: a file in its own order (a
#' wiki's paragraphs article by article, news by date) would otherwise give
#' minibatches of one subject each, and stochastic training drifts with them
#' (19,000 Wikipedia paragraphs in their order, batches of 100, the default
#' fit: 0.28 nats per token lower held-out score after one pass at K = 1000,
#' 0.04 after ten at K = 100; `inst/bench/scale.R` part `disk`). Shuffling
#' reads the corpus twice more, a
#' bounded part at a time. A fit's `doc_topic` keeps the file's order.
#'
#' @param docword Path of a UCI `docword` file, plain or gzipped. Documents
#'   must appear in increasing order of their id (as UCI distributes them).
#' @param vocab Path of the matching `vocab` file, or `NULL` (terms are then
#'   named `term1`, `term2`, ...).
#' @param batch_size Documents per batch file (at least 1), default 10,000:
#'   what training reads from disk at a time. A fit cuts each file into
#'   minibatches of its own `batch_size` ([fit_lda()]; by default the
#'   engine's, as in memory: 100 documents for the default engine), of
#'   documents drawn at random within the file, and steps once per
#'   minibatch. On 19,000 Wikipedia paragraphs from files of 10,000, the
#'   default fit then scores within 0.008 nats per token of the fit in
#'   memory; taking each whole file as one step, as fits from disk did
#'   before, scored 0.11 (ten laps, K = 100) to 0.21 (one pass, K = 1000)
#'   lower (`inst/bench/scale.R` part `disk`).
#' @param dir Directory for the batch files; default a new temporary
#'   directory (removed at the end of the R session).
#' @param chunk_size Bytes read at a time, default 8 MiB.
#' @param shuffle `TRUE` (default): each batch holds documents drawn at
#'   random from the whole corpus; `FALSE`: consecutive documents, in the
#'   file's order.
#' @param seed A whole number (default 1): the draw of `shuffle`.
#' @returns A `sparsevi_source`: a list with `files` (one `.rds` file per
#'   batch), `n_docs` (documents per batch), `n_tokens` (tokens per batch),
#'   `D`, `vocab`, `dir` and `ids` (for a shuffled source, the documents'
#'   numbers in the file, batch after batch; `NULL` otherwise).
#' @examples
#' # a tiny UCI file
#' f <- tempfile(fileext = ".txt")
#' writeLines(c("3", "4", "5", "1 1 2", "1 3 1", "2 2 4", "3 1 1", "3 4 2"), f)
#' src <- uci_source(f, batch_size = 2)
#' src
#' @export
uci_source <- function(docword, vocab = NULL, batch_size = 10000, dir = NULL,
                       chunk_size = 2^23, shuffle = TRUE, seed = 1) {
  call <- sys.call()
  check_file(docword, "docword", call = call)
  if (!is.null(vocab)) check_file(vocab, "vocab", call = call)
  batch_size <- check_count(batch_size, "batch_size", min = 1, max = .Machine$integer.max,
                            call = call)
  chunk_size <- check_count(chunk_size, "chunk_size", min = 1024, max = 2^30, call = call)
  shuffle <- check_flag(shuffle, "shuffle", call = call)
  seed <- source_seed(seed, call = call)
  if (is.null(dir)) dir <- tempfile("sparsevi_source_")
  dir <- check_string(dir, "dir", call = call)
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  size <- if (shuffle) source_stage_docs(list(docword), batch_size) else batch_size
  src <- uci_split(docword, size, dir, chunk_size, prefix = if (shuffle) "stage" else "batch",
                   call = call)
  terms <- read_vocab(vocab, src$V, call = call)
  if (shuffle) src <- source_shuffle(src, batch_size, seed, dir)
  new_sparsevi_source(src$files, src$n_docs, src$n_tokens, terms, dir, src$ids)
}

#' @rdname uci_source
#' @param path A directory holding `docword.*.txt` or `docword.*.txt.gz`
#'   files (read in name order) and one vocabulary file.
#' @export
dir_source <- function(path, vocab, batch_size = 10000, dir = NULL, chunk_size = 2^23,
                       shuffle = TRUE, seed = 1) {
  call <- sys.call()
  check_string(path, "path", call = call)
  if (!dir.exists(path)) {
    abort(sprintf("`path` must be an existing directory; \"%s\" is not.", path), "file",
          call = call)
  }
  files <- sort(list.files(path, pattern = "^docword.*\\.txt(\\.gz)?$", full.names = TRUE))
  if (!length(files)) {
    abort(sprintf("`path` \"%s\" holds no docword.*.txt[.gz] files.", path), "file", call = call)
  }
  check_file(vocab, "vocab", call = call)
  batch_size <- check_count(batch_size, "batch_size", min = 1, max = .Machine$integer.max,
                            call = call)
  chunk_size <- check_count(chunk_size, "chunk_size", min = 1024, max = 2^30, call = call)
  shuffle <- check_flag(shuffle, "shuffle", call = call)
  seed <- source_seed(seed, call = call)
  if (is.null(dir)) dir <- tempfile("sparsevi_source_")
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  size <- if (shuffle) source_stage_docs(as.list(files), batch_size) else batch_size
  parts <- lapply(seq_along(files), function(i) {
    uci_split(files[i], size, dir, chunk_size,
              prefix = sprintf(if (shuffle) "stage%04d_" else "part%04d", i), call = call)
  })
  V <- unique(vapply(parts, `[[`, 0, "V"))
  if (length(V) != 1L) {
    abort("The docword files in `path` declare different vocabulary sizes; they must share one vocabulary.",
          "vocab", call = call)
  }
  terms <- read_vocab(vocab, V, call = call)
  src <- list(files = unlist(lapply(parts, `[[`, "files")),
              n_docs = unlist(lapply(parts, `[[`, "n_docs")),
              n_tokens = unlist(lapply(parts, `[[`, "n_tokens")),
              n_entries = unlist(lapply(parts, `[[`, "n_entries")))
  if (shuffle) src <- source_shuffle(src, batch_size, seed, dir)
  new_sparsevi_source(src$files, src$n_docs, src$n_tokens, terms, dir, src$ids)
}

new_sparsevi_source <- function(files, n_docs, n_tokens, vocab, dir, ids = NULL) {
  structure(list(files = files, n_docs = as.integer(n_docs), n_tokens = n_tokens,
                 D = sum(n_docs), vocab = vocab, dir = dir, ids = ids),
            class = "sparsevi_source")
}

# uci_source(seed = ): a whole number, as fit_lda()'s seed.
source_seed <- function(seed, call) {
  if (is.null(seed)) {
    abort("`seed` must be a whole number (the draw of `shuffle`), not NULL.", "argument",
          call = call)
  }
  resolve_seed(seed, call = call)
}

# Documents per staging file of a shuffled source: about
# source_stage_entries entries each, from the docword headers' documents
# and entries (at least batch_size; batch_size when a header is unreadable,
# which uci_split() then reports).
source_stage_docs <- function(docwords, batch_size) {
  head <- vapply(docwords, function(f) {
    con <- gzfile(f, open = "rb")
    on.exit(close(con))
    h <- suppressWarnings(as.numeric(readLines(con, n = 3L, warn = FALSE)))
    if (length(h) == 3L && all(is.finite(h)) && all(h > 0)) h[c(1L, 3L)] else c(NA, NA)
  }, c(0, 0))
  if (anyNA(head)) return(batch_size)
  per_doc <- sum(head[2L, ]) / sum(head[1L, ])
  as.integer(min(.Machine$integer.max, max(batch_size, floor(source_stage_entries / per_doc))))
}
source_stage_entries <- 2^21

# The shuffled batches of a source (uci_source(shuffle = TRUE)): from
# staging files of consecutive documents (src: files, n_docs, n_entries),
# batches of batch_size documents drawn at random (a permutation from the
# seed's own stream), each batch's documents in the file's order, `ids` the
# documents' numbers batch after batch. Bounded memory: each staging file
# is read once and cut into pieces by bucket (a run of batches of about
# bucket_entries entries), then each bucket's pieces are read and cut into
# its batches. The staging files and pieces are removed.
source_shuffle <- function(src, batch_size, seed, dir, bucket_entries = source_bucket_entries) {
  n_docs <- as.integer(src$n_docs)
  D <- sum(n_docs)
  pos <- integer(D)
  pos[order(lda_unif(seed, 905, D))] <- seq_len(D)
  batch_of <- (pos - 1L) %/% as.integer(batch_size) + 1L
  n_batches <- as.integer(ceiling(D / batch_size))
  per_batch <- max(1, sum(as.double(src$n_entries)) / D * batch_size)
  bucket_of <- (seq_len(n_batches) - 1L) %/% as.integer(max(1, floor(bucket_entries / per_batch))) + 1L
  n_buckets <- max(bucket_of)
  first <- c(0L, cumsum(n_docs))
  piece <- function(s, m) file.path(dir, sprintf("piece%06d_%06d.rds", s, m))
  held <- matrix(FALSE, length(src$files), n_buckets)
  for (s in seq_along(src$files)) {
    xs <- readRDS(src$files[s])
    ids <- first[s] + seq_len(n_docs[s])
    by <- split(seq_along(ids), bucket_of[batch_of[ids]])
    for (m in names(by)) {
      sel <- by[[m]]
      saveRDS(list(x = dtm_subset(xs, sel), ids = ids[sel]), piece(s, as.integer(m)),
              compress = FALSE)
      held[s, as.integer(m)] <- TRUE
    }
    unlink(src$files[s])
  }
  files <- file.path(dir, sprintf("batch%06d.rds", seq_len(n_batches)))
  out_docs <- integer(n_batches)
  out_tokens <- numeric(n_batches)
  out_ids <- vector("list", n_batches)
  for (m in seq_len(n_buckets)) {
    ps <- lapply(which(held[, m]), function(s) readRDS(piece(s, m)))
    x <- dtm_bind(lapply(ps, `[[`, "x"))
    ids <- unlist(lapply(ps, `[[`, "ids"))
    rm(ps)
    unlink(piece(which(held[, m]), m))
    by <- split(seq_along(ids), factor(batch_of[ids], levels = which(bucket_of == m)))
    for (j in names(by)) {
      b <- as.integer(j)
      sel <- by[[j]][order(ids[by[[j]]])]
      xb <- dtm_subset(x, sel)
      saveRDS(xb, files[b], compress = FALSE)
      out_docs[b] <- length(sel)
      out_tokens[b] <- sum(xb$count)
      out_ids[[b]] <- ids[sel]
    }
  }
  list(files = files, n_docs = out_docs, n_tokens = out_tokens,
       ids = as.integer(unlist(out_ids)))
}
source_bucket_entries <- 2^22

# Which documents a source's batches hold, as two numbers (a fit from disk
# keeps them: update() on a source cut or drawn otherwise is an error, since
# memoized training keeps a summary per batch).
source_batches_key <- function(src) {
  ids <- if (is.null(src$ids)) seq_len(src$D) else src$ids
  c(sum(as.double(src$n_docs) * seq_along(src$n_docs)),
    sum(as.double(ids) * seq_along(ids)))
}

# The documents' numbers in the file (or files), batch by batch.
source_rows <- function(src) {
  if (is.null(src$ids)) {
    first <- c(0L, cumsum(as.integer(src$n_docs)))
    return(lapply(seq_along(src$n_docs), function(b) first[b] + seq_len(src$n_docs[b])))
  }
  split(src$ids, rep.int(seq_along(src$n_docs), src$n_docs))
}

read_vocab <- function(vocab, V, call) {
  if (is.null(vocab)) return(sprintf("term%d", seq_len(V)))
  terms <- sub("\r$", "", readLines(vocab, warn = FALSE, encoding = "UTF-8"))
  if (length(terms) == V + 1 && !nzchar(terms[length(terms)])) terms <- terms[-length(terms)]
  if (length(terms) != V) {
    abort(sprintf("`vocab` has %s terms but `docword` declares a vocabulary of %s (its second line); pass the vocabulary file that belongs to this corpus.",
                  fmt_int(length(terms)), fmt_int(V)), "vocab", call = call)
  }
  if (anyDuplicated(terms)) {
    abort(sprintf("`vocab` has duplicated terms (first: \"%s\").", terms[anyDuplicated(terms)]),
          "vocab", call = call)
  }
  terms
}

# One pass over a docword file: parse chunk by chunk and write each batch of
# `batch_size` consecutive documents to its own file as soon as it is complete,
# so at most one batch and one chunk are in memory.
uci_split <- function(docword, batch_size, dir, chunk_size, prefix, call) {
  con <- gzfile(docword, open = "rb")
  on.exit(close(con))
  state <- .Call(ffi_dtm_uci_state)
  leftover <- raw(0)
  pend_doc <- integer(0)
  pend_term <- integer(0)
  pend_count <- double(0)
  files <- character(0)
  n_docs <- integer(0)
  n_tokens <- numeric(0)
  n_entries <- numeric(0)
  next_batch <- 1L
  flush <- function(upto_doc, D) {
    # write every batch whose documents all precede `upto_doc` (their
    # entries taken from the pending ones at once: one batch at a time
    # copied what was left after each, 72 s for 615,012 paragraphs in
    # batches of 100)
    last <- min(ceiling(D / batch_size), floor((upto_doc - 1) / batch_size))
    if (last < next_batch) return(invisible())
    done <- pend_doc <= min(last * batch_size, D)
    at <- which(done)
    by <- split(at, factor((pend_doc[at] - 1L) %/% batch_size + 1L, levels = next_batch:last))
    for (i in seq_along(by)) {
      b <- next_batch + i - 1L
      sel <- by[[i]]
      lo <- (b - 1L) * batch_size
      hi <- min(b * batch_size, D)
      d <- pend_doc[sel] - lo
      o <- order(d, pend_term[sel])
      nd <- hi - lo
      x <- new_sparsevi_dtm(
        doc_ptr = c(0L, as.integer(cumsum(tabulate(d, nbins = nd)))),
        term = pend_term[sel][o], count = pend_count[sel][o], vocab = character(0),
        doc_names = NULL
      )
      f <- file.path(dir, sprintf("%s%06d.rds", prefix, b))
      saveRDS(x, f, compress = FALSE)
      files <<- c(files, f)
      n_docs <<- c(n_docs, nd)
      n_tokens <<- c(n_tokens, sum(x$count))
      n_entries <<- c(n_entries, length(x$term))
    }
    pend_doc <<- pend_doc[!done]
    pend_term <<- pend_term[!done]
    pend_count <<- pend_count[!done]
    next_batch <<- as.integer(last) + 1L
  }
  repeat {
    bytes <- readBin(con, "raw", n = chunk_size)
    final <- length(bytes) == 0L
    if (length(leftover)) bytes <- c(leftover, bytes)
    cap <- as.integer(length(bytes) %/% 6L + 2L)
    doc <- integer(cap)
    term <- integer(cap)
    count <- double(cap)
    res <- .Call(ffi_dtm_parse_uci, bytes, final, state, doc, term, count, 0)
    state <- res$state
    if (res$status != 0L) uci_error(res$status, state, docword, call)
    if (state[9L] == 0) {
      abort(sprintf("`docword` \"%s\" does not list its documents in increasing order (line %s); a source reads documents in order. Sort the file, or read it whole with read_uci_bow().",
                    docword, fmt_int(state[1L])), "format", call = call)
    }
    n <- res$n
    if (n > 0) {
      pend_doc <- c(pend_doc, doc[seq_len(n)])
      pend_term <- c(pend_term, term[seq_len(n)])
      pend_count <- c(pend_count, count[seq_len(n)])
    }
    consumed <- res$consumed
    leftover <- if (consumed < length(bytes)) bytes[(consumed + 1):length(bytes)] else raw(0)
    rm(bytes, doc, term, count)
    if (state[5L] == 3) flush(if (n > 0) pend_doc[length(pend_doc)] else 0L, state[2L])
    if (final) break
  }
  if (state[5L] < 3) {
    abort(sprintf("`docword` is not a UCI bag-of-words file: \"%s\" ends before its three header lines.",
                  docword), "format", call = call)
  }
  flush(.Machine$integer.max, state[2L])
  rm(pend_doc, pend_term, pend_count, leftover)
  # hand the parsing buffers back now rather than at R's next collection
  gc(verbose = FALSE)
  list(files = files, n_docs = n_docs, n_tokens = n_tokens, n_entries = n_entries,
       V = state[3L])
}

#' @export
print.sparsevi_source <- function(x, ...) {
  cat(sprintf("<sparsevi_source> %s documents x %s terms on disk in %d batches (%s tokens)\n",
              fmt_int(x$D), fmt_int(length(x$vocab)), length(x$files),
              fmt_int(sum(x$n_tokens))))
  if (!is.null(x$ids)) cat("  documents shuffled into the batches (doc_topic keeps the file's order)\n")
  cat(sprintf("  directory: %s\n", x$dir))
  invisible(x)
}

# A corpus on disk read into memory whole, its documents in the file's
# order: for the functions that need every document at once (predict(),
# heldout_loglik(), split_heldout()); coherence() and summary() count a
# source batch by batch instead (coherence_source(), R/eval.R).
#' @export
as_dtm.sparsevi_source <- function(x, ...) {
  source_docs(x)
}

#' @export
dim.sparsevi_source <- function(x) {
  c(as.integer(x$D), length(x$vocab))
}

# Batch b of a source as a sparsevi_dtm.
# The garbage of the previous batches' steps (their summaries, the batches)
# is collected first once they have read source_collect_tokens tokens since
# the last collection, so a pass from disk peaks near what it holds rather
# than at R's next collection threshold. A minor collection: that garbage is
# young, and a full one per batch took 60% of a fit in batches of 100
# (10,000 Wikipedia paragraphs, K = 1000: 27.5 s with full collections,
# 11.2 s with minor ones, the same peak; batches of 2,500: 8.3 -> 4.9 s,
# peak 2.45 -> 2.49 GB). A minor one still costs about 10 ms, so small
# batches share one (batches of 100 paragraphs, about 4,800 tokens each:
# a collection every 21 batches instead of every batch). The same fits at
# K = 1000: batches of 100, SCVB0 8.5 -> 3.8 s, vb 26.6 -> 25.8 s, peak
# 2.36 -> 2.42 GB; batches of 1,000, 4.7 -> 4.5 s and 21.9 -> 20.9 s, peak
# 2.44 -> 2.50 GB. SCVB0's ten laps at K = 100 over 9,000 paragraphs in
# batches of 100: 16.7 -> 3.4 s, in memory 2.9 s.
source_batch <- function(src, b) {
  read <- source_gc$tokens + src$n_tokens[b]
  if (read >= source_collect_tokens) {
    gc(verbose = FALSE, full = FALSE)
    read <- src$n_tokens[b]
  }
  source_gc$tokens <- read
  source_read(src, b)
}

# Tokens of the batches read since the last collection (source_batch()).
source_gc <- new.env(parent = emptyenv())
source_gc$tokens <- Inf
source_collect_tokens <- 1e5

# Batch b of a source as it is on disk (source_docs() reads many in a row,
# keeping little of each: no collection between them).
source_read <- function(src, b) {
  x <- readRDS(src$files[b])
  x$vocab <- src$vocab
  x
}

# Documents idx (increasing numbers in the file; NULL: every one) of a
# source, as one sparsevi_dtm in the file's order. Only the batches that
# hold them are read, and each keeps only its own.
source_docs <- function(src, idx = NULL) {
  if (is.null(idx)) idx <- seq_len(src$D)
  at <- idx # (where each is, batch after batch)
  if (!is.null(src$ids)) {
    where <- integer(src$D)
    where[src$ids] <- seq_len(src$D)
    at <- sort(where[idx])
  }
  ends <- cumsum(as.double(src$n_docs))
  b_of <- findInterval(at - 1, ends) + 1L
  parts <- lapply(unique(b_of), function(b) {
    xb <- source_read(src, b)
    mine <- at[b_of == b] - (ends[b] - src$n_docs[b])
    if (length(mine) == nrow(xb)) xb else dtm_subset(xb, as.integer(mine))
  })
  x <- dtm_bind(parts)
  if (is.null(src$ids)) x else dtm_subset(x, order(src$ids[at]))
}
