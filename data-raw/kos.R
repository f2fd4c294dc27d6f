# Builds data/kos.rda: the UCI "KOS blog entries" bag-of-words corpus
# (D. Newman; UCI Machine Learning Repository, CC BY 4.0) as a sparsevi_dtm.
# Run from the package root with sparsevi installed:
#   Rscript data-raw/kos.R
# The source files are the ones in ../shared/data/kos (identical to UCI's
# docword.kos.txt.gz and vocab.kos.txt); override with SPARSEVI_DATA.
data_dir <- Sys.getenv("SPARSEVI_DATA", file.path("..", "shared", "data"))
kos <- sparsevi::read_uci_bow(
  file.path(data_dir, "kos", "docword.kos.txt.gz"),
  file.path(data_dir, "kos", "vocab.kos.txt")
)
stopifnot(nrow(kos) == 3430L, ncol(kos) == 6906L, sum(kos$count) == 467714)
save(kos, file = file.path("data", "kos.rda"), compress = "xz", version = 2)
