#' Read a corpus in UCI bag-of-words form
#'
#' Reads the `docword` file of the UCI Machine Learning Repository's "Bag of
#' Words" format: three header lines giving the number of documents D, the
#' vocabulary size W and the number of entries NNZ, then one line
#' `doc word count` per entry with 1-based ids. The file may be plain or
#' compressed (gzip, bzip2 or xz). It is read in chunks of raw bytes parsed
#' in C straight into preallocated vectors, so even a corpus of tens of
#' millions of entries never has its text in memory at once.
#'
#' @param docword Path of the `docword.NAME.txt` or `docword.NAME.txt.gz`
#'   file.
#' @param vocab Path of the `vocab.NAME.txt` file (one term a line, W
#'   lines), or `NULL` (the default) to name the terms `term1`, `term2`, ...
#' @param doc_names `NULL` (the default: documents are unnamed) or a
#'   character vector of D document names.
#' @param chunk_size Bytes read per chunk, default `2^23` (8 MiB); at least
#'   1024. Larger chunks are slightly faster and use more memory.
#' @returns A `sparsevi_dtm` (see [as_dtm()]) with D documents and W terms.
#'   Documents without entries are kept (empty). Entries with count 0 are
#'   dropped; non-integer counts are kept with a warning of class
#'   `sparsevi_warning_noninteger`.
#' @examples
#' dir <- tempfile()
#' dir.create(dir)
#' writeLines(c("2", "3", "3", "1 1 2", "1 3 1", "2 2 4"),
#'            file.path(dir, "docword.toy.txt"))
#' writeLines(c("apple", "banana", "cherry"), file.path(dir, "vocab.toy.txt"))
#' read_uci_bow(file.path(dir, "docword.toy.txt"), file.path(dir, "vocab.toy.txt"))
#' @export
read_uci_bow <- function(docword, vocab = NULL, doc_names = NULL,
                         chunk_size = 2^23) {
  call <- sys.call()
  check_file(docword, "docword", call = call)
  if (!is.null(vocab)) check_file(vocab, "vocab", call = call)
  chunk_size <- check_count(chunk_size, "chunk_size", min = 1024, max = 2^30,
                            call = call)

  con <- gzfile(docword, open = "rb")
  on.exit(close(con))
  state <- .Call(ffi_dtm_uci_state)
  leftover <- raw(0)
  # filled in place by the C parser (see ffi_dtm_parse_uci): allocated here,
  # never shared, so the writes are safe and leave no per-chunk copies
  doc <- integer(0)
  term <- integer(0)
  count <- double(0)
  filled <- 0
  allocated <- FALSE
  n_chunks <- 0
  repeat {
    bytes <- readBin(con, "raw", n = chunk_size)
    # a short read is not proof of the end on every connection: the end is
    # an empty read, after which the unfinished last line is parsed
    final <- length(bytes) == 0L
    if (length(leftover)) bytes <- c(leftover, bytes)
    repeat {
      res <- .Call(ffi_dtm_parse_uci, bytes, final, state, doc, term, count, filled)
      state <- res$state
      if (res$status != 0L) uci_error(res$status, state, docword, call)
      filled <- filled + res$n
      consumed <- res$consumed
      bytes <- if (consumed < length(bytes)) bytes[(consumed + 1):length(bytes)] else raw(0)
      if (!allocated && state[5L] == 3) {
        # the header is complete: preallocate every entry, then go on
        # parsing the rest of this chunk
        nnz <- state[4L]
        if (nnz > .Machine$integer.max) {
          abort(sprintf("`docword` declares %s entries (third line); sparsevi holds at most %s entries in memory. Split the corpus into parts.",
                        fmt_int(nnz), fmt_int(.Machine$integer.max)), "format", call = call)
        }
        doc <- integer(nnz)
        term <- integer(nnz)
        count <- double(nnz)
        allocated <- TRUE
        next
      }
      break
    }
    leftover <- bytes
    rm(bytes, res)
    # Each chunk leaves a few raw buffers of garbage; R's collector would let
    # them pile up to the size of the (large) live vectors before collecting.
    # A cheap young-generation collection every 32 MiB read keeps the peak
    # memory close to the size of the result.
    n_chunks <- n_chunks + 1
    if (n_chunks %% max(1, 2^25 %/% chunk_size) == 0) gc(verbose = FALSE, full = FALSE)
    if (final) break
    if (length(leftover) > 2^20) {
      abort(sprintf("`docword` is not a UCI bag-of-words file: line %s of \"%s\" is longer than 1 MiB. Check the file (three header lines D, W, NNZ, then `doc word count` lines).",
                    fmt_int(state[1L] + 1), docword), "format", call = call)
    }
  }
  close(con)
  on.exit()
  if (state[5L] < 3) {
    abort(sprintf("`docword` is not a UCI bag-of-words file: \"%s\" ends after line %s, before its three header lines (D, W, NNZ) are complete.",
                  docword, fmt_int(state[1L])), "format", call = call)
  }
  D <- state[2L]
  W <- state[3L]
  nnz <- state[4L]
  if (state[6L] != nnz) {
    abort(sprintf("`docword` \"%s\" is truncated: its header promises %s entries but it has %s (last line %s). Re-download or fix the file.",
                  docword, fmt_int(nnz), fmt_int(state[6L]), fmt_int(state[1L])),
          "format", call = call)
  }
  if (filled < nnz) {
    # entries with count 0 were skipped
    keep <- seq_len(filled)
    doc <- doc[keep]
    term <- term[keep]
    count <- count[keep]
  }
  if (state[9L] == 0) {
    o <- order(doc, term)
    doc <- doc[o]
    term <- term[o]
    count <- count[o]
    rm(o)
    dup <- which(doc[-1L] == doc[-length(doc)] & term[-1L] == term[-length(term)])
    if (length(dup)) {
      abort(sprintf("`docword` \"%s\" lists document %d, word %d more than once; merge those lines (sum their counts).",
                    docword, doc[dup[1L]], term[dup[1L]] + 1L), "format", call = call)
    }
  }
  doc_ptr <- c(0L, cumsum(tabulate(doc, nbins = D)))
  rm(doc)

  if (is.null(vocab)) {
    terms <- sprintf("term%d", seq_len(W))
  } else {
    terms <- readLines(vocab, warn = FALSE, encoding = "UTF-8")
    # tolerate a final empty line and Windows line ends
    terms <- sub("\r$", "", terms)
    if (length(terms) == W + 1 && !nzchar(terms[length(terms)])) terms <- terms[-length(terms)]
    if (length(terms) != W) {
      abort(sprintf("`vocab` has %s terms but `docword` declares a vocabulary of %s (its second line); pass the vocabulary file that belongs to this corpus.",
                    fmt_int(length(terms)), fmt_int(W)), "vocab", call = call)
    }
  }
  if (!is.null(doc_names)) {
    if (!is.character(doc_names) || length(doc_names) != D) {
      abort(sprintf("`doc_names` must be NULL or a character vector of %s document names (the first line of `docword`), not %s.",
                    fmt_int(D), describe(doc_names)), "argument", call = call)
    }
  }
  x <- new_sparsevi_dtm(doc_ptr, term, count, terms, doc_names)
  x <- validate_sparsevi_dtm(x, call = call)
  if (state[10L] == 1) {
    warn("Some counts in `docword` are not whole numbers; they are used as fractional counts.",
         "noninteger", call = call)
  }
  if (length(x$term) == 0L) {
    abort("The corpus has no non-empty documents: every count in `docword` is zero.",
          "empty", call = call)
  }
  x
}

