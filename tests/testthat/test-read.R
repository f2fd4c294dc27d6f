# The shared benchmark data (absent when the tests run from a tarball).
shared_data <- function(...) {
  roots <- c(Sys.getenv("SPARSEVI_DATA"), file.path("..", "..", "..", "shared", "data"),
             "/work/shared/data")
  for (r in roots[nzchar(roots)]) {
    p <- file.path(r, ...)
    if (file.exists(p)) return(p)
  }
  NULL
}

write_uci <- function(lines, vocab = NULL, gz = FALSE) {
  dir <- tempfile("uci")
  dir.create(dir)
  f <- file.path(dir, if (gz) "docword.toy.txt.gz" else "docword.toy.txt")
  con <- if (gz) gzfile(f, "w") else file(f, "w")
  writeLines(lines, con)
  close(con)
  v <- NULL
  if (!is.null(vocab)) {
    v <- file.path(dir, "vocab.toy.txt")
    writeLines(vocab, v)
  }
  list(docword = f, vocab = v)
}

toy_lines <- c("4", "3", "5", "1 1 2", "1 3 1", "3 2 4", "3 3 1", "4 1 7")
toy_vocab <- c("apple", "banana", "cherry")

test_that("read_uci_bow reads plain and gzipped files into the same dtm", {
  p <- write_uci(toy_lines, toy_vocab)
  g <- write_uci(toy_lines, toy_vocab, gz = TRUE)
  x <- read_uci_bow(p$docword, p$vocab)
  expect_identical(read_uci_bow(g$docword, g$vocab), x)
  expect_identical(x$doc_ptr, c(0L, 2L, 2L, 4L, 5L))
  expect_identical(x$term, c(0L, 2L, 1L, 2L, 0L))
  expect_identical(x$count, c(2, 1, 4, 1, 7))
  expect_identical(x$vocab, toy_vocab)
  expect_null(x$doc_names)
  expect_output(print(x), "empty documents: 1")
  # without a vocabulary file, terms are numbered
  expect_identical(read_uci_bow(p$docword)$vocab, c("term1", "term2", "term3"))
  y <- read_uci_bow(p$docword, p$vocab, doc_names = c("a", "b", "c", "d"))
  expect_identical(y$doc_names, c("a", "b", "c", "d"))
})

test_that("chunk boundaries anywhere give the same result", {
  set.seed(1)
  D <- 40
  ent <- do.call(rbind, lapply(seq_len(D), function(d) {
    w <- sort(sample.int(300, sample.int(20, 1)))
    cbind(d, w, sample.int(9, length(w), replace = TRUE))
  }))
  lines <- c(D, 300, nrow(ent), paste(ent[, 1], ent[, 2], ent[, 3]))
  p <- write_uci(lines)
  x <- read_uci_bow(p$docword, chunk_size = 2^20)
  for (cs in c(1024, 1031, 1500)) {
    expect_identical(read_uci_bow(p$docword, chunk_size = cs), x)
  }
  ref <- Matrix::sparseMatrix(i = ent[, 1], j = ent[, 2], x = as.double(ent[, 3]),
                              dims = c(D, 300))
  got <- as_dgCMatrix(x)
  dimnames(got) <- list(NULL, NULL)
  expect_identical(got, ref)
})

test_that("unsorted entries, blank lines, CRLF and zero counts are handled", {
  p <- write_uci(c("4", "3", "5", "3 3 1", "1 3 1", "", "4 1 7\r", "3 2 4", "1 1 2"), toy_vocab)
  q <- write_uci(toy_lines, toy_vocab)
  expect_identical(read_uci_bow(p$docword, p$vocab), read_uci_bow(q$docword, q$vocab))
  z <- write_uci(c("2", "3", "3", "1 1 2", "1 2 0", "2 3 1"))
  expect_identical(read_uci_bow(z$docword)$count, c(2, 1))
  # no trailing newline
  dir <- tempfile()
  dir.create(dir)
  f <- file.path(dir, "docword.txt")
  writeBin(charToRaw("1\n2\n2\n1 1 3\n1 2 1"), f)
  expect_identical(read_uci_bow(f)$count, c(3, 1))
})

test_that("read_uci_bow reproduces the bundled kos exactly", {
  dw <- shared_data("kos", "docword.kos.txt.gz")
  skip_if(is.null(dw), "the shared data folder is not available")
  x <- read_uci_bow(dw, shared_data("kos", "vocab.kos.txt"))
  expect_identical(x, kos)
})

