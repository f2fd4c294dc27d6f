# One small corpus in every format: each must give the same sparsevi_dtm.
toy_tokens <- function() {
  list(d1 = c("apple", "banana", "apple"), d2 = character(0),
       d3 = c("cherry", "banana", "date"), d4 = c("apple", "date", "date", "date"))
}

toy_dtm <- function() as_dtm(toy_tokens())

test_that("a token list becomes CSR with a sorted vocabulary", {
  x <- toy_dtm()
  expect_s3_class(x, "sparsevi_dtm")
  expect_identical(x$doc_ptr, c(0L, 2L, 2L, 5L, 7L))
  expect_identical(x$term, c(0L, 1L, 1L, 2L, 3L, 0L, 3L))
  expect_identical(x$count, c(2, 1, 1, 1, 1, 1, 3))
  expect_identical(x$vocab, c("apple", "banana", "cherry", "date"))
  expect_identical(x$doc_names, c("d1", "d2", "d3", "d4"))
  expect_identical(dim(x), c(4L, 4L))
  expect_identical(dimnames(x), list(x$doc_names, x$vocab))
})

test_that("every format converts to the same dtm and back to the same dgCMatrix", {
  a <- toy_dtm()
  m <- as_dgCMatrix(a)
  expect_s4_class(m, "dgCMatrix")
  expect_identical(dimnames(m), list(a$doc_names, a$vocab))
  same <- function(x) {
    expect_identical(x, a)
    expect_identical(as_dgCMatrix(x), m)
  }
  same(as_dtm(m))
  same(as_dtm(as.matrix(m)))
  same(as_dtm(methods::as(m, "RsparseMatrix")))
  same(as_dtm(methods::as(m, "TsparseMatrix")))
  same(as_dtm(Matrix::t(m), docs_in = "columns"))
  same(as_dtm(a))
  toks <- toy_tokens()
  df <- data.frame(document = factor(rep(names(toks), lengths(toks)), levels = names(toks)),
                   word = unlist(toks, use.names = FALSE))
  same(as_dtm(df))
  # a counted (tidytext count()-like) frame with custom column names
  counted <- stats::aggregate(list(n = rep(1, nrow(df))), df[c("document", "word")], sum)
  names(counted) <- c("doc_key", "w", "how_many")
  counted <- counted[rev(seq_len(nrow(counted))), ] # row order must not matter
  same(as_dtm(counted, document = "doc_key", term = 2, count = "how_many"))
  txt <- c(d1 = "Apple, banana; APPLE!", d2 = "  42 ", d3 = "cherry-banana date",
           d4 = "apple. Date, date; DATE")
  same(as_dtm(txt))
})

test_that("slam and tm objects convert to the same dtm", {
  skip_if_not_installed("slam")
  a <- toy_dtm()
  m <- as_dgCMatrix(a)
  st <- slam::as.simple_triplet_matrix(as.matrix(m))
  expect_identical(as_dtm(st), a)
  expect_identical(as_dtm(t(st), docs_in = "columns"), a)
  skip_if_not_installed("tm")
  dtm <- tm::as.DocumentTermMatrix(st, weighting = tm::weightTf)
  expect_identical(as_dtm(dtm), a)
  tdm <- tm::as.TermDocumentMatrix(t(st), weighting = tm::weightTf)
  expect_identical(as_dtm(tdm), a)
  expect_identical(as_dgCMatrix(as_dtm(tdm)), m)
  tfidf <- tm::weightTfIdf(dtm[c(1, 3, 4), ])
  expect_warning(
    expect_warning(as_dtm(tfidf), class = "sparsevi_warning_weighting"),
    class = "sparsevi_warning_noninteger"
  )
})

test_that("quanteda dfm converts to the same dtm", {
  skip_if_not_installed("quanteda")
  a <- toy_dtm()
  d <- quanteda::as.dfm(as_dgCMatrix(a))
  expect_identical(as_dtm(d), a)
})