#' Write a corpus in UCI bag-of-words form
#'
#' Writes `x` as the `docword` file of the UCI "Bag of Words" format (three
#' header lines: documents D, vocabulary size W and entries NNZ; then one
#' line `doc word count` per entry, 1-based ids, documents in order) and,
#' when `vocab` is given, its vocabulary file (one term a line): the files
#' [read_uci_bow()], [uci_source()] and [dir_source()] read. A corpus built
#' in memory (with tm, quanteda, tidytext or [as_dtm()]) can so be put on
#' disk once, for fits that read it batch by batch. The entries are written
#' a block of documents at a time (about a million entries each), so their
#' text is never in memory at once.
#'
#' @param x A corpus: anything [as_dtm()] accepts.
#' @param docword Path of the file to write; a name ending in `.gz` is
#'   written gzip-compressed. An existing file is replaced.
#' @param vocab Path of the vocabulary file to write, or `NULL` (the
#'   default) for none: [read_uci_bow()] then names the terms `term1`,
#'   `term2`, ...
#' @returns The paths written (`docword`, and `vocab` when given),
#'   invisibly.
#' @examples
#' sim <- simulate_lda(D = 30, V = 40, K = 2, seed = 1)
#' dw <- tempfile(fileext = ".txt.gz")
#' vf <- tempfile(fileext = ".txt")
#' write_uci_bow(sim$dtm, dw, vf)
#' src <- uci_source(dw, vf, batch_size = 10)
#' src
#' @export
write_uci_bow <- function(x, docword, vocab = NULL) {
  call <- sys.call()
  x <- as_dtm_arg(x, "x", call)
  check_out_path(docword, "docword", call)
  if (!is.null(vocab)) {
    check_out_path(vocab, "vocab", call)
    bad <- grepl("[\r\n]", x$vocab) | !nzchar(x$vocab)
    if (any(bad)) {
      abort(sprintf("`x` has a term that cannot be a line of a vocabulary file (empty, or holding a line break): term %d, \"%s\". Rename the terms, or give `vocab = NULL`.",
                    which(bad)[1L], x$vocab[which(bad)[1L]]), "vocab", call = call)
    }
  }
  con <- if (grepl("\\.gz$", docword)) gzfile(docword, "wb") else file(docword, "wb")
  on.exit(close(con))
  D <- nrow(x)
  lens <- diff(x$doc_ptr)
  writeLines(sprintf("%.0f", c(D, ncol(x), length(x$term))), con)
  # blocks of whole documents of about uci_write_entries entries
  block <- floor(c(0, cumsum(as.double(lens))) / uci_write_entries)[-1L]
  for (docs in split(seq_len(D), block)) {
    if (x$doc_ptr[docs[length(docs)] + 1L] == x$doc_ptr[docs[1L]]) next
    at <- (x$doc_ptr[docs[1L]] + 1L):x$doc_ptr[docs[length(docs)] + 1L]
    count <- x$count[at]
    whole <- count == round(count)
    text <- character(length(count))
    text[whole] <- sprintf("%.0f", count[whole])
    text[!whole] <- sprintf("%.17g", count[!whole])
    writeLines(paste(rep.int(docs, lens[docs]), x$term[at] + 1L, text), con)
  }
  if (!is.null(vocab)) writeLines(enc2utf8(x$vocab), vocab, useBytes = TRUE)
  invisible(c(docword = docword, vocab = vocab))
}
uci_write_entries <- 2^20

