# Data side of the classic suite (bench/compare): writes R's classic data
# sets (package datasets) as files of values, one per line, in time order.
#
# Usage: Rscript datasets.R DIR NAME...
#   DIR/NAME.txt  written for each NAME, an object of package datasets
#                 (a ts; its values as.numeric, 17 significant digits)
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript datasets.R DIR NAME...")
for (name in args[-1]) {
  y <- as.numeric(get(name, envir = asNamespace("datasets")))
  if (any(!is.finite(y))) stop(sprintf("%s has values that are not finite", name))
  writeLines(format(y, digits = 17, trim = TRUE), file.path(args[1], paste0(name, ".txt")))
}