test_that("the text tokenizer lowercases, splits on non-letters, drops stop words", {
  x <- as_dtm(c("The cat sat on the mat.", "A dog and a cat; it's 2024!"), stopwords = TRUE)
  expect_identical(x$vocab, c("cat", "dog", "mat", "sat"))
  expect_identical(nrow(x), 2L)
  y <- as_dtm(c("The cat", "the dog"), stopwords = c("THE"))
  expect_identical(y$vocab, c("cat", "dog"))
  z <- as_dtm(c("Ça va très bien", "très"))
  expect_true(all(c("ça", "très") %in% z$vocab))
  expect_true("the" %in% sparsevi_stopwords())
  w <- as_dtm(c("a bb ccc", "bb ccc", "ccc"), min_chars = 2, min_doc_freq = 2)
  expect_identical(w$vocab, c("bb", "ccc"))
  expect_identical(w$count, c(1, 1, 1, 1, 1))
  expect_identical(diff(w$doc_ptr), c(2L, 2L, 1L))
})

test_that("min_doc_freq and a fixed vocab restrict the terms", {
  x <- as_dtm(toy_tokens(), min_doc_freq = 2)
  expect_identical(x$vocab, c("apple", "banana", "date"))
  expect_identical(sum(x$count), 9)
  expect_message(y <- as_dtm(toy_tokens(), vocab = c("date", "apple")), "Dropped 2 term")
  expect_identical(y$vocab, c("date", "apple"))
  expect_identical(as.matrix(y)["d4", ], c(date = 3, apple = 1))
})

test_that("repeated (document, term) rows of a data frame are summed", {
  df <- data.frame(doc = c("x", "x", "y"), term = c("a", "a", "b"), count = c(1, 2, 5))
  x <- as_dtm(df)
  expect_identical(x$count, c(3, 5))
  expect_identical(x$doc_names, c("x", "y"))
})

test_that("print reports documents, terms, tokens, density and empty documents", {
  expect_snapshot(print(toy_dtm()))
  expect_snapshot(print(kos))
  capture.output(v <- withVisible(print(toy_dtm())))
  expect_false(v$visible)
})

test_that("[ subsets documents by index, logical and name", {
  x <- toy_dtm()
  expect_identical(x[c(4, 1), ]$doc_names, c("d4", "d1"))
  expect_identical(as.matrix(x[c("d3", "d1"), ]), as.matrix(x)[c(3, 1), ])
  expect_identical(x[-2, ], x[c(1, 3, 4), ])
  expect_identical(x[c(TRUE, FALSE, TRUE, FALSE), ], x[c(1, 3), ])
  expect_identical(x[], x)
  expect_identical(x[2, ]$count, numeric(0))
  expect_error(x[, 1], class = "sparsevi_error_argument")
  expect_error(x[9, ], class = "sparsevi_error_argument")
  expect_error(x["nope", ], class = "sparsevi_error_argument")
})

test_that("the C subset of documents matches the plain-R one", {
  # the R form it replaced: positions by sequence(), then three subsets
  ref_subset <- function(x, idx) {
    starts <- x$doc_ptr[idx]
    lens <- x$doc_ptr[idx + 1L] - starts
    pos <- sequence(lens, from = starts + 1L)
    list(doc_ptr = c(0L, as.integer(cumsum(lens))), term = x$term[pos],
         count = x$count[pos])
  }
  x <- simulate_lda(D = 50, V = 30, K = 3, doc_length = 12, seed = 2)$dtm
  x$doc_ptr <- c(x$doc_ptr, x$doc_ptr[51L]) # an empty document (51)
  x$doc_names <- NULL
  rng <- uniform_source(4)
  for (idx in list(1:51, 51:1, c(3L, 3L, 51L, 7L), integer(0), 51L,
                   as.integer(1 + floor(rng(200) * 51)))) {
    s <- sparsevi:::dtm_subset(x, idx)
    r <- ref_subset(x, idx)
    expect_identical(s$doc_ptr, r$doc_ptr)
    expect_identical(s$term, r$term)
    expect_identical(s$count, r$count)
  }
  # (doubles are whole numbers here, as R's callers give them)
  expect_identical(sparsevi:::dtm_subset(x, c(2, 5)), sparsevi:::dtm_subset(x, c(2L, 5L)))
  expect_error(.Call(sparsevi:::ffi_dtm_subset, x$doc_ptr, x$term, x$count, 52L),
               "out of range")
  expect_error(.Call(sparsevi:::ffi_dtm_subset, x$doc_ptr, x$term, x$count, NA_integer_),
               "out of range")
})

