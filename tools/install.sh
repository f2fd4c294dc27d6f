#!/bin/sh
# README's install command: installs from CRAN what building needs and the
# machine lacks (knitr and markdown for the vignettes; tools/install-deps.R),
# builds the source tarball with its vignettes and installs it, so that
# vignette(package = "sparsevi") lists them. `R CMD INSTALL .` alone installs
# the package without vignettes.
set -eu
cd "$(dirname "$0")/.."
Rscript tools/install-deps.R
rm -f sparsevi_*.tar.gz
R CMD build .
R CMD INSTALL "$(ls sparsevi_*.tar.gz | head -n 1)"