# A path to write: a string naming a file in an existing directory.
check_out_path <- function(path, arg, call) {
  check_string(path, arg, call = call)
  if (dir.exists(path) || !dir.exists(dirname(path))) {
    abort(sprintf("%s must be the path of a file to write in an existing directory; \"%s\" is not.",
                  arg_label(arg), path), "file", call = call)
  }
  invisible(path)
}

check_file <- function(path, arg, call = caller_call()) {
  check_string(path, arg, call = call)
  if (!file.exists(path) || dir.exists(path)) {
    abort(sprintf("%s must be the path of an existing file; \"%s\" does not exist.",
                  arg_label(arg), path), "file", call = call)
  }
  invisible(path)
}

uci_error <- function(status, state, docword, call) {
  line <- fmt_int(state[1L])
  what <- switch(as.character(status),
    "1" = "should hold a single positive whole number (the header is three lines: documents D, vocabulary size W, entries NNZ)",
    "2" = "is not of the form `doc word count` (two positive whole numbers and a count)",
    "3" = sprintf("has a document id outside 1..%s (the first header line)", fmt_int(state[2L])),
    "4" = sprintf("has a word id outside 1..%s (the second header line)", fmt_int(state[3L])),
    "5" = "has a count that is NA, NaN, Inf or negative",
    "6" = sprintf("is one entry more than the %s the header declares (third line)", fmt_int(state[4L])),
    "7" = "repeats the document and word of the line before; merge them (sum their counts)",
    "an internal parser error"
  )
  cls <- if (status == 5L) "count" else "format"
  abort(sprintf("`docword` is not a valid UCI bag-of-words file: line %s of \"%s\" %s.",
                line, docword, what), cls, call = call)
}