test_that("saveRDS/readRDS round-trips a dtm", {
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f))
  saveRDS(kos, f)
  expect_identical(readRDS(f), kos)
})

test_that("the bundled kos corpus has the documented shape", {
  expect_s3_class(kos, "sparsevi_dtm")
  expect_identical(dim(kos), c(3430L, 6906L))
  expect_identical(sum(kos$count), 467714)
  expect_identical(length(kos$term), 353160L)
  expect_identical(kos, sparsevi:::validate_sparsevi_dtm(kos))
})

test_that("bad counts, vocabularies and inputs get classed errors", {
  m <- matrix(c(1, 2, 0, 3), 2, dimnames = list(NULL, c("a", "b")))
  for (bad in c(NA, NaN, Inf, -1)) {
    mm <- m
    mm[1, 2] <- bad
    expect_error(as_dtm(mm), class = "sparsevi_error_count")
    expect_error(as_dtm(Matrix::Matrix(mm, sparse = TRUE)), class = "sparsevi_error_count")
    expect_error(as_dtm(data.frame(d = 1, t = "a", n = bad)), class = "sparsevi_error_count")
  }
  expect_error(as_dtm(m[, 0, drop = FALSE]), class = "sparsevi_error_empty")
  expect_error(as_dtm(list(character(0), NULL)), class = "sparsevi_error_empty")
  expect_error(as_dtm(c("", "123 !!")), class = "sparsevi_error_empty")
  expect_error(as_dtm(matrix(0, 2, 2, dimnames = list(NULL, c("a", "b")))),
               class = "sparsevi_error_empty")
  dup <- m
  colnames(dup) <- c("a", "a")
  expect_error(as_dtm(dup), class = "sparsevi_error_vocab")
  expect_error(as_dtm(dup), "duplicated terms")
  expect_error(sparsevi:::dtm_from_parts(c(0L, 2L), c(0L, 2L), c(1, 1), c("a", "b"), NULL),
               class = "sparsevi_error_vocab")
  expect_error(as_dtm(list(c("a", "b"), 1:3)), class = "sparsevi_error_input")
  expect_error(as_dtm(list(c("a", "b"), 1:3)), "element 2")
  expect_error(as_dtm(list("a", list("b"))), class = "sparsevi_error_input")
  expect_error(as_dtm(42), class = "sparsevi_error_input")
  expect_error(as_dtm(data.frame(d = 1, t = "a"), term = "nope"),
               class = "sparsevi_error_argument")
  expect_error(as_dtm(data.frame(d = 1, t = 3)), class = "sparsevi_error_input")
  expect_error(as_dtm(c("a b"), stopwords = 3), class = "sparsevi_error_argument")
  expect_error(as_dtm(c("a b"), min_doc_freq = 0), class = "sparsevi_error_argument")
  expect_error(as_dtm(c("a b", "c"), min_doc_freq = 5), class = "sparsevi_error_empty")
  expect_snapshot(as_dtm(list(c("a", "b"), 1:3)), error = TRUE)
  expect_snapshot(as_dtm(dup), error = TRUE)
})

test_that("non-integer counts warn but are kept; empty documents are kept", {
  m <- matrix(c(0.5, 0, 0, 0, 2, 0), 3, dimnames = list(NULL, c("a", "b")))
  expect_warning(x <- as_dtm(m), class = "sparsevi_warning_noninteger")
  expect_identical(x$count, c(0.5, 2))
  expect_identical(diff(x$doc_ptr), c(1L, 1L, 0L))
  expect_output(print(x), "empty documents: 1")
})