test_that("files that are not UCI format get classed errors with line numbers", {
  bad <- function(lines, ...) read_uci_bow(write_uci(lines)$docword, ...)
  expect_error(bad(c("4", "3")), class = "sparsevi_error_format")
  expect_error(bad(c("4", "x", "1")), "line 2")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 2")), class = "sparsevi_error_format")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 2")), "line 5")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 2 1 9")), "line 5")
  expect_error(bad(c("4", "3", "2", "1 1 1", "5 2 1")), "document id outside 1..4")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 4 1")), "word id outside 1..3")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 0 1")), "line 5")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 2 -1")), class = "sparsevi_error_count")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 2 NaN")), class = "sparsevi_error_count")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 2 Inf")), class = "sparsevi_error_count")
  expect_error(bad(c("4", "3", "2", "1 1 1", "2 2 NA")), class = "sparsevi_error_format")
  expect_error(bad(c("4", "3", "1", "1 1 1", "2 2 1")), "one entry more")
  expect_error(bad(c("4", "3", "3", "1 1 1", "2 2 1")), class = "sparsevi_error_format")
  expect_error(bad(c("4", "3", "3", "1 1 1", "2 2 1")), "truncated")
  expect_error(bad(c("4", "3", "2", "1 1 1", "1 1 1")), "line 5")
  expect_error(bad(c("4", "3", "3", "2 1 1", "1 1 1", "2 1 1")), "more than once")
  expect_error(bad(c("4", "3", "1", "1 1 0")), class = "sparsevi_error_empty")
  expect_snapshot(bad(c("2", "3", "2", "1 1 1", "this is not a count line")),
                  error = TRUE, transform = function(x) gsub("\"[^\"]*docword[^\"]*\"", "<file>", x))
  expect_warning(x <- bad(c("2", "2", "2", "1 1 0.5", "2 2 1")),
                 class = "sparsevi_warning_noninteger")
  expect_identical(x$count, c(0.5, 1))
})

test_that("bad arguments and vocabularies get classed errors", {
  p <- write_uci(toy_lines, toy_vocab)
  expect_error(read_uci_bow(file.path(tempdir(), "no-such-file")), class = "sparsevi_error_file")
  expect_error(read_uci_bow(c("a", "b")), class = "sparsevi_error_argument")
  expect_error(read_uci_bow(p$docword, file.path(tempdir(), "nope")), class = "sparsevi_error_file")
  short <- tempfile()
  writeLines(c("apple", "banana"), short)
  expect_error(read_uci_bow(p$docword, short), class = "sparsevi_error_vocab")
  expect_error(read_uci_bow(p$docword, short), "has 2 terms")
  dup <- tempfile()
  writeLines(c("apple", "banana", "apple"), dup)
  expect_error(read_uci_bow(p$docword, dup), class = "sparsevi_error_vocab")
  expect_error(read_uci_bow(p$docword, chunk_size = 10), class = "sparsevi_error_argument")
  expect_error(read_uci_bow(p$docword, doc_names = "a"), class = "sparsevi_error_argument")
})

test_that("write_uci_bow writes what read_uci_bow and uci_source read back", {
  sim <- simulate_lda(D = 50, V = 30, K = 3, doc_length = 20, seed = 4)$dtm
  x <- sparsevi:::dtm_subset(sim, c(1:10, 10:50)) # (a repeated document)
  x$count[3] <- 2.5 # a count that is not whole
  x$count[4] <- 1e6
  same <- c("doc_ptr", "term", "count", "vocab")
  for (ext in c(".txt", ".txt.gz")) {
    dw <- tempfile(fileext = ext)
    vf <- tempfile(fileext = ".txt")
    out <- write_uci_bow(x, dw, vf)
    expect_identical(unname(out), c(dw, vf))
    back <- suppressWarnings(read_uci_bow(dw, vf), classes = "sparsevi_warning_noninteger")
    expect_identical(unclass(back)[same], unclass(x)[same])
  }
  # blocks of documents smaller than the corpus, empty documents, no vocabulary
  e <- as_dtm(Matrix::sparseMatrix(i = c(2, 2, 5), j = c(1, 3, 2), x = c(1, 4, 2), dims = c(6, 3),
                                   dimnames = list(NULL, c("a", "b", "c"))))
  dw <- tempfile(fileext = ".txt")
  ns <- asNamespace("sparsevi")
  old <- ns$uci_write_entries
  utils::assignInNamespace("uci_write_entries", 1, ns = "sparsevi")
  write_uci_bow(e, dw)
  utils::assignInNamespace("uci_write_entries", old, ns = "sparsevi")
  expect_identical(readLines(dw), c("6", "3", "3", "2 1 1", "2 3 4", "5 2 2"))
  back <- read_uci_bow(dw)
  expect_identical(unclass(back)[c("doc_ptr", "term", "count")], unclass(e)[c("doc_ptr", "term", "count")])
  # a source from it holds the same documents
  src <- uci_source(dw, batch_size = 2, shuffle = FALSE)
  expect_identical(unclass(as_dtm(src))[c("doc_ptr", "term", "count")],
                   unclass(e)[c("doc_ptr", "term", "count")])
  # bad arguments
  expect_error(write_uci_bow(e, file.path(tempfile(), "no", "dw.txt")), "docword",
               class = "sparsevi_error_file")
  expect_error(write_uci_bow(e, tempdir()), class = "sparsevi_error_file")
  expect_error(write_uci_bow(e, 3), class = "sparsevi_error_argument")
  expect_error(write_uci_bow(e, tempfile(), vocab = NA), class = "sparsevi_error_argument")
  expect_error(write_uci_bow(list(1, "a"), tempfile()), class = "sparsevi_error")
  bad <- e
  bad$vocab[2] <- "two\nlines"
  expect_error(write_uci_bow(bad, tempfile(), tempfile()), "line break", class = "sparsevi_error_vocab")
})