test_that("dtm_align maps terms by name and counts what it drops", {
  x <- toy_dtm()
  al <- sparsevi:::dtm_align(x, c("date", "zebra", "apple"))
  expect_identical(al$dropped, 2L)
  expect_identical(al$dropped_tokens, 3)
  expect_identical(as.matrix(al$x)[, c("date", "apple")],
                   as.matrix(x)[, c("date", "apple")])
  expect_identical(sparsevi:::doc_lengths(x), c(3, 0, 3, 4))
  # the C sums against their rowsum() form: fractional counts, empty documents
  set.seed(4)
  m <- Matrix::rsparsematrix(30, 25, 0.2, rand.x = function(n) runif(n) * 10^runif(n, -8, 8))
  m[c(3, 17), ] <- 0
  w <- as_dtm(m)
  expect_identical(sparsevi:::doc_lengths(w), sparsevi:::doc_lengths_r(w))
  # its C refuses a malformed structure (pointers out of order or of another type)
  dot <- function(...) .Call(sparsevi:::ffi_dtm_doc_dot, ...)
  expect_error(dot(c(0L, 5L, 2L), c(0L, 1L), c(1, 1), c(1, 2)), "inconsistent")
  expect_error(dot(1:3, 0L, 1, 1), "inconsistent")
  expect_error(dot(c(0, 1), 0L, 1, 1), "integer")
  expect_error(dot(c(0L, 1L), 0L, 1L, 1), "double")
})

test_that("a wide data frame of counts is read as a matrix", {
  m <- matrix(c(1, 0, 2, 0, 3, 1, 0, 0, 4), 3, dimnames = list(NULL, c("apple", "pear", "plum")))
  wide <- as.data.frame(m)
  x <- as_dtm(wide)
  expect_identical(x$vocab, c("apple", "pear", "plum"))
  expect_equal(as.matrix(as_dgCMatrix(x)), m, ignore_attr = TRUE)
  # with a column of document names first
  named <- cbind(doc = c("d1", "d2", "d3"), wide)
  y <- as_dtm(named)
  expect_identical(y$doc_names, c("d1", "d2", "d3"))
  expect_identical(y$vocab, x$vocab)
  expect_identical(y$count, x$count)
  fit <- fit_lda(named, K = 2, passes = 1, seed = 1, progress = FALSE)
  expect_identical(fit$vocab, c("apple", "pear", "plum"))
  # long frames keep their meaning, numeric document ids included
  long <- data.frame(doc = c(1, 1, 2), term = c("a", "b", "a"), count = c(1, 2, 3))
  z <- as_dtm(long)
  expect_identical(z$vocab, c("a", "b"))
  expect_identical(z$count, c(1, 2, 3))
  # numbers in a long frame's term column: the error says what to do
  expect_error(as_dtm(data.frame(doc = 1:3, term = c(1, 2, 3), n = 1)), "as.matrix",
               class = "sparsevi_error_input")
})

test_that("NA tokens, texts and terms get classed errors naming the fix", {
  expect_error(as_dtm(list(c("a", NA), "b")), "NA tokens", class = "sparsevi_error_input")
  expect_error(as_dtm(c("a b", NA)), "NA", class = "sparsevi_error_input")
  expect_error(as_dtm(data.frame(doc = 1:2, term = c("a", NA), count = 1)), "NA",
               class = "sparsevi_error_input")
  expect_error(as_dtm(data.frame(doc = 1:2, term = c("a", "b"), count = c(1, NA))),
               class = "sparsevi_error")
  expect_error(fit_lda(list(c("a", NA, "b"), c("b", "c")), K = 2),
               class = "sparsevi_error_input")
})

test_that("dtm_key() tells corpora apart by terms, counts and document boundaries", {
  x <- sparsevi:::new_sparsevi_dtm(c(0L, 2L, 3L), c(0L, 2L, 1L), c(1, 2, 3), c("a", "b", "c"))
  key <- sparsevi:::dtm_key(x)
  expect_match(key, "^[0-9a-f]{16}$")
  expect_identical(sparsevi:::dtm_key(x), key)
  changed <- list(
    count = within(unclass(x), count[2] <- 2 + 1e-15),
    term = within(unclass(x), term[3] <- 0L),
    boundary = within(unclass(x), doc_ptr[2] <- 1L),
    vocab = within(unclass(x), vocab <- c(vocab, "d")),
    zero = within(unclass(x), count[1] <- -0))
  x0 <- within(unclass(x), count[1] <- 0)
  for (y in changed) expect_false(identical(sparsevi:::dtm_key(y), key))
  expect_false(identical(sparsevi:::dtm_key(x0), sparsevi:::dtm_key(changed$zero)))
  # names do not enter it
  named <- x
  named$doc_names <- c("d1", "d2")
  expect_identical(sparsevi:::dtm_key(named), key)
})
